"""Sums, products and averages of a list of numbers in words, and two numbers joined by an operator
word, in English, German, French, Spanish, Italian, Portuguese and Dutch: "la media de 4, 8 y 15",
"somme de 3, 4 et 5", "Durchschnitt von 2, 4, 6", "the product of 3, 4 and 5", "multiply 6 by 7",
"100 geteilt durch 8", "3 fois 4".

A list is numbers joined by ", " ";" or "and" in one of the languages; where the words are not
English "1,5" is one and a half (a list there needs ", " with the space).
"""

from __future__ import annotations

import re

from cortex_lsp.agent.numtext import continental, fold, number

_AND = r"(?:and|und|et|y|e|en|&|plus|with|mit|avec|con|com|met)"
_TOKEN = r"(?<![\w.,/:#@])-?\d+(?:[.,]\d+)*(?![.,]?\d)(?!\s*%)(?![^\W\d_])"
_SEP = rf"(?:\s*;\s*|\s*,\s*{_AND}\s+|\s*,\s*|\s+{_AND}\s+)"
# "4,8,15": numbers packed with commas, not an English thousands number ("1,500,000")
_PACKED = r"(?<![\w.,/:#@])-?(?=\d+(?:,\d{3})*,(?!\d{3}(?!\d)))\d+(?:,\d+)+(?![.,]?\d)(?![^\W\d_])"
_LIST = rf"({_TOKEN}(?:{_SEP}{_TOKEN})+|{_PACKED})(?![^\W\d_]|\s*[-+*/×÷^%])"
_OF = (r"(?:\s+(?:of|from|for|von|aus|der|de|des|du|d'|di|dei|delle|degli|tra|fra|entre|van|da|dos|das|do|los|las|"
       r"les|the|die|i|le|os|as|het))*")
_NUMBERS_WORD = (r"(?:\s+(?:numbers|values|zahlen|werte|nombres|valeurs|numeros|valores|numeri|valori|getallen|"
                 r"waarden|these|those|diesen|ces))*")
_LEAD = rf"{_OF}{_NUMBERS_WORD}{_OF}\s*:?\s*"
_AVERAGE = re.compile(
    rf"\b(?:average|avg|mean|durchschnitt|mittelwert|schnitt|moyenne|media|promedio|gemiddelde){_LEAD}{_LIST}",
    re.IGNORECASE,
)
_SUM = re.compile(
    rf"\b(?:(?:the\s+)?(?:sum|total)|somme|summe|suma|soma|somma|som|totaal|"
    r"add(?:\s+(?:these|those|them|the\s+following))?(?:\s+up|\s+together)?(?:\s+for\s+(?:me|us))?|"
    rf"sum\s+up|total\s+up|combine|tally(?:\s+up)?|addiere|addier|additionne[rz]?|sumar?|sommare|somar|some|tel\s+op){_LEAD}{_LIST}",
    re.IGNORECASE,
)
_PRODUCT = re.compile(
    rf"\b(?:product|produkt|produit|producto|prodotto|produto|multiply|multipliziere|multiplizier|multiplie[rz]?|"
    rf"multiplica[r]?|moltiplica(?:re)?|multiplique|vermenigvuldig){_LEAD}{_LIST}",
    re.IGNORECASE,
)
_BY = r"(?:by|mit|par|por|per|met|with)"
_MULTIPLY_BY = re.compile(
    rf"\b(?:multiply|multipliziere|multiplie[rz]?|multiplica[r]?|moltiplica(?:re)?|multiplique|vermenigvuldig)\s+"
    rf"({_TOKEN})\s+{_BY}\s+({_TOKEN})",
    re.IGNORECASE,
)
_DIVIDE_BY = re.compile(
    rf"\b(?:divide|teile|teil|divise[rz]?|divide|dividir|dividi|dividere|divida|deel)\s+({_TOKEN})\s+"
    r"(?:by|durch|par|por|entre|per|door)\s+" + rf"({_TOKEN})",
    re.IGNORECASE,
)
# "100 geteilt durch 8", "3 fois 4", "7 más 5": operator words of the other languages
_OPERATORS = (
    (r"geteilt\s+durch|dividiert\s+durch|divise\s+par|dividido\s+(?:por|entre)|diviso(?:\s+(?:per|da))?|"
     r"gedeeld\s+door", "/"),
    (r"mal|multipliziert\s+mit|fois|multiplie\s+par|multiplicado\s+por|moltiplicato\s+per|vezes|keer|maal", "*"),
    (r"mas|piu|mais", "+"),
    (r"weniger|moins|menos|meno", "-"),
)
_BINARY = [
    (re.compile(rf"({_TOKEN})\s+(?:{words})\s+({_TOKEN})(?!\s*[^\W\d_]*\s*[*/×÷^])", re.IGNORECASE), op)
    for words, op in _OPERATORS
]


def _signed(token: str, comma_decimal: bool) -> str | None:
    value = number(token.lstrip("-"), comma_decimal)
    return None if value is None else ("-" if token.startswith("-") else "") + value


# a chain of two or more operator words: "12 plus 30 minus 5", "12% of 250 plus 250", "3 mal 4 plus 2"
_CHAIN_OPERATORS = (
    (r"plus|mas|piu|mais", "+"), (r"minus|moins|menos|meno|weniger", "-"),
    (r"times|multiplied\s+by|mal|fois|vezes|keer|maal", "*"),
    (r"divided\s+by|geteilt\s+durch|divise\s+par|dividido\s+(?:por|entre)|diviso\s+per|gedeeld\s+door", "/"),
)
_OPERATOR_WORD = "|".join(words for words, _ in _CHAIN_OPERATORS)
_TERM = (r"(?:(?<![\w.,/:#@])-?\d+(?:[.,]\d+)*(?![.,]?\d)\s*(?:%|percent|prozent|pour\s*cent|por\s*ciento)\s+"
         rf"(?:of|von|de|du|di|van)\s+{_TOKEN}|{_TOKEN})")
_WORD_CHAIN = re.compile(rf"{_TERM}(?:\s+(?:{_OPERATOR_WORD})\s+{_TERM})+", re.IGNORECASE)


def _chain_expression(chain: str, comma_decimal: bool) -> str | None:
    parts = re.split(rf"\s+({_OPERATOR_WORD})\s+", chain, flags=re.IGNORECASE)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(next(op for words, op in _CHAIN_OPERATORS if re.fullmatch(words, part, re.IGNORECASE)))
            continue
        values = [_signed(t, comma_decimal) for t in re.findall(r"-?\d+(?:[.,]\d+)*", part)]
        if None in values:
            return None
        out.append(f"({values[0]} / 100 * {values[1]})" if len(values) == 2 else str(values[0]))
    return " ".join(out)


def _numbers(listed: str, comma_decimal: bool) -> list[str] | None:
    values = []
    for token in re.findall(r"-?\d+(?:[.,]\d+)*", listed):
        digits = token.lstrip("-")
        if not comma_decimal and "," in token and number(digits, False) != digits.replace(",", ""):
            parts = token.split(",")  # "4,8,15" in English: a list
            values.extend(parts)
            continue
        value = _signed(token, comma_decimal)
        if value is None:
            return None
        values.append(value)
    return values if len(values) >= 2 else None


#: an operation after the list: the list's sum, product or average is not the whole answer
THEN_MORE = re.compile(
    r"[^.?!]{0,30}?(?:\b(?:then|and\s+then|afterwards|divide[ds]?|multipl\w*|times|minus|subtract\w*|plus|"
    r"squared|fois|mal|durch|geteilt|moins|weniger|menos|meno|divis\w*)\b|[-+*/×÷^])",
    re.IGNORECASE,
)


def list_then_more(words: str) -> bool:
    """Does an operation follow a listed sum, product or average ("add up 3, 4 and 5 then divide by 2")?
    Then the list's value is not the answer, and no part of the words is computed alone."""
    text = fold(words)
    for pattern in (_AVERAGE, _PRODUCT, _SUM):
        match = pattern.search(text)
        if match and THEN_MORE.match(text, match.end()):
            return True
    return False


def list_arithmetic(words: str) -> str | None:
    """The average, sum or product of the listed numbers, or two numbers and an operator word."""
    text = fold(words)
    comma_decimal = continental(text)
    for chained in _WORD_CHAIN.finditer(text):
        operators = len(re.findall(rf"\s(?:{_OPERATOR_WORD})\s", chained.group(0), re.IGNORECASE))
        if operators >= 2 or re.search(r"\d\s*(?:%|[a-z]+)\s+(?:of|von|de|du|di|van)\s", chained.group(0)):
            return _chain_expression(chained.group(0), comma_decimal)  # one operator alone: _BINARY below
    for pattern, kind in ((_AVERAGE, "average"), (_PRODUCT, "product"), (_SUM, "sum")):
        match = pattern.search(text)
        if match and (values := _numbers(match.group(1), comma_decimal)):
            if kind == "average":
                return f"({' + '.join(values)}) / {len(values)}"
            return (" * " if kind == "product" else " + ").join(values)
    for pattern, op in ((_MULTIPLY_BY, "*"), (_DIVIDE_BY, "/"), *_BINARY):
        match = pattern.search(text)
        if match:
            a, b = _signed(match.group(1), comma_decimal), _signed(match.group(2), comma_decimal)
            return None if a is None or b is None else f"({a}) {op} ({b})"
    return None
