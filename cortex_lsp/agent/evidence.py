"""The lines of a file (or of found passages) that a question is about, picked in code.

A small model reads a file and often answers beside it ("The database URL is defined in src/db.py"),
so an answer from a file is shown with its evidence: the few lines the question points at, quoted
verbatim with their place. :func:`relevant_lines` scores every line by the question's words (rarer
words weigh more, a stem or a word's start counts, "roll back" finds "rollback"), takes a definition
whole when the question names it (``parse_date`` → its ``def`` and docstring), and reads a few code
words as the code they mean ("imports" → the import lines, "run as a script" → the ``__main__``
block). Nothing is shown when no line stands out: a summary or a general question gets no excerpt.

Pure: the text comes from the tool that read it (``read_file``, ``doc_search``), through every guard.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from cortex_lsp.memory.stemming import stem

#: lines shown at most, and in at most this many separate places
MAX_LINES = 6
MAX_RANGES = 2
#: a line this long is cut in the excerpt
LINE_CHARS = 240
#: a question term must score this share of the best line's score to add another place
SECOND_SHARE = 0.6

_TOKEN = re.compile(r"[^\W\d_][\w]*|\d+(?:[.,]\d+)*", re.UNICODE)
_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*?)(?:\(\))?(?=\W|$)")
#: function words, question words and request verbs (several languages): they say how to ask, not what
_STOP = frozenset("""
a an the and or but if of to in on at by for from with without into onto about as is are was were be been being
am do does did done doing have has had having can could should would will shall may might must it its it's this that
these those there here what what's whats which who whom whose when where why how i me my mine we us our you your u ur
he she they them their his her not no yes so than then too very just also only please pls plz thanks thank hey hi
hello quick quickly real really tell say says said show give gives find look see read open check explain describe
summarise summarize summary file files folder line lines text contents content inside written write say anything
something thing things kind sort one ones use used uses using get gets got go goes going make makes made know want
need wonder like mean means meaning exactly actually some any all each every whole part list value values set
der die das ein eine und oder ist sind was wie wo wer welche welcher welches im in den dem des mit von zu für auf
le la les un une des et ou est sont que qui quoi quel quelle comment où dans du de pour sur avec
el los las unos unas y o es son qué que cuál cuales cómo dónde en del con por para
il lo gli uno una e che chi quale come dove nel della di per con si
o os as um uma e é são que qual como onde no na do da em com para
het een en of is zijn wat welke hoe waar met van voor op
""".split())
#: code words → what they point at in Python source
_IMPORT_WORDS = frozenset({"import", "imports", "imported", "importing", "depend", "depends", "dependency",
                           "dependencies", "importa", "importiert", "importe", "importe-t-il", "framework",
                           "frameworks", "library", "libraries", "package", "packages", "module", "modules"})
_SCRIPT_WORDS = frozenset({"script", "entry", "entrypoint", "__main__", "directly", "executed", "launched",
                           "started", "start", "starts"})
_RETURN_WORDS = frozenset({"return", "returns", "returned", "returning", "gibt", "renvoie", "devuelve",
                           "restituisce", "retorna"})


@dataclass(frozen=True)
class Excerpt:
    """Consecutive lines of one file, numbered from 1."""

    path: str
    start: int
    lines: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    @property
    def place(self) -> str:
        return f"line {self.start}" if self.end == self.start else f"lines {self.start}-{self.end}"

    def render(self) -> str:
        """``From PATH, lines A-B:`` and the lines in a fence (the file's language, if known)."""
        body = "\n".join(line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " …" for line in self.lines)
        fence = "````" if "```" in body else "```"
        return f"From {self.path}, {self.place}:\n{fence}{_language(self.path)}\n{body}\n{fence}"


#: a sentence may run over several lines of these (a wrapped paragraph); in code each line stands alone
_PROSE_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".adoc", ""})
_LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".json": "json", ".md": "markdown",
              ".sh": "sh", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".sql": "sql", ".html": "html",
              ".css": "css", ".rs": "rust", ".go": "go"}


def _language(path: str) -> str:
    return _LANGUAGES.get(PurePosixPath(path.lower()).suffix, "")


def render(excerpts: Sequence[Excerpt]) -> str:
    return "\n\n".join(e.render() for e in excerpts)


def _split_identifier(token: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", token)
    return [p for p in re.split(r"[_\s]+", spaced) if p]


def terms(text: str) -> list[str]:
    """The stems of ``text``'s words, identifiers split at ``_`` and case changes."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        for part in _split_identifier(token) if ("_" in token or re.search(r"[a-z][A-Z]", token)) else [token]:
            out.append(stem(part))
    return out


def _question_terms(question: str, path: str) -> list[str]:
    named = set(terms(PurePosixPath(path).name)) | set(terms(path))
    out = []
    for term in terms(question):
        if term in _STOP or term in named or len(term) < 2 or (term.isdigit() and len(term) < 2):
            continue
        if term not in out:
            out.append(term)
    return out


def _joined(words: list[str]) -> set[str]:
    """Two neighbouring words written as one ("roll back" → "rollback", "set up" → "setup")."""
    return {a + b for a, b in itertools.pairwise(words)}


def _matches(term: str, line_terms: set[str]) -> float:
    if term in line_terms:
        return 1.0
    if len(term) >= 5 and any(len(t) >= 5 and (t.startswith(term[:5]) and term.startswith(t[:5])) for t in line_terms):
        return 0.6  # configured / configuration, deploys / deployment
    return 0.0


@dataclass(frozen=True)
class Definition:
    """A definition of Python source: its name, its lines (0-based, inclusive) and the lines that say
    what it is (decorators, the ``def`` line, the docstring)."""

    name: str
    first: int
    last: int
    head_last: int


def python_units(text: str) -> tuple[list[Definition], ast.Module | None]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return [], None
    units: list[Definition] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            last = (node.end_lineno or node.lineno) - 1
            head = node.body[0].end_lineno if ast.get_docstring(node) is not None and node.body else node.lineno
            units.append(Definition(node.name, first, last, (head or node.lineno) - 1))
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.col_offset == 0:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    end = (node.end_lineno or node.lineno) - 1
                    units.append(Definition(target.id, node.lineno - 1, end, end))
    return units, tree


def _main_block(tree: ast.Module) -> tuple[int, int] | None:
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return node.lineno - 1, (node.end_lineno or node.lineno) - 1
    return None


_DEF_STEMS = frozenset({"function", "func", "method", "class", "def", "helper", "routine", "funktion", "fonction",
                        "función", "funcion", "funzione", "função", "funcao", "variable", "constant", "defin",
                        "define"})
#: words that say the name next to them is a definition ("the chunk function", "la fonction parse_date")
_DEF_WORDS = frozenset({"function", "functions", "func", "method", "methods", "class", "classes", "def", "helper",
                        "routine", "funktion", "fonction", "función", "funcion", "funzione", "função", "funcao",
                        "methode", "méthode", "método", "metodo", "klasse", "classe", "clase", "variable",
                        "constant", "setting", "endpoint", "endpoints", "route", "handler", "view"})


def named_definitions(question: str, units: list[Definition], path: str) -> list[str]:
    """Names of ``units`` the question points at: written as code (``a_b``, ``f()``, backticks, camelCase,
    dotted) or next to a word for a definition; the file's own name is not one."""
    names = {u.name for u in units}
    stem = PurePosixPath(path).stem
    words = re.findall(r"`[^`]+`|[A-Za-z_][\w.]*(?:\(\))?", question)
    out: list[str] = []
    for i, word in enumerate(words):
        bare = word.strip("`").removesuffix("()")
        for part in bare.split("."):
            if part not in names or part == stem or part in out or len(part) < 2:
                continue
            near = {w.lower() for w in words[max(0, i - 2):i + 3]}
            code_like = word.startswith("`") or word.endswith("()") or "_" in part or "." in bare \
                or bool(re.search(r"[a-z][A-Z]", part))
            if code_like or near & _DEF_WORDS:
                out.append(part)
    return out


def _called_names(tree: ast.Module, block: tuple[int, int]) -> set[str]:
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and block[0] <= n.lineno - 1 <= block[1]}


def _import_lines(tree: ast.Module) -> list[int]:
    return [n.lineno - 1 for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]


def _return_lines(tree: ast.Module, unit: Definition) -> list[int]:
    return [n.lineno - 1 for n in ast.walk(tree)
            if isinstance(n, ast.Return) and unit.first <= n.lineno - 1 <= unit.last]


@dataclass
class _Scored:
    score: float
    first: int  # 0-based
    last: int


def _paragraph(lines: list[str], index: int) -> tuple[int, int]:
    """A prose line with the lines that continue its sentence (a wrapped paragraph, up to 3 lines)."""
    first = last = index

    def prose(i: int) -> bool:
        s = lines[i].strip()
        return bool(s) and not re.match(r"^(?:#|[-*+]\s|\d+[.)]\s|```|>|\|)", s)

    if re.match(r"^#{1,6}\s", lines[index].strip()):  # a heading: with the start of its section
        following = [i for i in range(index + 1, min(len(lines), index + 4)) if lines[i].strip()]
        return index, following[1] if len(following) > 1 else following[0] if following else index
    if not prose(index):
        return first, last
    while first > 0 and index - first < 2 and prose(first - 1) and not lines[first - 1].rstrip().endswith((".", ":")):
        first -= 1
    while last + 1 < len(lines) and last - first < 2 and prose(last + 1) and not lines[last].rstrip().endswith("."):
        last += 1
    return first, last


class _Scorer:
    """Scores of the question's words against lines of one text (rarer words weigh more)."""

    def __init__(self, lines: list[str], asked: list[str], literals: list[str]) -> None:
        self.lines = lines
        self.asked = asked
        self.literals = literals
        self.line_terms = [set(terms(line)) | _joined(terms(line)) for line in lines]
        self.df = {t: sum(1 for lt in self.line_terms if _matches(t, lt) > 0) for t in asked}
        self.joined = _joined(asked)

    def idf(self, term: str) -> float:
        return math.log(1 + len(self.lines) / max(self.df.get(term, 0), 1))

    def score(self, first: int, last: int) -> float:
        """The question's words found in these lines, each counted once."""
        found = set().union(*self.line_terms[first:last + 1]) if last >= first else set()
        total = sum(hit * self.idf(t) for t in self.asked if (hit := _matches(t, found)))
        total += sum(1.5 for j in self.joined if j in found)
        text = "\n".join(self.lines[first:last + 1])
        total += sum(3.0 for lit in self.literals if lit in text)
        return total

    def least(self) -> float:
        """What a place must score to stand out: a rare word of the question, or two ordinary ones."""
        n = len(self.lines)
        return 0.5 if n <= 2 else 0.9 * math.log(1 + n / max(1, n // 3))


_LITERAL = re.compile(r"`([^`\n]{2,80})`|([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?|[A-Za-z_]\w*\(\)|/[\w<>/-]+)")


def _literals(question: str) -> list[str]:
    """Code as the user wrote it ("app.run", "register()", "/health"): found verbatim, it weighs most."""
    out = []
    for match in _LITERAL.finditer(question):
        text = (match.group(1) or match.group(2)).removesuffix("()")
        if text and not re.fullmatch(r"[\w-]+\.(?:py|md|txt|json|csv|js|ts|yaml|yml|toml)", text) and text not in out:
            out.append(text)
    return out


def relevant_lines(path: str, text: str, question: str, *, first_line: int = 1,
                   max_lines: int = MAX_LINES) -> list[Excerpt]:
    """The lines of ``text`` (the file ``path``, whose first line is ``first_line``) that ``question``
    points at, best first; empty when no line stands out (see the module docstring)."""
    lines = text.splitlines()
    if not lines or not question.strip():
        return []
    asked = _question_terms(question, path)
    literals = _literals(question)
    if not asked and not literals:
        return []
    units, tree = python_units(text) if path.lower().endswith(".py") else ([], None)
    if tree is not None:  # in code, "function" or "helper" is how the question asks, not what it is about
        asked = [t for t in asked if t not in _DEF_STEMS]
    scorer = _Scorer(lines, asked, literals)
    candidates: list[_Scored] = []
    prose = PurePosixPath(path.lower()).suffix in _PROSE_SUFFIXES
    for i in range(len(lines)):
        if lines[i].strip():
            first, last = _paragraph(lines, i) if prose else (i, i)
            score = scorer.score(i, i)
            if score > 0:
                candidates.append(_Scored(score, first, last))
    words = {w.lower() for w in re.findall(r"\w+", question)}
    if tree is not None:
        named = named_definitions(question, units, path)
        for unit in units:
            head_last = min(unit.head_last, unit.first + max_lines - 1)
            if unit.name in named:
                body_end = min(unit.last, unit.first + max_lines - 1)
                candidates.append(_Scored(20.0 + scorer.score(unit.first, unit.last), unit.first, body_end))
                if words & _RETURN_WORDS:
                    candidates.extend(_Scored(19.0, r, r) for r in _return_lines(tree, unit))
            elif unit.head_last > unit.first or unit.last > unit.first:
                # a definition whose name and docstring answer the question ("the function that splits a list")
                score = scorer.score(unit.first, unit.head_last) + 0.5 * sum(
                    _matches(t, set(terms(unit.name))) * scorer.idf(t) for t in asked)
                if score > 0:
                    candidates.append(_Scored(score + 0.5, unit.first, head_last))
        if words & _IMPORT_WORDS:
            for number in _import_lines(tree):
                candidates.append(_Scored(3.0 + scorer.score(number, number), number, number))
        block = _main_block(tree)
        if block and (words & _SCRIPT_WORDS or {"main", "run"} <= words):
            candidates.append(_Scored(5.0 + scorer.score(*block), block[0], min(block[1], block[0] + 3)))
            # what the block calls, when it is defined here ("main()" → the lines of main)
            called = _called_names(tree, block)
            for unit in units:
                if unit.name in called:
                    candidates.append(_Scored(4.9 + scorer.score(*block), unit.first, min(unit.last, unit.first + 3)))
    chosen = _choose(candidates, scorer, max_lines)
    return [Excerpt(path, first_line + a, tuple(lines[a:b + 1])) for a, b in chosen]


def _choose(candidates: list[_Scored], scorer: _Scorer, max_lines: int) -> list[tuple[int, int]]:
    """The best places, at most :data:`MAX_RANGES` of them and ``max_lines`` lines; neighbours merged;
    nothing when the best does not stand out."""
    if not candidates:
        return []
    candidates.sort(key=lambda c: (-c.score, c.first))
    top = candidates[0].score
    if top < scorer.least():
        return []
    chosen: list[tuple[int, int]] = []
    used = 0
    for cand in candidates:
        if len(chosen) >= MAX_RANGES or used >= max_lines:
            break
        if chosen and cand.score < top * SECOND_SHARE:
            break
        first, last = cand.first, min(cand.last, cand.first + max_lines - used - 1)
        if any(first <= b + 1 and last >= a - 1 for a, b in chosen):
            merged = [(min(a, first), max(b, last)) if first <= b + 1 and last >= a - 1 else (a, b) for a, b in chosen]
            grown = sum(b - a + 1 for a, b in merged)
            if grown <= max_lines:
                chosen, used = merged, grown
            continue
        chosen.append((first, last))
        used += last - first + 1
    return sorted(chosen)


@dataclass(frozen=True)
class Passage:
    """Consecutive lines of a file that a search found: where they start, and their text."""

    path: str
    start: int
    text: str


def _leads(lines: list[str]) -> set[int]:
    """The lines between a document's title (``# ``) and its first section (``## ``): the lead says what
    the whole document is about ("How to install the service"), a section says how; so the lead is
    shown only when no line of a section stands out."""
    lead: set[int] = set()
    i = 0
    while i < len(lines):
        if re.match(r"^#\s", lines[i].strip()):
            j = i + 1
            while j < len(lines) and not re.match(r"^#{1,6}\s", lines[j].strip()):
                j += 1
            if j < len(lines) and re.match(r"^#{2,6}\s", lines[j].strip()):
                lead.update(range(i + 1, j))
            i = j
        else:
            i += 1
    return lead


def relevant_passage_lines(passages: Sequence[Passage], question: str, *, max_lines: int = 4) -> list[Excerpt]:
    """The lines of the found ``passages`` that ``question`` points at, weighed together (a word rare
    across all of them weighs more), best places first in reading order."""
    lines: list[str] = []
    origin: list[tuple[str, int] | None] = []
    # a document's passages in its own order, so that a lead and the section under it read as they stand
    # in the document (documents in the order of their best passage)
    rank = {p.path: n for n, p in reversed(list(enumerate(passages)))}
    for passage in sorted(passages, key=lambda p: (rank[p.path], p.start)):
        for n, line in enumerate(passage.text.splitlines()):
            lines.append(line)
            origin.append((passage.path, passage.start + n))
        lines.append("")  # a passage's paragraph never runs into the next one's
        origin.append(None)
    paths = [where[0] if where is not None else None for where in origin]
    asked = [t for t in dict.fromkeys(t for p in passages for t in _question_terms(question, p.path))
             if all(t in _question_terms(question, p.path) for p in passages)]
    literals = _literals(question)
    if not lines:
        return []
    scorer = _Scorer(lines, asked, literals)
    lead = _leads(lines)
    candidates = []
    for i, line in enumerate(lines):
        if line.strip() and (score := scorer.score(i, i)) > 0:
            prose = PurePosixPath((origin[i] or ("", 0))[0].lower()).suffix in _PROSE_SUFFIXES
            first, last = _paragraph(lines, i) if prose else (i, i)
            candidates.append(_Scored(score, first, last))
    if any(c.first not in lead and c.score >= scorer.least() for c in candidates):
        candidates = [c for c in candidates if c.first not in lead]
    # no word of the question but the file's own name ("Hur gör man en ny release här?" over
    # docs/release.md): no line stands out, and only a how-to question gets steps, those of the heading
    chosen = _choose(candidates, scorer, max_lines) if asked or literals else []
    if _HOW_TO.search(question) and (not chosen or chosen[0][0] in lead or _LIST_ITEM.match(lines[chosen[0][0]])):
        # "how do I install this on a fresh machine?": the lead says what the document is for, one step
        # matches a word ("1. Install Python"), and "Hur gör man en ny release?" names only headings;
        # the steps of the section, from the first, say how
        steps = (_steps_after(lines, paths, chosen[0][0], max_lines) if chosen
                 else _named_heading_steps(lines, paths, question, max_lines))
        chosen = [steps] if steps is not None else chosen
    excerpts = []
    for a, b in chosen:
        where = origin[a]
        if where is not None:
            excerpts.append(Excerpt(where[0], where[1], tuple(lines[a:b + 1])))
    return excerpts


#: a question about how to do something (a procedure), in the languages the words are read in
_HOW_TO = re.compile(
    r"\bhow\s+(?:do|can|should|would|to)\b|\b(?:steps?|process|procedure|instructions)\b|\bwie\s+(?:kann|mache|installiere|"
    r"geht|funktioniert)|\bcomment\b|\bc[oó]mo\b|\bcome\s+(?:si|faccio|posso)\b|\bhoe\b|\bhur\b|\bcomo\b",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+\S")


def _named_heading_steps(lines: list[str], paths: list[str | None], question: str,
                         max_lines: int) -> tuple[int, int] | None:
    """The steps under the first section heading that shares a word (or its stem) with ``question``."""
    words = {stem(w.casefold()) for w in _TOKEN.findall(question) if len(w) >= 4 and w.casefold() not in _STOP}
    for i, line in enumerate(lines):
        if re.match(r"^#{2,6}\s", line.strip()) and words & {stem(w.casefold()) for w in _TOKEN.findall(line)}:
            return _steps_after(lines, paths, i, max_lines)
    return None


def _steps_after(lines: list[str], paths: list[str | None], start: int, max_lines: int) -> tuple[int, int] | None:
    """The first list (numbered or bulleted) after line ``start`` in the same document, before its next
    title (or the list ``start`` is in): its first ``max_lines`` items, or ``None`` when there is none."""
    document = paths[start]
    if _LIST_ITEM.match(lines[start]):  # inside the list already: from its first item
        while start > 0 and paths[start - 1] == document and _LIST_ITEM.match(lines[start - 1]):
            start -= 1
        start -= 1
    for i in range(start + 1, len(lines)):
        if (paths[i] is not None and paths[i] != document) or re.match(r"^#\s", lines[i].strip()):
            return None
        if _LIST_ITEM.match(lines[i]):
            end = i
            while (end + 1 < len(lines) and end + 1 - i < max_lines and paths[end + 1] == document
                   and _LIST_ITEM.match(lines[end + 1])):
                end += 1
            return i, end
    return None
