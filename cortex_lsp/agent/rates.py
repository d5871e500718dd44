"""Rates, prices each and containers stated in words, as a calculator expression:

* a rate times an amount of what it is per: "I earn 18 an hour, how much for 37.5 hours",
  "1.80 per litre, how much for 45 litres", "15 € pro Stunde … 20 Stunden", "85 a night … 4 nights";
* items at a price each: "4 tickets for 12.50 each", "3 cafés à 2,50 € chacun", "5 Brötchen zu je 0,80 €";
* containers needed: "how many boxes of 12 do I need for 100 eggs", "how many 12-egg boxes for 100
  eggs" → ceil(100 / 12) (whole containers that can be filled: floor).

The rate's unit and the amount's unit must be the same thing ("per hour" and "hours"), in any of
English, German, French, Spanish, Italian, Portuguese and Dutch.
"""

from __future__ import annotations

import re

from cortex_lsp.agent.lazy_re import lazy
from cortex_lsp.agent.numtext import CURRENCY, NUM, continental, fold, number
from cortex_lsp.agent.unit_names import ABBREVIATIONS, WORDS
from cortex_lsp.agent.units import unit_named

# things a rate is per that are no unit of measure
_NOUNS = {
    "month": "month|months|monat|monate|monaten|mois|mes|meses|mese|mesi|maand|maanden",
    "year": "year|years|jahr|jahre|jahren|ans|annee|annees|ano|anos|anno|anni|jaar|jaren",
    "night": "night|nights|nacht|nachte|nachten|nuit|nuits|noche|noches|notte|notti|noite|noites",
    "person": "person|persons|people|personen|personne|personnes|persona|personas|persone|pessoa|pessoas|persoon|"
              "head|guest|guests|gast|gaste",
    "piece": "piece|pieces|item|items|unit|units|stuck|stueck|pieza|piezas|unidad|unidades|pezzo|pezzi|unita|peca|"
             "pecas|unidade|unidades|stuk|stuks",
    "page": "page|pages|seite|seiten|pagina|paginas|pagine",
    "word": "word|words|wort|worter|mot|mots|palabra|palabras|parola|parole|palavra|palavras|woord|woorden",
    "lesson": "lesson|lessons|class|classes|session|sessions|shift|shifts|schicht|schichten",
}
_NOUN_OF = {w: key for key, words in _NOUNS.items() for w in words.split("|")}


def _alternation(names: list[str]) -> str:
    return "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in sorted(names, key=len, reverse=True))


_THING = (rf"(?:(?-i:{_alternation(list(ABBREVIATIONS))})|{_alternation([*WORDS, *_NOUN_OF])})"
          r"(?![^\W_]|/\w)")
_PER = r"(?:an?|per|each|every|/|pro|je|par|de\s+l'|la|le|por|al|all'|l'|ao)"
_RATE = lazy(
    rf"(?:[$€£]\s*)?{NUM}\s*(?:(?:{CURRENCY}|(?P<what>{_THING}))\s*)?(?P<sep>{_PER})\s*(?P<per>{_THING})",
    re.IGNORECASE,
)
_AMOUNT = lazy(rf"{NUM}\s*(?P<thing>{_THING})", re.IGNORECASE)


def _key(text: str) -> str | None:
    text = " ".join(text.lower().split()) if text not in ABBREVIATIONS else text
    if text in _NOUN_OF:
        return _NOUN_OF[text]
    unit = unit_named(text)
    return unit.key if unit else None


def _rates(text: str) -> list[re.Match[str]]:
    """The rates in ``text`` ("18 an hour", "8 hours a day"); not a unit such as "km/h"."""
    found = []
    for rate in _RATE.finditer(text):
        per = _key(rate.group("per"))
        if per is None or (rate.group("what") and _key(rate.group("what")) == per):
            continue
        if rate.group("what") and unit_named(text[rate.start("what"):rate.end("per")]):
            continue  # "100 km/h", "60 miles per hour": one unit, not a rate
        if rate.group("sep").lower() == "a" and rate.group("per").lower().endswith("s"):
            continue  # "10 millas a kilómetros": a conversion; "85 a night": a rate
        found.append(rate)
    return found


def has_rate(words: str) -> bool:
    """Whether the words state a rate ("8 hours a day"): then "how many hours in 30 days" asks the rate."""
    return bool(_rates(fold(words)))


def rate_times_amount(text: str, comma_decimal: bool) -> str | None:
    for rate in _rates(text):
        per = _key(rate.group("per"))
        amounts = [a for a in _AMOUNT.finditer(text)
                   if _key(a.group("thing")) == per and not (rate.start() <= a.start() < rate.end())]
        if len(amounts) != 1:
            continue
        r, n = number(rate.group(1), comma_decimal), number(amounts[0].group(1), comma_decimal)
        if r is not None and n is not None:
            return f"({r}) * ({n})"
    return None


_EACH_AFTER = (r"(?:each|apiece|a\s+piece|per\s+(?:piece|item|unit)|chacune?|(?:la\s+)?piece|l'unite|l'une?|"
               r"cada(?:\s+un[oa])?|la\s+unidad|ciascun[oa]|l'un[oa]|cadaun[oa]|al\s+pezzo|cada\s+uma?|a\s+unidade|"
               r"elk|per\s+stuk|pro\s+stuck|das\s+stuck|je\s+stuck)\b")
_EACH = lazy(
    rf"{NUM}\s+(?:[^\W\d]+\s+){{1,3}}?(?:at|for|@|costing|a|zu(?:\s+je)?|je|de|por|da|per|voor|van|"
    rf"(?:that|which)\s+cost|kosten|kostet|coutant|que\s+cuestan|che\s+costano|que\s+custam)\s+"
    rf"(?:[$€£]\s*)?{NUM}\s*(?:{CURRENCY}\s*)?{_EACH_AFTER}",
    re.IGNORECASE,
)
_EACH_JE = lazy(
    rf"{NUM}\s+(?:[^\W\d]+\s+){{1,3}}?zu\s+je\s+(?:[$€£]\s*)?{NUM}(?:\s*{CURRENCY})?", re.IGNORECASE)

_HOW_MANY = r"(?:how\s+many|wie\s*viele|combien\s+de|cuant[oa]s|quant[ie]|quant[oa]s|hoeveel)"
_FOR = r"(?:for|to\s+(?:hold|fit|pack|carry|seat|transport|store|take)|para|pour|fur|per|voor|um)"
_CONTAINER = lazy(
    rf"\b{_HOW_MANY}\s+(?:full\s+)?(?:[^\W\d]+\s+){{0,1}}[^\W\d]+\s+(?:of|with|holding|that\s+holds?|de|da|di|"
    rf"mit|met|a|zu)\s+{NUM}(?:\s+[^\W\d]+)?(?:\s+[^\W\d']+){{0,4}}?\s+{_FOR}\s+{NUM}",
    re.IGNORECASE,
)
_CONTAINER_SIZED = lazy(
    rf"\b{_HOW_MANY}\s+{NUM}-[^\W\d]+\s+[^\W\d]+(?:\s+[^\W\d']+){{0,4}}?\s+{_FOR}\s+{NUM}", re.IGNORECASE)
_FILLED = lazy(r"\b(?:full|fill|filled|complete|voll\w*|pleine?s?|rempli\w*|llenas?|llenos?|pien[ie]|"
                     r"cheias?|cheios?|volle)\b", re.IGNORECASE)


def rates_and_prices(words: str) -> str | None:
    """A rate times an amount, items times a price each, or the containers needed; else ``None``."""
    text = fold(words)
    comma_decimal = continental(text)
    if len(re.findall(NUM, text)) != 2:
        return None  # "2 rooms at 85 a night for 3 nights": more than one product; left to the model
    match = _CONTAINER.search(text) or _CONTAINER_SIZED.search(text)
    if match:
        size, count = number(match.group(1), comma_decimal), number(match.group(2), comma_decimal)
        if size and count and float(size) > 0:
            return f"{'floor' if _FILLED.search(text) else 'ceil'}({count} / {size})"
    match = _EACH.search(text) or _EACH_JE.search(text)
    if match:
        items, price = number(match.group(1), comma_decimal), number(match.group(2), comma_decimal)
        if items and price:
            return f"({items}) * ({price})"
    return rate_times_amount(text, comma_decimal)
