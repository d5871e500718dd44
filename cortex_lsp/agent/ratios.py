"""Fractions, ratios as percentages, roots and powers stated in words, in English, German, French,
Spanish, Italian, Portuguese and Dutch:

* a fraction of an amount: "half of 80", "two thirds of 90", "3/4 of 200", "la mitad de 80",
  "die Hälfte von 80", "trois quarts de 200" (never of a year: "the first half of 2024");
* one amount as a percentage of another: "qué porcentaje es 20 de 80", "wie viel Prozent sind 20 von
  80", "20 sur 80 en pourcentage", "20 is what percentage of 80";
* roots and powers: "raíz cuadrada de 144", "Quadratwurzel aus 144", "cube root of 27", "5 al cuadrado",
  "2 hoch 10", "3 elevado a 4".
"""

from __future__ import annotations

import re

from cortex_lsp.agent.numtext import CURRENCY, NUM, continental, fold, named_number, number, tidy

_SMALL = {
    "a": 1, "an": 1, "one": 1, "un": 1, "une": 1, "uno": 1, "una": 1, "um": 1, "uma": 1, "een": 1, "ein": 1,
    "eine": 1, "two": 2, "zwei": 2, "deux": 2, "dos": 2, "due": 2, "dois": 2, "duas": 2, "twee": 2, "three": 3,
    "drei": 3, "trois": 3, "tres": 3, "tre": 3, "drie": 3, "four": 4, "vier": 4, "quatre": 4, "cuatro": 4,
    "quattro": 4, "quatro": 4,
}
_PARTS = {
    2: r"half|halfte|moitie|mitad|meta|metade|helft",
    3: r"thirds?|drittel|tiers|tercios?|terzi|terzo|tercos?|derde",
    4: r"quarters?|fourths?|viertel|quarts?|cuartos?|quarti|quartos?|kwart",
    5: r"fifths?|funftel|cinquiemes?|quintos?|quinti|quinto|vijfde",
    10: r"tenths?|zehntel|dixiemes?|decimos?|decimi|decimo|tiende",
}
_OF = r"(?:of|von|de|du|di|van|d'|del|da|do)"
_FRACTION = re.compile(
    rf"\b(?:(?:the|die|la|le|a|o|de)\s+)?(?:(?P<count>{'|'.join(_SMALL)})\s+)?(?P<part>{'|'.join(_PARTS.values())})"
    rf"\s+{_OF}\s+(?P<cur>[$€£]\s*)?{named_number('amount')}(?P<after>\s*{CURRENCY})?(?!\s*(?:%|[-+*/^]\s*\d|\.\d))",
    re.IGNORECASE,
)
_SLASH_FRACTION = re.compile(rf"{NUM}\s*/\s*(\d+)\s+{_OF}\s+(?:[$€£]\s*)?{NUM}(?!\s*(?:%|[-+*/^]\s*\d))",
                             re.IGNORECASE)

_PCT_Q = (r"(?:what|which|que|quel(?:le)?|welche[rsn]?|wie\s*viel|che|hoeveel|quanto|cuanto)\s+"
          r"(?:percent(?:age)?|%|porcentaje|prozent|pourcentage|percentuale|porcentagem|procent|por\s*ciento|"
          r"por\s*cento|per\s*cento)")
_IS = r"(?:\s+(?:is|are|es|est|sind|ist|e|represents?|representa|represente|rappresenta|fait|hace|fa|makes?))?"
_OF_WHOLE = r"(?:out\s+of|of|von|de|sur|di|van|from|op)"
_SHARE_FIRST = re.compile(rf"\b{_PCT_Q}{_IS}\s+{NUM}\s+{_OF_WHOLE}\s+{NUM}", re.IGNORECASE)
_SHARE_AFTER = re.compile(rf"{NUM}{_IS}\s+{_PCT_Q}\s+{_OF_WHOLE}\s+{NUM}", re.IGNORECASE)
_SHARE_AS = re.compile(
    rf"{NUM}\s+{_OF_WHOLE}\s+{NUM}\s+(?:in|en|als|as\s+an?|as|em|come)\s+(?:%|percent(?:age)?|prozent|"
    r"pourcentage|porcentaje|percentuale|porcentagem|procent)\b",
    re.IGNORECASE,
)

# "I got 20 out of 25, what percentage is that"
_SHARE_THEN_ASK = re.compile(rf"{NUM}\s+(?:out\s+of|sur)\s+{NUM}\b(?:\W+[^\W\d]+){{0,6}}?\W+{_PCT_Q}", re.IGNORECASE)
_REST = re.compile(r"\b(?:left|remaining|remain|rest|missing|not|failed|lost|wrong)\b", re.IGNORECASE)

_SQRT = re.compile(
    rf"\b(?:raiz\s+cuadrada|quadratwurzel|wurzel|racine\s+carree|radice\s+quadrata|raiz\s+quadrada|"
    rf"vierkantswortel|square\s+root)\s+(?:aus|von|de|di|van|uit|of|du)\s+{NUM}",
    re.IGNORECASE,
)
_CBRT = re.compile(
    rf"\b(?:cube\s+root|raiz\s+cubica|kubikwurzel|racine\s+cubique|radice\s+cubica|derdemachtswortel)\s+"
    rf"(?:aus|von|de|di|van|uit|of|du)\s+{NUM}",
    re.IGNORECASE,
)
_SQUARE = re.compile(
    rf"{NUM}\s+(?:(?P<two>al\s+cuadrado|au\s+carre|al\s+quadrato|ao\s+quadrado|(?:in\s+het\s+)?kwadraat|zum\s+quadrat)|"
    r"(?P<three>al\s+cubo|au\s+cube|ao\s+cubo|(?:tot\s+de\s+)?derde\s+macht))\b",
    re.IGNORECASE,
)
_POWER = re.compile(
    rf"{NUM}\s+(?:hoch|elevado\s+(?:a|al)|elevada\s+a|(?:a\s+la\s+|a\s+)?puissance|elevato\s+(?:a|alla)|"
    rf"elevado\s+a|tot\s+de\s+macht)\s+{NUM}",
    re.IGNORECASE,
)


def _year(value: str) -> bool:
    return value.isdigit() and 1900 <= int(value) <= 2100


def fraction_of(text: str, comma_decimal: bool) -> str | None:
    match = _FRACTION.search(text)
    if match:
        den = next(d for d, words in _PARTS.items() if re.fullmatch(words, match.group("part"), re.IGNORECASE))
        count = _SMALL.get((match.group("count") or "one").lower(), 1)
        amount = number(match.group("amount"), comma_decimal)
        if amount is None or (_year(amount) and not (match.group("cur") or match.group("after"))):
            return None  # "the first half of 2024"
        return tidy(f"{amount} / {den}" if count == 1 else f"{count} / {den} * {amount}")
    match = _SLASH_FRACTION.search(text)
    if match:
        top, bottom, whole = (number(match.group(i), comma_decimal) for i in (1, 2, 3))
        if top and bottom and whole and float(bottom) != 0 and not _year(whole):
            return tidy(f"{top} / {bottom} * {whole}")
    return None


def share_as_percent(text: str, comma_decimal: bool) -> str | None:
    match = _SHARE_FIRST.search(text) or _SHARE_AFTER.search(text) or _SHARE_AS.search(text)
    if match is None and not _REST.search(text):
        match = _SHARE_THEN_ASK.search(text)
    if match is None:
        return None
    part, whole = number(match.group(1), comma_decimal), number(match.group(2), comma_decimal)
    if part is None or whole is None or float(whole) == 0:
        return None
    return tidy(f"({part}) / ({whole}) * 100", 2)


def roots_and_powers(text: str, comma_decimal: bool) -> str | None:
    for pattern, template in ((_SQRT, "sqrt({a})"), (_CBRT, "{a} ** (1 / 3)")):
        match = pattern.search(text)
        if match and (a := number(match.group(1), comma_decimal)):
            return tidy(template.format(a=a))
    match = _SQUARE.search(text)
    if match and (a := number(match.group(1), comma_decimal)):
        return f"({a}) ** {2 if match.group('two') else 3}"
    match = _POWER.search(text)
    if match:
        a, b = number(match.group(1), comma_decimal), number(match.group(2), comma_decimal)
        if a and b:
            return f"({a}) ** ({b})"
    return None


def ratios(words: str) -> str | None:
    """A fraction of an amount, a share as a percentage, a root or a power; else ``None``."""
    text = fold(words)
    comma_decimal = continental(text)
    return (share_as_percent(text, comma_decimal) or fraction_of(text, comma_decimal)
            or roots_and_powers(text, comma_decimal))
