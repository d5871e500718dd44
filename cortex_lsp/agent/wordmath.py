"""Arithmetic the user wrote, as a calculator expression: symbols ("17 * 23") and common words.

Handles "X divided by / times / plus / minus / modulo / to the power of Y", "square root of X",
"X factorial", "X% of Y", "the average of a, b and c", a temperature conversion, a distance over a
time ("180 km in 2 hours ... speed"), a running count ("I have 12, give away 5, buy 9 more"), a sum
of a list ("add up 12, 30 and 58", "the total of …"), groups of equal size ("3 boxes with 24 eggs
each", "4 tickets at 12.50 each"), shares ("split 90 between 4") and percentages ("what percent of
80 is 20", "20 is what percent of 80", "80 with 25% off", "a 15% tip on 60").
Classes read in English, German, French, Spanish, Italian, Portuguese and Dutch live next to this
module and are tried first: rates, prices each and containers (``rates``), distance/time/speed
(``motion``), simple and compound interest (``interest``), discounts, tax, tips, increases and percent
change (``money``), lists and operator words (``listmath``), fractions, shares, roots and powers
(``ratios``) and unit conversions (``units``, ``unit_names``); ``numtext`` reads numbers as written
("3,5", "1.200") and rounds float noise off a result.
``None`` when the words hold no arithmetic; the calculator then never runs. The expression is only
a proposal: the calculator parses it with its own bounded evaluator.
"""

from __future__ import annotations

import re

from cortex_lsp.agent.interest import interest
from cortex_lsp.agent.listmath import list_arithmetic, list_then_more
from cortex_lsp.agent.money import percent_change, percentage_of_amount
from cortex_lsp.agent.motion import motion
from cortex_lsp.agent.numtext import denoise
from cortex_lsp.agent.rates import has_rate, rates_and_prices
from cortex_lsp.agent.ratios import ratios
from cortex_lsp.agent.units import unit_conversion

_NUM = r"(-?\d+(?:[.,]\d+)*)"
_SYMBOLIC = re.compile(
    r"(?:(?<![\w.])|(?<=\())[-(]*\s*\d[\d.,]*(?:\s*\)*\s*(?:\*\*|[-+*/×÷^%x])\s*\(*\s*-?\d[\d.,]*\)*)+",
    re.IGNORECASE,
)
_BINARY_WORDS = (
    (re.compile(rf"{_NUM}\s+divided\s+by\s+{_NUM}", re.I), "({a}) / ({b})"),
    # "10 over 4", not "a loan of 10000 over 5 years"
    (re.compile(rf"{_NUM}\s+over\s+{_NUM}(?!\s*[^\W\d_])", re.I), "({a}) / ({b})"),
    (re.compile(rf"{_NUM}\s+(?:times|multiplied\s+by)\s+{_NUM}", re.I), "({a}) * ({b})"),
    (re.compile(rf"{_NUM}\s+plus\s+{_NUM}", re.I), "({a}) + ({b})"),
    (re.compile(rf"{_NUM}\s+minus\s+{_NUM}", re.I), "({a}) - ({b})"),
    (re.compile(rf"{_NUM}\s+(?:modulo|mod)\s+{_NUM}", re.I), "({a}) % ({b})"),
    (re.compile(rf"(?:remainder\s+(?:of|when)\s+){_NUM}\s+(?:is\s+)?divided\s+by\s+{_NUM}", re.I), "({a}) % ({b})"),
    (re.compile(rf"{_NUM}\s+(?:to\s+the\s+power\s+(?:of\s+)?|raised\s+to\s+(?:the\s+power\s+of\s+)?){_NUM}", re.I),
     "({a}) ** ({b})"),
    (re.compile(rf"{_NUM}\s*(?:%|percent|prozent|pour\s*cent|por\s+ciento|per\s+cento|procent)\s+"
                rf"(?:of|von|de|du|des|del|di|van|z|av)\s+(?:[$€£]\s*)?{_NUM}", re.I), "({a}) / 100 * ({b})"),
)
_SQRT = re.compile(rf"square\s+root\s+of\s+{_NUM}", re.I)
_FACTORIAL = re.compile(rf"(?:{_NUM}\s+factorial|factorial\s+of\s+{_NUM}|{_NUM}\s*!)", re.I)
_SQUARED = re.compile(rf"{_NUM}\s+(squared|cubed)", re.I)
_DEG = r"\s*(?:°\s*|degrees?\s+)?"
_C_TO_F = re.compile(rf"{_NUM}{_DEG}(?:c\b|celsius)[^.?!]*?\b(?:to|in)\s+(?:°\s*)?(?:f\b|fahrenheit)", re.I)
_F_TO_C = re.compile(rf"{_NUM}{_DEG}(?:f\b|fahrenheit)[^.?!]*?\b(?:to|in)\s+(?:°\s*)?(?:c\b|celsius)", re.I)
_SPEED = re.compile(
    rf"{_NUM}\s*(?:km|kilometres|kilometers|miles|mi|m|metres|meters)\b[^.?!]*?\bin\s+{_NUM}\s*"
    r"(?:hours?|h|hrs?|minutes?|mins?|seconds?|s)\b[^?]*\b(?:speed|fast|per)\b",
    re.I,
)
_HAVE = re.compile(
    rf"\b(?:have|has|had|start\s+with|there\s+are|there\s+were|(?:start(?:ed)?|began|begin)(?:\s+[\w']+){{0,3}}?"
    rf"\s+with|budget\s+(?:of|is|was))\s+(?:[$€£]\s*)?{_NUM}(?![\d.,]?\d)", re.I)
#: the verbs of a running count's changes ("spent 30", "earned 5")
_CHANGE_VERBS = (r"give\s+away|gave\s+away|lose|lost|eat|ate|sell|sold|spend|spent|use|used|remove|take\s+away|"
                 r"paid|pay|lent|lend|broke|donated|withdrew|"
                 r"buy|bought|get|got|find|found|receive|received|add|added|gain|gained|earn|earned|pick|picked")
_CHANGE = re.compile(rf"\b({_CHANGE_VERBS})\s+(?:another\s+)?(?:[$€£]\s*)?{_NUM}", re.I)
# "spent 347 on rent and 289 on groceries": a number joined by "and" or a comma to a change, with no verb
# of its own, changes the count the same way
_ALSO = re.compile(
    rf"(?:[^\d.?!]{{0,40}}?(?:,\s*|\s+and\s+|\s+then\s+)(?:(?:then|another|also)\s+)?(?:[$€£]\s*)?{_NUM}(?![\d.,]?\d)"
    # the amount ends its clause or goes on as an amount does ("289 on groceries", "80 for a coat",
    # "20 bucks"); "2 friends each got 5", "2 hours later", "40 was left" are no amounts of the change
    r"(?=\s*(?:[$€£]|(?:bucks|dollars?|euros?|pounds?|eur|usd)\b)?\s*(?:on|for|at|in|to|of)\b|\s*[$€£]?\s*[,.;!?]|"
    r"\s*(?:bucks|dollars?|euros?|pounds?|eur|usd)\b|\s*(?:and|then|plus)\b|\s*$))", re.I)
_EACH = re.compile(
    rf"{_NUM}\s+([a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?:with|of|at|containing|holding|costing|that\s+(?:hold|cost|have)s?)"
    rf"\s+(?:[$€£]\s*)?{_NUM}\s*(?:[$€£]|[a-z][\w-]*\s+)?(?:[a-z][\w-]*\s+)?(?:each|apiece|per\s+\w+|a\s+piece)\b",
    re.I,
)
_SPLIT = re.compile(rf"\b(?:split|divide|share)\s+(?:[$€£]\s*)?{_NUM}\s*(?:[a-z]+\s+)?(?:between|among|by)\s+{_NUM}",
                    re.I)
_PERCENT_OF_WHAT = re.compile(rf"\bwhat\s+(?:percent(?:age)?|%)\s+of\s+{_NUM}\s+is\s+{_NUM}", re.I)
_IS_WHAT_PERCENT = re.compile(rf"{_NUM}\s+(?:is|are)\s+what\s+(?:percent(?:age)?|%)\s+of\s+{_NUM}", re.I)
_OFF = re.compile(
    rf"{_NUM}\s*(?:[$€£]|\w+)?\s+(?:with|at|and|is)\s+(?:a\s+)?{_NUM}\s*(?:%|percent)\s+(?:off|discount)", re.I)
_OFF_BEFORE = re.compile(
    rf"{_NUM}\s*(?:%|percent)\s+(?:off|discount)\s+(?:on|of|from|for)?\s*(?:[$€£]\s*)?{_NUM}", re.I)
_GROUPS_OF = re.compile(rf"{_NUM}\s+([a-z][\w-]*)\s+of\s+{_NUM}\s+[a-z][\w-]*", re.I)
_HOW_MANY = re.compile(r"\bhow\s+many\b|\btotal\b|\bin\s+all\b|\baltogether\b|\bcombined\b", re.I)
_EACH_FIRST = re.compile(
    rf"(?:[$€£]\s*)?{_NUM}\s*(?:[$€£]|euros?|dollars?|pounds?)?\s+(?:each|apiece|a\s+piece)\b[^.?!\d]*?\b{_NUM}\b",
    re.I)
_TIP = re.compile(rf"{_NUM}\s*(?:%|percent)\s+(?:tip|tax|vat|interest|raise|increase|surcharge)\s+"
                  rf"(?:on|of|for)\s+(?:a\s+)?(?:[$€£]\s*)?{_NUM}", re.I)
_MINUS_VERBS = ("give", "gave", "lose", "lost", "eat", "ate", "sell", "sold", "spend", "spent",
                "use", "used", "remove", "take", "paid", "pay", "lent", "lend", "broke", "donated", "withdrew")
#: a verb of change inside what _ALSO would take: that number is the verb's, not the earlier change's
_CHANGE_WORD = re.compile(rf"\b(?:{_CHANGE_VERBS}|give|gave|take|each|per|times)\b", re.I)


def _n(text: str) -> str:
    return text.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", text) else text.replace(",", ".")


def _symbolic(words: str) -> str | None:
    best = ""
    words = re.sub(r"\b0x[0-9a-f]+\b", " ", words, flags=re.I)  # 0x1F: a hexadecimal number, not 0 times 1
    for match in _SYMBOLIC.finditer(words):
        text = match.group(0).strip()
        if len(text) > len(best) and re.search(r"\d\s*\)*\s*(?:\*\*|[-+*/×÷^%x])\s*\(*\s*-?\d", text, re.I):
            best = text
    if not best or re.fullmatch(r"[\d.,]+(?:-[\d.,]+)+", best):
        return None  # 555-1234, 2024-01-05: a phone number or a date, not a subtraction
    expr = re.sub(r"(?<=\d)\s*[x×]\s*(?=[\d(])", " * ", best, flags=re.I).replace("÷", "/").replace("^", "**")
    expr = re.sub(r"(\d),(\d{3})\b", r"\1\2", expr)
    if expr.count("(") != expr.count(")"):
        expr = expr.strip("()").strip()
    return expr.rstrip(".").strip() or None


#: a running count adds and takes away whole amounts: "each", "per", "times" multiply, and a party
#: ("there were 3 of us") counts people, not the amount that changes
_NOT_A_RUNNING_COUNT = re.compile(
    r"\b(?:each|per|apiece|times|twice|percent)\b|%"
    # a change the words deny, a question about something other than what is left, a number written
    # the continental way ("1.000 €"): code gives no answer rather than a wrong one
    r"|\b(?:didn'?t|did\s+not|never|don'?t|do\s+not|won'?t|wasn'?t|not)\b"
    r"|\bhow\s+much\s+did\s+(?:i|we|you|they|he|she)\s+(?:spend|pay|earn|get|have)\b|\b(?:before|originally|at\s+first)\s*\?"
    r"|\b\d{1,3}(?:\.\d{3})+(?![\d.])", re.IGNORECASE)
#: a number that is no amount of the count: a year, or a count of things bought ("on 2 books")
_NOT_AN_AMOUNT = re.compile(r"(?<![\w.,])(?:(?:19|20)\d\d(?![\d.,])(?!\s*(?:[$€£]|bucks|dollars?|euros?|pounds?))"
                            r"|(?<=\bon\s)\d+(?=\s+[a-z]))", re.IGNORECASE)
_PARTY_COUNT = re.compile(r"\s+(?:of\s+us|people|persons|friends|guests|kids|children)\b", re.IGNORECASE)


_AMOUNT = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*")


#: words after an amount that say nothing of what it counts
_NOT_A_THING = frozenset({"on", "for", "at", "in", "to", "of", "and", "then", "more", "from", "with", "so", "but",
                          "bucks", "dollars", "dollar", "euros", "euro", "pounds", "pound", "eur", "usd", "today",
                          "yesterday", "back", "away", "last", "this", "now", "later", "again", "too", "also"})


def _thing(words: str, at: int) -> str | None:
    """What the amount ending at ``at`` counts ("apples" in "12 apples"), singular; ``None`` if unsaid."""
    match = re.match(r"\s*(?:[$€£])?\s*([a-z]+)", words[at:at + 40], re.IGNORECASE)
    if match is None or match.group(1).lower() in _NOT_A_THING:
        return None
    return match.group(1).lower().removesuffix("s")


def _running_count(words: str) -> str | None:
    start = _HAVE.search(words)
    if start is None or _NOT_A_RUNNING_COUNT.search(words) or _PARTY_COUNT.match(words, start.end()):
        return None
    terms = [_n(start.group(1))]
    used = {start.start(1)}
    counted = _thing(words, start.end())
    changes = list(_CHANGE.finditer(words, start.end()))
    for index, change in enumerate(changes):
        thing = _thing(words, change.end())
        if thing is not None and thing != counted:
            return None  # "I had 100, bought 2 shirts": shirts are not what is counted
        sign = "-" if change.group(1).split()[0].lower() in _MINUS_VERBS else "+"
        terms.append(f"{sign} {_n(change.group(2))}")
        used.add(change.start(2))
        end = changes[index + 1].start() if index + 1 < len(changes) else len(words)
        at = change.end()
        while (also := _ALSO.match(words, at, end)) is not None and not _CHANGE_WORD.search(also.group(0)):
            terms.append(f"{sign} {_n(also.group(1))}")
            used.add(also.start(1))
            at = also.end()
    # a number left out ("spent 730 and later 1215.", "a thief stole 30") would make a confident wrong
    # answer: then the model's own code computes it instead; years and counts of things bought aside
    skipped = {m.start() for m in _NOT_AN_AMOUNT.finditer(words, start.end())}
    if any(m.start() not in used and m.start() not in skipped for m in _AMOUNT.finditer(words, start.end())):
        return None
    return " ".join(terms) if len(terms) > 1 else None


_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORD = re.compile(
    r"\b(?:(?:" + "|".join([*_TENS, *_UNITS, *_SCALES]) + r")(?:[\s-]+|\b)"
    r"(?:(?:(?<=hundred\s)|(?<=thousand\s))and\s+(?=(?:" + "|".join([*_TENS, *_UNITS]) + r")\b))?)+", re.I)
_OPERATOR_WORDS = re.compile(r"\b(?:plus|minus|times|divided|multiplied|dozen|each|sum|total|add|average|percent|of)\b"
                             r"|[-+*/×÷%]", re.I)
_DOZEN = re.compile(rf"{_NUM}\s+dozens?\b", re.I)


def _number_value(phrase: str) -> int | None:
    total, current = 0, 0
    for word in re.findall(r"[a-z]+", phrase.lower()):
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word in _SCALES:
            current = max(current, 1) * _SCALES[word]
            if word == "thousand":
                total, current = total + current, 0
        elif word != "and":  # "three hundred and twelve"
            return None
    return total + current


def digits_for_words(text: str) -> str:
    """``text`` with English number words as digits ("twelve plus thirty" → "12 plus 30")."""
    def swap(match: re.Match[str]) -> str:
        value = _number_value(match.group(0))
        return f"{value} " if value is not None else match.group(0)

    return " ".join(_NUMBER_WORD.sub(swap, text).split())


#: word math reads requests up to this long, with no run of digits longer than a number has
MAX_WORDS_CHARS = 600
_LONG_DIGITS = re.compile(r"\d{25}")


def arithmetic_from_words(words: str) -> str | None:
    """The calculator expression the words ask for, or ``None``; number words count when the words
    hold at least two numbers and an operation ("twelve plus thirty", "seven dozen"). A value with
    float noise (7 / 100 * 1250 = 87.50000000000001) is shown rounded: ``round(…, n)``."""
    text = " ".join(words.split())
    if len(text) > MAX_WORDS_CHARS or _LONG_DIGITS.search(text):
        return None  # no request with arithmetic in words is this long; the patterns stay fast
    found = _arithmetic(text)
    if found is not None and found == _symbolic(text):
        return found  # the user's own expression, as typed
    if found is None and _NUMBER_WORD.search(words):
        spelled = digits_for_words(words)
        if not re.search(r"\d", spelled):
            return None
        if not _OPERATOR_WORDS.search(spelled):
            found = None if has_rate(spelled) else unit_conversion(spelled)  # "how many minutes in three hours"
        else:
            found = _arithmetic(spelled)
    return denoise(found) if found else None


# "…, split evenly between 4 people", "and divide it among 3 of us", "split it 4 ways": the share of a total
# the rest of the words work out (a number right after "split" is _SPLIT's: "split 90 between 3")
_SHARED = re.compile(
    r"[,;]?\s*(?:\b(?:and|then)\s+)*(?:\bwe\s+|\bto\s+)?\b(?:split|divide|share|shared)"
    r"(?:\s+(?:it|that|this|the\s+(?:bill|total|cost|amount|check|sum)))?"
    r"(?:\s+(?:evenly|equally|fairly))?\s+(?:(?:between|among|amongst|across)\s+(\d+)"
    r"(?:\s+(?:people|persons|friends|guests|of\s+us|ways))?|(\d+)\s+ways)\b",
    re.IGNORECASE,
)


def _shared(text: str) -> str | None:
    """A total the words work out, split between ``n``: that total divided by ``n``."""
    match = _SHARED.search(text)
    if match is None:
        return None
    n = match.group(1) or match.group(2)
    rest = (text[:match.start()] + text[match.end():]).strip()
    if not n or not n.strip("0") or not re.search(r"\d", rest):
        return None
    total = _arithmetic(rest)
    if total is None:  # "pizza costs 24, shared among 3 friends": the one amount given is the total
        amounts = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)", rest)
        total = amounts[0] if len(amounts) == 1 else None
    return f"({total}) / ({n})" if total else None


# "we were 5 at dinner and the bill came to 187.50, how much does each person owe": the party's size
# named apart from the split
_PARTY = re.compile(
    r"\b(?:we\s+(?:were|are)\s+(\d+)|there\s+(?:were|are)\s+(\d+)\s+of\s+us|(\d+)\s+of\s+us|"
    r"(?:party|group|table)\s+of\s+(\d+)|(\d+)\s+(?:people|persons|friends|guests|colleagues|adults))\b",
    re.IGNORECASE,
)
_EACH_SHARE = re.compile(
    r"\b(?:split\s+(?:it|that|this|the\s+(?:bill|total|cost|check))(?:\s+(?:evenly|equally|fairly))?|"
    r"each\s+(?:person|one|of\s+us|guest|friend)?\s*(?:owe|pay|put\s+in|chip\s+in)|"
    r"(?:owe|pay)s?\s+each|per\s+(?:person|head)|a\s+head|apiece)\b",
    re.IGNORECASE,
)


_PER_HEAD_ALREADY = re.compile(
    r"\b(?:each|apiece|per\s+(?:person|head))\b[^.?!\d]{0,25}\d|\d+(?:\.\d+)?\s*(?:[$€£]|bucks|dollars?|euros?)?"
    r"\s*(?:each|apiece|a\s+head|per\s+(?:person|head))\b|\b(?:in\s+total|total|altogether|in\s+all|combined)\b",
    re.IGNORECASE,
)


def _party_share(text: str) -> str | None:
    """One amount shared by a party whose size the words give apart: the amount divided by it. Not
    when the amount is already each one's ("we each paid 25", "20 each") or the total is asked."""
    party = _PARTY.search(text)
    if party is None or _EACH_SHARE.search(text) is None or _PER_HEAD_ALREADY.search(text):
        return None
    n = next(g for g in party.groups() if g is not None)
    rest = text[:party.start()] + " " + text[party.end():]
    amounts = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)", rest)
    if len(amounts) != 1 or not n.strip("0"):
        return None
    return f"({amounts[0]}) / ({n})"


def _arithmetic(text: str) -> str | None:
    if list_then_more(text):
        return None  # a list with an operation after it: the model's code computes the whole
    shared = _shared(text) if _SHARED.search(text) else None
    if shared:
        return shared
    party = _party_share(text)
    if party:
        return party
    if not re.search(r"\d", text):  # only "how many seconds are in a day" computes without a digit
        asks = re.search(r"\b(?:how|wie|combien|cu[aá]nt|quant|hoeveel)", text, re.IGNORECASE)
        return unit_conversion(text) if asks else None
    for parser in (rates_and_prices, motion, interest, percent_change, percentage_of_amount, list_arithmetic, ratios):
        found = parser(text)
        if found:
            return found
    if not has_rate(text):  # "I work 8 hours a day, how many hours in a week" is no conversion
        converted = unit_conversion(text)
        if converted:
            return converted
    for pattern, template in ((_C_TO_F, "({a}) * 9 / 5 + 32"), (_F_TO_C, "(({a}) - 32) * 5 / 9")):
        match = pattern.search(text)
        if match:
            return template.format(a=_n(match.group(1)))
    match = _SPEED.search(text)
    if match:
        return f"({_n(match.group(1))}) / ({_n(match.group(2))})"
    match = _PERCENT_OF_WHAT.search(text)
    if match:
        return f"({_n(match.group(2))}) / ({_n(match.group(1))}) * 100"
    match = _IS_WHAT_PERCENT.search(text)
    if match:
        return f"({_n(match.group(1))}) / ({_n(match.group(2))}) * 100"
    match = _OFF.search(text)
    if match:
        return f"({_n(match.group(1))}) * (100 - ({_n(match.group(2))})) / 100"
    match = _TIP.search(text)
    if match:
        return f"({_n(match.group(2))}) * ({_n(match.group(1))}) / 100"
    match = _OFF_BEFORE.search(text)
    if match:
        return f"({_n(match.group(2))}) * (100 - ({_n(match.group(1))})) / 100"
    match = _EACH.search(text)
    if match:
        return f"({_n(match.group(1))}) * ({_n(match.group(3))})"
    match = _EACH_FIRST.search(text)
    if match:
        return f"({_n(match.group(1))}) * ({_n(match.group(2))})"
    match = _GROUPS_OF.search(text)
    if match and _HOW_MANY.search(text):
        return f"({_n(match.group(1))}) * ({_n(match.group(3))})"
    match = _SPLIT.search(text)
    if match:
        return f"({_n(match.group(1))}) / ({_n(match.group(2))})"
    counted = _running_count(text)
    if counted:
        return counted
    for pattern, template in _BINARY_WORDS:
        match = pattern.search(text)
        if match:
            return template.format(a=_n(match.group(1)), b=_n(match.group(2)))
    match = _DOZEN.search(text)
    if match:
        return f"({_n(match.group(1))}) * 12"
    match = _SQRT.search(text)
    if match:
        return f"sqrt({_n(match.group(1))})"
    match = _FACTORIAL.search(text)
    if match:
        value = next(g for g in match.groups() if g)
        return f"factorial({_n(value)})"
    match = _SQUARED.search(text)
    if match:
        return f"({_n(match.group(1))}) ** {2 if match.group(2).lower() == 'squared' else 3}"
    return _symbolic(text)
