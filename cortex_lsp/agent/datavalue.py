"""Answers from a data file computed in code: a value at a key (JSON, YAML, TOML) or in a CSV row and
column, and a CSV column's count, distinct values, total, average, highest or lowest.

A small model misreads a value in a nested JSON object and cannot count or add a column, so when the
user named one data file and asks about a key or a column in it, :func:`answer_from_data` finds it in
the parsed file and words the answer with the numbers it used. It returns ``None`` when the question
names no key or column of the file (or the file does not parse): the model then answers from the text.
Pure: no I/O, the file's text comes from the ``read_file`` tool.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from cortex_lsp.agent.numtext import fold

DATA_SUFFIXES = frozenset({".json", ".csv", ".tsv", ".yaml", ".yml", ".toml"})
#: distinct values listed in a count answer
SHOWN_VALUES = 12
#: numbers written out in a total or average answer
SHOWN_TERMS = 12

_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\b|\bwie\s+viele\b|\bcombien\b|\bcu[aá]nt[oa]s\b"
                    r"|\bquant[oa]s\b|\bquant[ie]\b|\bile\b|\bhoeveel\b|\bhur\s+många\b", re.I)
_TOTAL = re.compile(r"\btotal\b|\bsum\b|\badd(?:s|ed)?\s+up\b|\baltogether\b|\bin\s+all\b|\boverall\b"
                    r"|\bcombined\b|\b(?:gesamt)?summe\b|\binsgesamt\b|\btotale\b|\btotalt\b|\bau\s+total\b|\ben\s+total\b"
                    r"|\bsomme\b|\bsuma\b|\bsomma\b|\btotaal\b"
                    # the verbs: "¿cuánto suman las ventas?", "quanto somam", "quanto sommano", "additionne"
                    r"|\bsuma[nr]\b|\bsumen\b|\bsoma[mr]?\b|\bsomm(?:ano|are|ate)\b|\baddition\w*\b|\bsummier\w*\b"
                    r"|\bsumm(?:a|an|era)\b|\bopgeteld\b|\bsumuj\w*\b", re.I)
_AVERAGE = re.compile(r"\baverage\b|\bavg\b|\bmean\b|\bdurchschnitt\b|\bmoyenne\b|\bpromedio\b|\bmedia\b"
                      r"|\bm[eé]dia\b|\bgemiddelde\b|\bśrednia\b", re.I)
_MAX = re.compile(r"\b(?:highest|largest|biggest|max(?:imum)?|most|top|greatest|best|höchste|plus\s+grand|mayor)\b",
                  re.I)
_MIN = re.compile(r"\b(?:lowest|smallest|min(?:imum)?|least|fewest|worst|cheapest|kleinste|plus\s+petit|menor)\b", re.I)
_ROWS = re.compile(r"\b(?:rows?|entries|entry|records?|lines?|items?|people|persons?|users?|customers?)\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")
_ABOVE = re.compile(r"\b(?:above|over|more\s+than|greater\s+than|higher\s+than|at\s+least|>=?)\s*(-?\d+(?:\.\d+)?)",
                    re.I)
_BELOW = re.compile(r"\b(?:below|under|less\s+than|lower\s+than|at\s+most|<=?)\s*(-?\d+(?:\.\d+)?)", re.I)


def is_data_file(path: str) -> bool:
    return PurePosixPath(path.lower()).suffix in DATA_SUFFIXES


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", fold(text))  # "février" is one word, "fevrier"
    return _WORD.findall(spaced.lower().replace("_", " ").replace("ł", "l"))


#: field names as other languages ask for them (German, French, Spanish, Italian, Portuguese, Dutch,
#: Swedish), read as the English name a data file uses
_FIELD_WORDS = {
    "port": ("poort", "puerto", "porta", "porte", "porten"),
    "name": ("naam", "nombre", "nome", "nom", "namn"),
    "host": ("hote", "anfitrion"),
    "amount": ("betrag", "montant", "importe", "importo", "importi", "importes", "bedrag", "valor", "belopp", "summe"),
    "region": ("regione", "regio", "regiao", "regionen"),
    "month": ("monat", "mois", "mes", "mese", "maand", "manad"),
    "price": ("preis", "prix", "precio", "prezzo", "preco", "prijs", "pris"),
    "retries": ("wiederholungen", "reintentos", "tentativi", "tentativas", "pogingen"),
    "version": ("versione", "versao", "versie"),
    "timeout": ("zeitlimit", "tiempo"),
}
_ASKED_AS = {other: english for english, others in _FIELD_WORDS.items() for other in others}

#: month names in those languages and Polish (accents folded), read as the English name, whose start a
#: data file's "Feb" or "February" is
_MONTH_WORDS = {
    "january": "enero janvier gennaio janeiro januari januar styczen stycznia styczniu",
    "february": "febrero fevrier febbraio fevereiro februari februar luty lutego lutym",
    "march": "marzo mars marco maart marz marzec marca marcu",
    "april": "abril avril aprile kwiecien kwietnia kwietniu",
    "may": "mayo mai maggio maio mei maj maja maju",
    "june": "junio juin giugno junho juni czerwiec czerwca czerwcu",
    "july": "julio juillet luglio julho juli lipiec lipca lipcu",
    "august": "agosto aout augustus augusti sierpien sierpnia sierpniu",
    "september": "septiembre septembre settembre setembro wrzesien wrzesnia wrzesniu",
    "october": "octubre octobre ottobre outubro oktober pazdziernik pazdziernika pazdzierniku",
    "november": "noviembre novembre novembro listopad listopada listopadzie",
    "december": "diciembre decembre dicembre dezembro dezember grudzien grudnia grudniu",
}
_MONTH_AS = {other: english for english, others in _MONTH_WORDS.items() for other in others.split()}


def _mentioned(name: str, question: list[str]) -> bool:
    """Every word of ``name`` is in the question (a plural there counts: "regions" names "region"; so
    does the word in another language: "poort", "puerto" name "port")."""
    words = _words(name)
    if not words:
        return False
    asked = set(question) | {w[:-1] for w in question if w.endswith("s")} | {
        w[:-2] for w in question if w.endswith("es")}
    asked |= {_ASKED_AS[w] for w in asked if w in _ASKED_AS}
    return all(w in asked for w in words)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().replace(",", "").lstrip("$€£").rstrip("%")
    try:
        return float(text)
    except ValueError:
        return None


def _fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _leaves(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, (*prefix, str(key)))
    elif prefix:
        yield prefix, value


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _mapping_answer(path: str, data: Any, question: list[str]) -> str | None:
    """The leaf whose key (and as much of its path as possible) the question names."""
    best: tuple[int, int, tuple[str, ...], Any] | None = None
    for keys, value in _leaves(data):
        if not _mentioned(keys[-1], question):
            continue
        named = sum(1 for k in keys[:-1] if _mentioned(k, question))
        rank = (named, -len(keys))
        if best is None or rank > best[:2]:
            best = (*rank, keys, value)
    if best is None:
        return None
    keys, value = best[2], best[3]
    return f"In {path}, `{'.'.join(keys)}` is {_shown(value)}."


@dataclass
class _Table:
    path: str
    columns: list[str]
    rows: list[dict[str, str]]

    def numbers(self, column: str) -> list[float]:
        return [n for row in self.rows if (n := _number(row.get(column, ""))) is not None]

    def numeric(self) -> list[str]:
        return [c for c in self.columns if self.rows and len(self.numbers(c)) == len(self.rows)]

    def label(self, row: dict[str, str]) -> str:
        """A row's name: its first column that is not a number."""
        for column in self.columns:
            if _number(row.get(column, "")) is None and row.get(column):
                return f"{row[column]}"
        return ", ".join(f"{c} {row.get(c, '')}" for c in self.columns)


def _table(path: str, text: str) -> _Table | None:
    dialect = "excel-tab" if path.lower().endswith(".tsv") else "excel"
    reader = csv.DictReader(io.StringIO(text.strip() + "\n"), dialect=dialect)
    columns = [c.strip() for c in (reader.fieldnames or []) if c and c.strip()]
    if not columns:
        return None
    rows = [{(k or "").strip(): (v or "").strip() for k, v in row.items() if k} for row in reader]
    rows = [r for r in rows if any(r.values())]
    return _Table(path, columns, rows)


def _terms(values: list[float]) -> str:
    shown = " + ".join(_fmt(v) for v in values[:SHOWN_TERMS])
    return shown + (f" + … ({len(values) - SHOWN_TERMS} more)" if len(values) > SHOWN_TERMS else "")


def _asked(question: list[str]) -> set[str]:
    return set(question) | {w[:-1] for w in question if w.endswith("s")}


def _names(value: str, asked: set[str], question: list[str]) -> bool:
    """A cell value the question names: all its words are in it, or a short value is the start of a
    word in it ("Jan" in "january", "Feb" in "februar", "févr" in "février")."""
    words = _words(value)
    if not words or (_number(value) is None and all(w in asked for w in words)):
        return bool(words)
    return len(words) == 1 and len(words[0]) >= 3 and _number(value) is None and any(
        len(q) > len(words[0]) and q.startswith(words[0]) for q in question)


def _picks(table: _Table, question: list[str]) -> dict[str, list[str]]:
    """Per column, the cell values the question names (in the order they are first seen)."""
    asked = _asked(question)
    picks: dict[str, list[str]] = {}
    for column in table.columns:
        for row in table.rows:
            value = row.get(column, "")
            if value and _number(value) is None and _names(value, asked, question) \
                    and value not in picks.get(column, []):
                picks.setdefault(column, []).append(value)
    return picks


def _filtered(table: _Table, question: list[str]) -> tuple[_Table, str]:
    """The rows a cell value the question names picks out ("North's amounts", "the Jan total")."""
    picks = _picks(table, question)
    rows = [r for r in table.rows if all(r.get(c) in values for c, values in picks.items())]
    if not picks or not rows or len(rows) == len(table.rows):
        return table, ""
    where = " and ".join(f"{c} {' or '.join(sorted(v))}" for c, v in picks.items())
    return _Table(table.path, table.columns, rows), f" for {where}"


_COMPARE = re.compile(r"\b(?:more|less|fewer|difference|differ|than|beat|beats|compared?|versus|vs\.?|minus|"
                      r"mehr|weniger|unterschied|plus\s+que|moins|diff[ée]rence|m[aá]s\s+que|menos|diferencia|"
                      r"pi[uù]\s+di|differenza|verschil|meer\s+dan)\b", re.IGNORECASE)


def _comparison(table: _Table, question: list[str], raw: str, numeric: list[str], named: list[str]) -> str | None:
    """"how much more did South sell than North", "by how much did January beat February": the totals
    (or averages) of two groups of rows that values of one column name, and their difference."""
    if not _COMPARE.search(raw):
        return None
    target = next((c for c in named if c in numeric), numeric[0] if len(numeric) == 1 else None)
    groups = [(c, v) for c, values in _picks(table, question).items() if len(values) == 2 for v in values]
    if target is None or len(groups) != 2:
        return None
    column = groups[0][0]
    # the first value named in the question is the one compared
    order = sorted((raw.lower().find(v.lower()[:3]), v) for _, v in groups)
    first, second = order[0][1], order[1][1]
    mean = bool(_AVERAGE.search(raw))

    def measure(value: str) -> tuple[float, list[float]]:
        values = [n for r in table.rows if r.get(column) == value and (n := _number(r.get(target, ""))) is not None]
        total = sum(values) / len(values) if mean and values else sum(values)
        return total, values

    (a, a_values), (b, b_values) = measure(first), measure(second)
    word = "average" if mean else "total"
    return (f"The {word} {target} for {column} {first} in {table.path} is {_fmt(round(a, 2))} ({_terms(a_values)}), "
            f"for {second} {_fmt(round(b, 2))} ({_terms(b_values)}): a difference of {_fmt(round(a - b, 2))}.")


def _threshold(table: _Table, named: list[str], numeric: list[str], raw: str) -> str | None:
    """"how many sales are above 200", "add up every amount over 200": rows whose (named or only) numeric
    column passes a bound: how many, or their total or average."""
    above, below = _ABOVE.search(raw), _BELOW.search(raw)
    column = next((c for c in named if c in numeric), numeric[0] if len(numeric) == 1 else None)
    asks = _COUNT.search(raw) or _TOTAL.search(raw) or _AVERAGE.search(raw)
    if column is None or not (above or below) or not asks:
        return None
    bound = float((above or below).group(1))  # type: ignore[union-attr]
    hits = [r for r in table.rows if (n := _number(r.get(column, ""))) is not None
            and (n > bound if above else n < bound)]
    word = "above" if above else "below"
    if not _COUNT.search(raw):
        values = [n for r in hits if (n := _number(r.get(column, ""))) is not None]
        if _AVERAGE.search(raw) and values:
            return (f"The average {column} of the rows in {table.path} with {column} {word} {_fmt(bound)} is "
                    f"{_fmt(round(sum(values) / len(values), 2))} (({_terms(values)}) / {len(values)}).")
        return (f"The total {column} of the rows in {table.path} with {column} {word} {_fmt(bound)} is "
                f"{_fmt(sum(values))} ({_terms(values) or 'no rows'}).")
    shown = ", ".join(f"{table.label(r)} {r.get(column, '')}" for r in hits[:SHOWN_VALUES])
    return (f"{len(hits)} of the {len(table.rows)} rows in {table.path} have {column} {word} {_fmt(bound)}"
            f"{': ' + shown if shown else ''}.")


def _table_answer(whole: _Table, question: list[str], raw: str, named_file: bool) -> str | None:
    named = [c for c in whole.columns if _mentioned(c, question)]
    numeric = whole.numeric()
    bounded = _threshold(whole, named, numeric, raw) or _comparison(whole, question, raw, numeric, named)
    if bounded is not None:
        return bounded
    absent = _month_not_held(whole, question, raw)
    if absent is not None:
        return absent
    table, scope = _filtered(whole, question)
    rows = len(table.rows)
    if _COUNT.search(raw) and not scope:
        column = next((c for c in named if c not in numeric), None)
        if column is not None and not _ROWS.search(raw.split(column)[0][-12:] if column in raw else ""):
            distinct = list(dict.fromkeys(r.get(column, "") for r in table.rows if r.get(column)))
            listed = ", ".join(distinct[:SHOWN_VALUES]) + (", …" if len(distinct) > SHOWN_VALUES else "")
            return (f"{table.path} has {len(distinct)} different {column} value{'s' if len(distinct) != 1 else ''}:"
                    f" {listed} ({rows} row{'s' if rows != 1 else ''}).")
        if column is None and not named and (named_file or _ROWS.search(raw)):
            return f"{table.path} has {rows} row{'s' if rows != 1 else ''} (not counting the header)."
    target = next((c for c in named if c in numeric), None)
    if target is None and len(numeric) == 1 and (_TOTAL.search(raw) or _AVERAGE.search(raw) or scope
                                                 or _MAX.search(raw) or _MIN.search(raw)):
        target = numeric[0]
    if target is not None and rows:
        values = table.numbers(target)
        if _AVERAGE.search(raw):
            mean = sum(values) / len(values)
            return (f"The average {target}{scope} in {table.path} is {_fmt(round(mean, 2))} "
                    f"(({_terms(values)}) / {len(values)}).")
        if _TOTAL.search(raw):
            return f"The total {target}{scope} in {table.path} is {_fmt(sum(values))} ({_terms(values)})."
        for pattern, pick, word in ((_MAX, max, "highest"), (_MIN, min, "lowest")):
            if pattern.search(raw):
                value = pick(values)
                who = [table.label(r) for r in table.rows if _number(r.get(target, "")) == value]
                return f"The {word} {target}{scope} in {table.path} is {_fmt(value)} ({', '.join(who)})."
    cell = _cell_answer(whole, named, question)
    if cell is None and target is not None and scope and rows == 1:
        # "what did North sell in Feb": the one row the values name, its number
        return f"In {table.path}, the {target}{scope} is {table.rows[0].get(target, '')}."
    return cell


def _month_of(value: str) -> str | None:
    """The English month a cell value names ("Feb", "february", "Sept"), or ``None``."""
    word = value.strip().lower().rstrip(".")
    return next((m for m in _MONTH_WORDS if len(word) >= 3 and m.startswith(word)), None)


def _month_not_held(table: _Table, question: list[str], raw: str) -> str | None:
    """"the total for March" of a table with months Jan and Feb: no row is March's, and the total of every
    row would be a wrong answer; the months it holds instead. English "may" is a month only as "May"
    after the sentence's start ("may I have …" is a verb)."""
    may = bool(re.search(r"(?<=\w\W)May\b", raw)) or any(_MONTH_AS.get(w) == "may" for w in _words(raw))
    asked = [w for w in question if w in _MONTH_WORDS and (w != "may" or may)]
    if not asked:
        return None
    for column in table.columns:
        values = [r.get(column, "") for r in table.rows if r.get(column)]
        held = {_month_of(v) for v in values}
        if not values or None in held:
            continue
        missing = [m for m in asked if m not in held]
        if missing:
            listed = ", ".join(dict.fromkeys(values))
            return f"{table.path} has no row for {missing[0].capitalize()} (its {column} values: {listed})."
    return None


def _cell_answer(table: _Table, named: list[str], question: list[str]) -> str | None:
    """"ben's score": the row a cell of which the question names, the column it names."""
    if not named:
        return None
    asked = set(question)
    matches = [r for r in table.rows
               if any(v and c not in named and set(_words(v)) and set(_words(v)) <= asked for c, v in r.items())]
    if len(matches) != 1:
        return None
    row = matches[0]
    parts = [f"{c} {row.get(c, '')}" for c in named]
    return f"In {table.path}, {table.label(row)} has {', '.join(parts)}."


def answer_from_data(path: str, text: str, question: str, *, named_file: bool = True) -> str | None:
    """The answer to ``question`` computed from the data file ``path`` with contents ``text``, or ``None``.
    ``named_file``: the user named the file; else a bare "how many" is no question about its rows."""
    suffix = PurePosixPath(path.lower()).suffix
    words = _words(question)
    name = PurePosixPath(path).name
    words = [_MONTH_AS.get(w, w) for w in words if w not in _words(name)]
    try:
        if suffix in (".csv", ".tsv"):
            table = _table(name, text)
            return _table_answer(table, words, question, named_file) if table is not None else None
        if suffix == ".json":
            data = json.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        else:
            return None
    except (ValueError, yaml.YAMLError, csv.Error):
        return None
    return _mapping_answer(name, data, words) if isinstance(data, dict) else None
