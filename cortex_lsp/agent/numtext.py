"""Numbers as people write them, for the word-arithmetic parsers: accents folded away, decimal commas
("3,5 Stunden") and thousands separators ("1,200" in English, "1.200" in German), and results tidied
(a float's last-digit noise rounded off, money to cents) without hiding the formula.
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from cortex_lsp.tools.calculator import CalcError, evaluate

#: a number as written: digits with "." or "," inside, never glued to a word or a path before it
NUM = r"(?<![\w.,/:#@-])(\d+(?:[.,]\d+)*)(?![.,]?\d)"


def named_number(name: str) -> str:
    """:data:`NUM` with its group named ``name``."""
    return NUM.replace("(\\d+", f"(?P<{name}>\\d+", 1)


#: a percentage in any of the languages the parsers read
PERCENT_SIGN = (r"\s*(?:%|(?:percent|per\s*cent|pct|prozent|pour\s*cent|por\s*ciento|per\s*cento|por\s*cento|"
                r"procent|porciento)(?!\w))")
CURRENCY = (r"(?:[$€£¥]|\b(?:euros?|eur|dollars?|bucks|usd|gbp|pounds?|quid|reais|real|francs?|chf|yen|"
            r"pesos?|kr|sek|nok|dkk|zloty|zl|pln|cents?)\b)")

# words of German, French, Spanish, Italian, Portuguese or Dutch that English text hardly has: where
# they are, "3,5" is three and a half and "1.200" twelve hundred
_CONTINENTAL = re.compile(
    r"\b(?:und|von|wie|viele|viel|sind|ist|mit|fur|pro|der|das|dem|den|zu|je|auf|bei|ein|eine|einem|einer|"
    r"dans|combien|le|la|les|de|des|du|et|en|avec|une|sur|pour|quel|quelle|est|sont|"
    r"el|los|las|y|hay|cuantos|cuantas|cuanto|cuanta|con|del|al|es|un|una|uno|"
    r"il|di|quanti|quante|quanto|sono|ci|della|dei|nel|"
    r"os|quantos|quantas|sao|tem|com|um|uma|em|ao|"
    r"het|een|van|hoeveel|zijn|naar|met|voor|op|er|wat)\b",
    re.IGNORECASE,
)


def fold(text: str) -> str:
    """``text`` without accents ("centimètres" → "centimetres"), "º" as "°", one space between words."""
    text = text.replace("º", "°").replace("’", "'")
    decomposed = unicodedata.normalize("NFD", text)
    return " ".join("".join(c for c in decomposed if unicodedata.category(c) != "Mn").split())


def continental(text: str) -> bool:
    """Whether ``text`` (folded) reads as German, French, Spanish, Italian, Portuguese or Dutch."""
    return len(_CONTINENTAL.findall(text)) >= 1 or "€" in text


def number(token: str, comma_decimal: bool = False) -> str | None:
    """The written number as a plain decimal ("3,5" → "3.5", "1,200" → "1200"); ``None`` when it is no
    single number (a version such as "3.12.1")."""
    if "," in token and "." in token:
        last = max(token.rfind(","), token.rfind("."))
        whole, frac = token[:last], token[last + 1:]
        if not re.fullmatch(r"\d{1,3}(?:[.,]\d{3})*", whole) or len({*re.sub(r"\d", "", whole)}) > 1:
            return None
        if token[last] in re.sub(r"\d", "", whole):
            return None
        text = re.sub(r"[.,]", "", whole) + "." + frac
    elif token.count(",") + token.count(".") > 1:
        if not re.fullmatch(r"\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*", token):
            return None
        text = re.sub(r"[.,]", "", token)
    elif "," in token:
        grouped = re.fullmatch(r"[1-9]\d{0,2},\d{3}", token)
        text = token.replace(",", "" if grouped and not comma_decimal else ".")
    elif "." in token:
        grouped = re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", token)
        text = token.replace(".", "") if grouped and comma_decimal else token
    else:
        text = token
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return _plain(value)


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def decimal_text(value: Fraction) -> str | None:
    """``value`` written out exactly in at most 12 significant digits, else ``None`` (1/3, 1/0.45359237)."""
    den = value.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    if den != 1:
        return None
    text = _plain(Decimal(value.numerator) / Decimal(value.denominator))
    return text if len(text.replace(".", "").replace("-", "").strip("0")) <= 12 else None


def tidy(expression: str, decimals: int | None = None) -> str | None:
    """``expression`` as the calculator will show it: wrapped in ``round(…, n)`` where the value has
    float noise (``0.07 * 100``) or, with ``decimals``, more places than those (money: 2). ``None``
    when the calculator cannot evaluate it."""
    try:
        value = evaluate(expression)
    except (CalcError, ZeroDivisionError, OverflowError, ValueError):
        return None
    if isinstance(value, complex):
        return None
    if isinstance(value, int) or value == 0:
        return expression
    if decimals is None:
        decimals = max(0, 6 - math.floor(math.log10(abs(value))))
    if round(value, decimals) == value:
        return expression
    return f"round({expression}, {decimals})"


def denoise(expression: str) -> str:
    """``expression`` wrapped in ``round(…, n)`` only where its value is a short decimal plus float
    noise (``7 / 100 * 1250`` = 87.50000000000001); a repeating decimal (10 / 3) stays as it is, and
    so does an expression the calculator refuses (it says why when it runs)."""
    try:
        value = evaluate(expression)
    except (CalcError, ZeroDivisionError, OverflowError, ValueError):
        return expression
    if not isinstance(value, float) or not math.isfinite(value):
        return expression
    for decimals in range(10):
        rounded = round(value, decimals)
        if rounded == value:
            return expression
        if abs(rounded - value) <= 1e-12 * max(1.0, abs(value)):
            return f"round({expression}, {decimals})"
    return expression
