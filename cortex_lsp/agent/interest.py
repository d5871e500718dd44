"""Simple and compound interest stated in words, as a calculator expression that shows the formula
("round(1500 * (1 + 2.5 / 100 * 4), 2)", "800 * (1 + 5 / 100) ** 2").

The words must say which interest ("simple", "compound(ed)", "Zinseszins", "interés compuesto", …;
without it the two readings differ, and nothing is computed), and hold exactly one principal, one
rate and one duration in years or months. Compounding is yearly unless the words say monthly,
quarterly, half-yearly, weekly or daily. A rate "per month" is a monthly rate. The answer is the
interest, or the final amount when the words ask what one will have ("how much will I have", "total",
"montante final", "am Ende").
"""

from __future__ import annotations

import re

from cortex_lsp.agent.lazy_re import lazy
from cortex_lsp.agent.money import AFTER_AMOUNT, figures
from cortex_lsp.agent.numtext import NUM, continental, fold, tidy

_INTEREST = lazy(
    r"\b(?:interest|interes|interets?|zins\w*|verzinst|interesse|interessi|juros?|rente)\b", re.IGNORECASE)
_COMPOUND = lazy(
    r"\b(?:compound\w*|zinseszins\w*|compuestos?|compostos?|composes?|compose|samengestelde|"
    r"capitaliz\w*|capitalis\w*|kapitalisiert)\b",
    re.IGNORECASE,
)
_SIMPLE = lazy(r"\b(?:simple|simples|einfachen?|einfache|semplice|semplici|enkelvoudige?)\b", re.IGNORECASE)
_YEARS = r"(?:years?|yrs?|jahre?n?|jahr|ans?|annees?|anos?|anni|anno|jaar|jaren)"
_MONTHS = r"(?:months?|monate?n?|monat|mois|meses|mes|mesi|mese|maanden?)"
_DURATION = lazy(rf"{NUM}\s*(?:({_YEARS})|({_MONTHS}))\b", re.IGNORECASE)
_PER_MONTH_RATE = lazy(
    r"\s*(?:(?:per|a|an|each|every|pro|par|al|ao|por)\s+(?:month|monat|mois|mes|mese|maand)|monthly|mensual|"
    r"mensuel|monatlich|mensile|mensal|maandelijks)\b",
    re.IGNORECASE,
)
_FREQUENCIES = (
    (12, r"monthly|mensual\w*|monatlich\w*|mensuel\w*|mensil\w*|mensal\w*|maandelijks|every\s+month|each\s+month"),
    (4, r"quarterly|quartalsweise|vierteljahrlich\w*|trimestriel\w*|trimestral\w*|trimestrale|per\s+kwartaal"),
    (2, r"semi-?annual\w*|half-?yearly|twice\s+a\s+year|halbjahrlich\w*|semestriel\w*|semestral\w*|semestrale|"
        r"halfjaarlijks"),
    (365, r"daily|taglich\w*|quotidien\w*|diari[oa]\w*|giornalier\w*|dagelijks"),
    (52, r"weekly|wochentlich\w*|hebdomadaire\w*|semanal\w*|settimanale|wekelijks"),
)
_TOTAL = lazy(
    r"\bhow\s+much\s+(?:will|would|do|does|did|shall)\s+(?:i|you|we|it|they|he|she|that)\s+"
    r"(?:have|get|end\s+up|be\s+worth|grow|receive)|\b(?:total|in\s+all|final|end\s+up|balance|grow\s+to|"
    r"worth|future\s+value|endbetrag|endkapital|am\s+ende|insgesamt|gesamt|habe\s+ich|montant|au\s+bout|aurai|"
    r"au\s+total|monto|tendre|tendra|saldo|montante|avro|avra|totale|terei|tera|totaal|eindbedrag|heb\s+ik)\b",
    re.IGNORECASE,
)


_INTEREST_ASKED = lazy(
    r"\bhow\s+much\s+(?:in\s+)?interest|\binterest\s+(?:earned|amount|paid|do\s+i|will\s+i)|"
    r"\bwhat(?:'s|\s+is|\s+are)\s+the\s+interest|\bwie\s*viele?\s+zinsen|\bcombien\s+d'interets|"
    r"\bcuanto\s+(?:de\s+)?interes|\bquanto\s+(?:di\s+)?interess|\bquantos?\s+(?:de\s+)?juros|\bhoeveel\s+rente",
    re.IGNORECASE,
)
_AFTER_TIME = lazy(r"\b(?:after|nach|apres|despues\s+de|dopo|depois\s+de|na)\s+\d", re.IGNORECASE)


def _frequency(text: str) -> int:
    for per_year, words in _FREQUENCIES:
        if re.search(rf"\b(?:{words})\b", text, re.IGNORECASE):
            return per_year
    return 1


def interest(words: str) -> str | None:
    """The interest, or the final amount, the words ask for; ``None`` unless they say which interest
    and give one principal, one rate and one duration."""
    text = fold(words)
    if not _INTEREST.search(text) and not _COMPOUND.search(text):
        return None
    compound, simple = bool(_COMPOUND.search(text)), bool(_SIMPLE.search(text))
    if compound == simple:
        return None
    durations = list(_DURATION.finditer(text))
    found = figures(text, continental(text))
    if len(durations) != 1 or not found:
        return None
    duration = durations[0]
    rates = [f for f in found if f.percent]
    principals = [f for f in found if not f.percent and f.start != duration.start(1)]
    if len(rates) != 1 or len(principals) != 1 or not AFTER_AMOUNT.match(text, principals[0].end):
        return None
    p, r = principals[0].value, rates[0].value
    span = next(f for f in found if f.start == duration.start(1)).value
    months = duration.group(3) is not None
    monthly_rate = bool(_PER_MONTH_RATE.match(text, rates[0].end))
    # the interest when asked for; the final amount when asked for ("how much will I have", "after
    # 3 years") or when no interest is named ("1000 at 6% compounded monthly"); else the interest
    total = not _INTEREST_ASKED.search(text) and (
        bool(_TOTAL.search(text) or _AFTER_TIME.search(text)) or not _INTEREST.search(text))
    if monthly_rate:
        periods = span if months else f"{span} * 12"
        if not compound and not total:
            return tidy(f"{p} * {r} / 100 * {periods}", 2)
        growth = f"(1 + {r} / 100) ** ({periods})" if compound else f"(1 + {r} / 100 * {periods})"
    elif compound:
        per_year = _frequency(text)
        years = f"{span} / 12" if months else span
        if per_year == 1:
            growth = f"(1 + {r} / 100) ** ({years})" if months else f"(1 + {r} / 100) ** {span}"
        elif months and per_year == 12:
            growth = f"(1 + {r} / 100 / 12) ** {span}"
        else:
            growth = f"(1 + {r} / 100 / {per_year}) ** ({per_year} * {years})"
    else:
        years = f"{span} / 12" if months else span
        if not total:
            return tidy(f"{p} * {r} / 100 * {years}", 2)
        growth = f"(1 + {r} / 100 * {years})"
    return tidy(f"{p} * {growth}" if total else f"{p} * {growth} - {p}", 2)
