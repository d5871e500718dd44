"""Unit conversions stated in words, as a calculator expression ("3.5 * 60", "72 / 0.45359237").

Three shapes, in English, German, French, Spanish, Italian, Portuguese and Dutch:

* "how many minutes are in 3.5 hours", "wie viele Minuten sind 3,5 Stunden", "how many seconds in a day"
* "3.5 hours is how many minutes", "2 Stunden sind wie viele Minuten"
* "convert 5 miles to km", "72 kg in pounds", "1,5 km en mètres", "2 hours 30 minutes in minutes"

Both units must be known (``unit_names``) and measure the same thing (a time in a length is no
conversion: "I ran 5 km in 30 minutes"); a word that only looks like a unit is never read as one.
"""

from __future__ import annotations

import re
from fractions import Fraction

from cortex_lsp.agent.lazy_re import lazy
from cortex_lsp.agent.numtext import continental, decimal_text, fold, number, tidy
from cortex_lsp.agent.unit_names import ABBREVIATIONS, DEGREES, WORDS, Unit


def _alternation(names: list[str]) -> str:
    ordered = sorted(names, key=len, reverse=True)
    return "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in ordered)


#: a unit: a word in any case, or an abbreviation in its own case; never inside a longer word
UNIT = (rf"(?<![^\W\d_])(?:{DEGREES}\s+)?(?:(?-i:{_alternation(list(ABBREVIATIONS))})|{_alternation(list(WORDS))})"
         r"(?![^\W_]|/\w|[²³])")
_SIGNED = r"(?<![\w.,/:#@])([-−])?(\d+(?:[.,]\d+)*)(?![.,]?\d)"
_QUANTITY = rf"{_SIGNED}\s*({UNIT})"
_ONE_QUANTITY = r"(?<![\w.,/:#@])[-−]?\d+(?:[.,]\d+)*(?![.,]?\d)\s*" + f"(?:{UNIT})"
_JOIN = r"(?:\s*,\s*|\s+(?:and|und|et|y|e|en|plus)\s+|\s+)"
_CHAIN = rf"(?:{_ONE_QUANTITY}(?:{_JOIN}{_ONE_QUANTITY})*)"
_HOW_MANY = r"(?:how\s+many|how\s+much|wie\s*viele?|combien(?:\s+de|\s+d')?|cuant[oa]s?|quant[ieoa]s?|hoeveel)"
_LINK = (r"(?:are|is|there|in|into|does|do|make|makes|equal|equals|fit|go|has|have|to|"
         r"sind|ist|es|gibt|hat|haben|im|ergeben|entsprechen|"
         r"dans|y|a-t-il|il|font|fait|sont|en|est|"
         r"hay|son|tiene|tienen|equivalen|caben|"
         r"ci|sono|ha|hanno|fanno|stanno|"
         r"tem|sao|em|cabem|"
         r"zitten|er|zijn|gaan|heeft)")
# "a day", "an hour", "eine Stunde", "une heure", "un dia", "un'ora", "uma hora", "een uur", "half an hour"
_ONE = (r"(?:a|an|one|ein|eine|einem|einer|un|une|uno|una|un'|um|uma|een|1)")
_HALF = r"(?:half\s+(?:an?|one)|a\s+half|eine\s+halbe|einer\s+halben|une\s+demi-?e?|media|mezza|mezz'|meia|een\s+half)"
_ARTICLE_QUANTITY = rf"(?:({_HALF})|{_ONE})\s*({UNIT})"
_ASK_FIRST = lazy(
    rf"\b{_HOW_MANY}\s+({UNIT})(?:\s+{_LINK}){{0,4}}\s+(?:({_CHAIN})|{_ARTICLE_QUANTITY})(?!\s*(?:/|per\b|pro\b))",
    re.IGNORECASE,
)
_ASK_AFTER = lazy(
    rf"(?P<chain>{_CHAIN})\s*(?:(?:is|are|=|equals?|makes?|sind|ist|sont|fait|font|son|es|sono|sao|zijn)\s*)?"
    rf"{_HOW_MANY}\s+(?P<target>{UNIT})",
    re.IGNORECASE,
)
# "to", "in", "into", "as", "en", "a", "para", "em", "naar", "nach", "=", "→"; the target is a unit
# directly after (never a number: "from 5 km to 10 km" is a range)
_CONVERT = lazy(
    rf"(?<!\bper\s)(?<!/)(?P<chain>{_CHAIN})\s*"
    rf"(?:(?:\s(?P<prep>to|into|in|as|en|a|para|em|naar|nach|na|zu)\s+)|(?:=|->|→)\s*\??\s*)"
    rf"(?:(?:the|die|den|les)\s+)?(?P<target>{UNIT})(?!\s*\d)",
    re.IGNORECASE,
)
_QUANTITY_RE = lazy(_QUANTITY, re.IGNORECASE)

# small numbers as words, read only right before a unit ("drei Stunden", "deux heures", "dos horas")
_NUMBER_WORDS = {
    word: value
    for value, words in enumerate((
        "", "", "two|zwei|deux|dos|due|dois|duas|twee", "three|drei|trois|tres|tre|drie",
        "four|vier|quatre|cuatro|quattro|quatro", "five|funf|cinq|cinco|cinque|vijf", "six|sechs|seis|sei|zes",
        "seven|sieben|sept|siete|sette|sete|zeven", "eight|acht|huit|ocho|otto|oito",
        "nine|neun|neuf|nueve|nove|negen", "ten|zehn|dix|diez|dieci|dez|tien",
        "eleven|elf|onze|undici", "twelve|zwolf|douze|doce|dodici|doze|twaalf",
    ))
    for word in words.split("|") if word
}
_NUMBER_WORD_BEFORE_UNIT = lazy(rf"\b({'|'.join(_NUMBER_WORDS)})\s+(?=(?:{UNIT}))", re.IGNORECASE)


def unit_named(text: str) -> Unit | None:
    """The unit ``text`` names (folded; "degrees Celsius", "km/h", "Stunden"), or ``None``."""
    text = " ".join(text.split())
    text = re.sub(rf"^{DEGREES}\s+", "", text, flags=re.IGNORECASE)
    return ABBREVIATIONS.get(text) or WORDS.get(text.lower())


def factor_text(ratio: Fraction) -> str:
    """`` * r`` or `` / r`` (whichever is written out exactly), else `` * a / b``."""
    if ratio == 1:
        return ""
    if (text := decimal_text(ratio)) is not None and ratio >= 1:
        return f" * {text}"
    if (text := decimal_text(1 / ratio)) is not None:
        return f" / {text}"
    if (text := decimal_text(ratio)) is not None:
        return f" * {text}"
    num, den = decimal_text(Fraction(ratio.numerator)), decimal_text(Fraction(ratio.denominator))
    return f" * {num} / {den}"


def _temperature(value: str, source: str, target: str) -> str | None:
    formulas = {
        ("C", "F"): "({v}) * 9 / 5 + 32", ("F", "C"): "(({v}) - 32) * 5 / 9",
        ("C", "K"): "{v} + 273.15", ("K", "C"): "{v} - 273.15",
        ("F", "K"): "(({v}) - 32) * 5 / 9 + 273.15", ("K", "F"): "({v} - 273.15) * 9 / 5 + 32",
    }
    formula = formulas.get((source, target))
    return formula.format(v=value) if formula else (value if source == target else None)


def _convert(parts: list[tuple[str, Unit]], target: Unit) -> str | None:
    if not parts or any(u.measure != target.measure for _, u in parts):
        return None
    if target.measure == "temperature":
        if len(parts) != 1:
            return None
        expression = _temperature(parts[0][0], parts[0][1].key, target.key)
    else:
        terms = []
        for value, unit in parts:
            factor = factor_text(unit.size / target.size)
            if value == "1" and factor.startswith(" * "):
                terms.append(factor[3:])
            else:
                terms.append(f"{value}{factor}")
        expression = " + ".join(terms)
    return tidy(expression) if expression else None


def _chain(text: str, comma_decimal: bool) -> list[tuple[str, Unit]] | None:
    """The quantities of a chain ("2 hours 30 minutes" → [("2", h), ("30", min)]), in one measure."""
    parts: list[tuple[str, Unit]] = []
    for match in _QUANTITY_RE.finditer(text):
        value = number(match.group(2), comma_decimal)
        unit = unit_named(match.group(3))
        if value is None or unit is None:
            return None
        if match.group(1):
            value = f"-{value}"
        parts.append((value, unit))
    if len({u.measure for _, u in parts}) != 1 or len({u.key for _, u in parts}) != len(parts):
        return None
    if len(parts) > 1 and (parts[0][1].measure == "temperature" or any(v.startswith("-") for v, _ in parts)):
        return None
    return parts


def unit_conversion(words: str) -> str | None:
    """The conversion the words ask for ("how many minutes are in 3.5 hours" → "3.5 * 60"), or ``None``."""
    text = fold(words)
    comma_decimal = continental(text)
    text = _NUMBER_WORD_BEFORE_UNIT.sub(lambda m: f"{_NUMBER_WORDS[m.group(1).lower()]} ", text)
    match = _ASK_FIRST.search(text)
    if match:
        target = unit_named(match.group(1))
        if match.group(2):
            parts = _chain(match.group(2), comma_decimal)
        else:
            unit = unit_named(match.group(4))
            parts = [("0.5" if match.group(3) else "1", unit)] if unit else None
        if target and parts:
            return _convert(parts, target)
    for pattern in (_ASK_AFTER, _CONVERT):
        for match in pattern.finditer(text):
            written = match.group("target")
            if (match.groupdict().get("prep") or "").lower() == "a" and written.lower() in WORDS and not (
                    comma_decimal or written.lower().endswith("s")):
                continue  # "8 hours a day" is a rate; "10 millas a kilómetros" a conversion
            target = unit_named(match.group("target"))
            parts = _chain(match.group("chain"), comma_decimal)
            if target and parts:
                return _convert(parts, target)
    return None
