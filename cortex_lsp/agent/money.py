"""Percentages applied to an amount, stated in words, as a calculator expression: a price after a
discount ("360 euros and it's 15% off"), the saving, a price with tax, VAT or a tip added or the tip
itself, an amount increased or decreased by a percentage ("250 increased by 12%"), and the percent
change from one amount to another ("from 1200 to 1350, what's the percentage increase").

In English, German, French, Spanish, Italian, Portuguese and Dutch (folded text, see ``numtext``).
The words must hold exactly one percentage and one amount, and the amount must read as money or a
quantity, not a count of things ("3 servers got a 20% discount" is no price).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cortex_lsp.agent.lazy_re import LazyPattern, lazy
from cortex_lsp.agent.numtext import CURRENCY, NUM, PERCENT_SIGN, continental, fold, number, tidy


class Figure(NamedTuple):
    value: str
    start: int
    end: int
    percent: bool


_FIGURE = lazy(rf"{NUM}({PERCENT_SIGN})?", re.IGNORECASE)
AFTER_AMOUNT = lazy(
    rf"\s*(?:$|[.,;:!?)]|{CURRENCY}|"
    r"(?:and|with|at|is|was|are|were|plus|minus|less|more|off|increased|decreased|reduced|raised|dropped|fell|"
    r"rose|went|grew|for|on|in|but|then|now|so|if|after|by|up|down|including|incl|excl|net|gross|total|"
    r"grow|grows|become|becomes|be|will|would|invested|deposited|saved|"
    r"und|mit|ist|war|weniger|mehr|inkl|inklusive|zzgl|zuzuglich|netto|brutto|abzuglich|bei|fur|um|erhoht|"
    r"reduziert|gesenkt|et|avec|est|moins|ttc|ht|pour|a|apres|mais|augmente|reduit|y|con|es|mas|menos|por|"
    r"para|al|pero|aumentado|reducido|e|piu|meno|per|ma|aumentato|ridotto|com|mais|reduzido|en|met|min|"
    r"minder|meer|voor|op|bij|maar|verhoogd|verlaagd)\b)",
    re.IGNORECASE,
)
# words that may stand between an amount and its percentage ("80 with 25% off", "20% discount on 80")
_GLUE = lazy(
    r"(?:\s|[,:+-]|\b(?:with|at|and|is|it's|its|a|an|the|on|of|from|for|by|off|plus|minus|less|more|than|to|"
    r"increased|decreased|reduced|raised|increase|decrease|reduce|raise|discount|tip|tax|vat|"
    r"und|mit|von|auf|um|et|avec|de|du|sur|y|con|el|del|e|di|com|do|da|en|met|van|op)\b)*",
    re.IGNORECASE,
)
# words before an amount that make it money: "costs 120", "earn 3000", "the price is 80"
_PRICE_BEFORE = lazy(
    r"\b(?:costs?|costing|price[ds]?|pay|paid|paying|bill|earn|earns|make|makes|salary|is|was|are|were|worth|"
    r"get|gets|got|receive|bekomme|bekommt|erhalte|gagne|percibo|cobro|prendo|recebo|krijg|"
    r"kostet|kosten|preis|betragt|ist|coute|coutent|prix|est|cuesta|cuestan|precio|vale|es|costa|costano|"
    r"prezzo|custa|custam|preco|kost|prijs|verdiene|gano|guadagno|ganho|verdien)(?:\s+(?:of|a|an|the|at|de|di|van))?\s*(?:[$€£]\s*)?$",
    re.IGNORECASE,
)
_CURRENCY_NEAR = lazy(rf"\s*{CURRENCY}", re.IGNORECASE)
_RESULT_BEFORE = lazy(r"\b(?:to|para|naar|tot|a)\s*(?:[$€£]\s*)?$", re.IGNORECASE)
# a change that happened: "rose 10% to 55" gives the result after "to"; "add 10% to 250" the base
_CHANGED = lazy(
    r"\b(?:rose|risen|grew|grown|went|increased|decreased|fell|fallen|dropped|climbed|jumped|raised|reduced|"
    r"gestiegen|gesunken|gefallen|erhoht|passee?|monte|subio|bajo|salito|sceso|subiu|caiu|gestegen|gedaald)\b",
    re.IGNORECASE,
)
_RESULT_BEFORE_DE = lazy(r"\bauf\s*(?:[$€£]\s*)?$", re.IGNORECASE)  # "um 10 % auf 55 gestiegen"

_DISCOUNT = lazy(
    r"\b(?:off|discount(?:ed)?|reduction|markdown|marked\s+down|rabatt|nachlass|ermassigt|remise|rabais|"
    r"soldee?s?|descuento|rebaja(?:do|da)?|sconto|scontat[oa]|ribasso|desconto|korting|afgeprijsd)\b",
    re.IGNORECASE,
)
_SAVING = lazy(
    r"\b(?:save|saving|savings|how\s+much\s+(?:is\s+)?(?:the\s+|a\s+)?(?:\d+(?:[.,]\d+)?\s*(?:%|percent)\s+)?"
    r"(?:discount|off)|discount\s+amount|cuanto\s+es\s+(?:el|un)\s+\d+(?:[.,]\d+)?\s*%\s+de\s+descuento|"
    r"wie\s*viel\s+(?:sind|ist|macht)\s+(?:der\s+)?\d+(?:[.,]\d+)?\s*(?:%|prozent)\s+rabatt|"
    r"spare\s+ich|spart|ersparnis|economise|economiser|economie|ahorro|ahorras?|ahorrar|ahorro|risparmi[oa]?|"
    r"economizo|economizar|economia|bespaar\w*)\b",
    re.IGNORECASE,
)
_ADDED = lazy(
    r"\b(?:vat|tax|taxes|gst|hst|tip|gratuity|service\s+charge|surcharge|markup|mark-up|mwst|mehrwertsteuer|"
    r"ust|umsatzsteuer|steuer|trinkgeld|aufschlag|tva|taxe|pourboire|iva|impuestos?|propina|recargo|mancia|"
    r"maggiorazione|imposto|gorjeta|btw|fooi|toeslag)\b",
    re.IGNORECASE,
)
_ADDED_ONLY = lazy(
    r"\bhow\s+much\s+(?:is\s+)?(?:the\s+|a\s+)?(?:tip|tax|vat|gratuity|gst)\b|\b(?:tip|tax|vat)\s+amount\b|"
    r"\bwhat(?:'s|\s+is|\s+would\s+be)\s+(?:the\s+|a\s+)?(?:tip|tax|vat|gratuity|gst)\b|"
    r"\bwie\s*viel\s+(?:trinkgeld|mwst|steuer)|\bcombien\s+de\s+(?:pourboire|tva)|\bcuant[ao]\s+de\s+(?:propina|iva)|"
    r"\bquanto\s+di\s+(?:mancia|iva)|\bquanto\s+de\s+(?:gorjeta|imposto)|\bhoeveel\s+(?:fooi|btw)",
    re.IGNORECASE,
)
_TOTAL = lazy(
    r"\b(?:total|in\s+all|altogether|with|including|incl|inc|plus|added|add|after|gross|final|overall|"
    r"mit|inkl|inklusive|brutto|insgesamt|gesamt|zusammen|zahle|avec|ttc|compris|en\s+tout|paie|con|mas|"
    r"incluid[oa]s?|piu|compres[oa]|inclus[oa]|totale|com|mais|met|inclusief|totaal)\b",
    re.IGNORECASE,
)
_UP = lazy(
    r"\b(?:increase[ds]?|increasing|raise[ds]?|raising|rise|rises|rose|grow|grows|grown|grew|up|plus|more|"
    r"higher|markup|hike[ds]?|add|\w*erhoh\w*|steig\w*|gestiegen|mehr|augment\w*|hausse|aument\w*|subi\w*|"
    r"sube|suben|subir|mas|piu|"
    r"verhoog\w*|stijg\w*|gestegen|meer)\b",
    re.IGNORECASE,
)
_DOWN = lazy(
    r"\b(?:decrease[ds]?|decreasing|reduce[ds]?|reducing|cut|drop|drops|dropped|fall|falls|fell|down|minus|less|"
    r"lower|lowered|shrink|shrank|senk\w*|gesenkt|gesunken|gefallen|reduzier\w*|verringer\w*|weniger|diminu\w*|"
    r"baisse|reduit\w*|moins|reduc\w*|disminu\w*|bajo|bajar|menos|ridott\w*|ridurre|meno|calo|reduzi\w*|"
    r"diminui\w*|verlaag\w*|minder|daal\w*|gedaald)\b",
    re.IGNORECASE,
)
_PCT_WORD = (r"(?:percent(?:age)?|per\s*cent|%|prozent\w*|pourcentage|porcentaje|porcentual|percentual\w*|"
             r"porcentagem|procent\w*)")
_FROM = r"(?:from|von|de|da|van|desde|du)"
_TO = r"(?:to|auf|zu|a|al|para|tot|naar|en|in|at)"
_CHANGE_AFTER = lazy(
    rf"\b{_PCT_WORD}(?:\s+[^\W\d]+){{0,8}}?\s+{_FROM}\s+(?:[$€£]\s*)?{NUM}\s*(?:{CURRENCY}\s*)?"
    rf"{_TO}\s+(?:[$€£]\s*)?{NUM}(?!\s*{PERCENT_SIGN})",
    re.IGNORECASE,
)
_CHANGE_BEFORE = lazy(
    rf"\b{_FROM}\s+(?:[$€£]\s*)?{NUM}\s*(?:{CURRENCY}\s*)?{_TO}\s+(?:[$€£]\s*)?{NUM}(?!\s*{PERCENT_SIGN})"
    rf"(?:\W+[^\W\d]+){{0,10}}?\W+{_PCT_WORD}",
    re.IGNORECASE,
)


def figures(text: str, comma_decimal: bool) -> list[Figure] | None:
    """Every number in ``text`` (folded), percentages marked; ``None`` if one is no plain number."""
    found = []
    for match in _FIGURE.finditer(text):
        value = number(match.group(1), comma_decimal)
        if value is None:
            return None
        found.append(Figure(value, match.start(), match.end(), bool(match.group(2))))
    return found


def amount_and_percent(text: str, comma_decimal: bool) -> tuple[Figure, Figure] | None:
    """The one amount and the one percentage of the words, or ``None`` (none, several, or a count)."""
    found = figures(text, comma_decimal)
    if not found:
        return None
    amounts = [f for f in found if not f.percent]
    percents = [f for f in found if f.percent]
    if len(amounts) != 1 or len(percents) != 1:
        return None
    amount, percent = amounts[0], percents[0]
    before = text[:amount.start]
    if not AFTER_AMOUNT.match(text, amount.end) or (
            (_RESULT_BEFORE.search(before) or _RESULT_BEFORE_DE.search(before)) and _CHANGED.search(text)):
        return None  # "3 servers", "2 shirts": a count; "rose 10% to 55": the result, not the base
    currency = bool(_CURRENCY_NEAR.match(text, amount.end) or re.search(r"[$€£]\s*$", before))
    between = text[min(amount.end, percent.end):max(amount.start, percent.start)]
    linked = _GLUE.fullmatch(between) is not None
    if not (currency or linked or _PRICE_BEFORE.search(before)):
        return None  # "set the discount to 15% for user 42": 42 is no price
    if _year(amount.value) and not currency:
        return None  # "sales grew 12% in 2023"
    return amount, percent


def _near(text: str, amount: Figure, percent: Figure, pattern: re.Pattern[str] | LazyPattern) -> bool:
    """``pattern`` in the stretch from a few words before the two numbers to a few words after."""
    start, end = min(amount.start, percent.start), max(amount.end, percent.end)
    before = text[:start].split()[-4:]
    after = text[end:].split()[:4]
    return bool(pattern.search(" ".join([*before, text[start:end], *after])))


def percentage_of_amount(words: str) -> str | None:
    """The discounted price, the saving, the price with tax or tip (or the tip), or the amount
    increased or decreased by the percentage; ``None`` when the words ask none of these."""
    text = fold(words)
    pair = amount_and_percent(text, continental(text))
    if pair is None:
        return None
    amount, percent = pair
    a, p = amount.value, percent.value
    if _near(text, amount, percent, _DISCOUNT):
        if _SAVING.search(text):
            return tidy(f"({a}) * ({p}) / 100", 2)
        return tidy(f"({a}) * (100 - ({p})) / 100", 2)
    if _near(text, amount, percent, _ADDED):
        if _ADDED_ONLY.search(text) or not _TOTAL.search(text):
            return tidy(f"({a}) * ({p}) / 100", 2)
        return tidy(f"({a}) * (100 + ({p})) / 100", 2)
    up, down = _near(text, amount, percent, _UP), _near(text, amount, percent, _DOWN)
    if up != down:
        return tidy(f"({a}) * (100 {'+' if up else '-'} ({p})) / 100", 2)
    return None


def _year(value: str) -> bool:
    return value.isdigit() and 1900 <= int(value) <= 2100


def percent_change(words: str) -> str | None:
    """The percent change from one amount to another ("percent change from 80 to 100" → 25); a drop
    asked as a drop ("by what percentage did it fall from 200 to 150") is positive."""
    text = fold(words)
    comma_decimal = continental(text)
    match = _CHANGE_AFTER.search(text) or _CHANGE_BEFORE.search(text)
    if match is None:
        return None
    old, new = number(match.group(1), comma_decimal), number(match.group(2), comma_decimal)
    if old is None or new is None or float(old) == 0 or (_year(old) and _year(new)):
        return None  # "from 2019 to 2023": years, not amounts
    if _DOWN.search(text) and not _UP.search(text):
        return tidy(f"({old} - {new}) / {old} * 100", 2)
    return tidy(f"({new} - {old}) / {old} * 100", 2)
