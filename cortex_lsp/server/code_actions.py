"""Code actions: "Cortex: Explain this", "Cortex: Run this" and "Cortex: Run file" (Python), "Cortex:
Explain this error" and "Cortex: Fix this error".

No model call and no I/O beyond the open document: this answers in milliseconds, even
while an agent run streams. Full ``CodeAction`` s with the command inline (no ``codeAction/resolve``).
Explain is offered on a selection, or inside a function or class, or a top-level Python block such as
``if __name__ == "__main__":`` (Python via ``ast``, other languages by indentation and brackets); prose
files (Markdown, plain text) only on a selection. Run this is offered on a selection or a top-level
Python block, never on the lines inside a function (running them alone means nothing). Run file is a
``source`` action (the editor's source-action menu, not a light bulb on every line) in a Python file
with an entry block (``if __name__ == "__main__":``). Explain this error is offered on a diagnostic,
anywhere; Fix this error too, in a file Cortex may write. A Python document is parsed at most once
per version (the server's :class:`ParseCache`) and only up to :data:`MAX_PARSE_CHARS`; a document the
parser fails on in any way (too deep, too large) just gets no block actions.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from dataclasses import dataclass

from lsprotocol import types

KIND_EXPLAIN = types.CodeActionKind.Empty
KIND_RUN = types.CodeActionKind.Empty
KIND_ERROR = types.CodeActionKind.QuickFix
KIND_RUN_FILE = types.CodeActionKind.Source
MAX_BLOCK_CHARS = 1024 * 1024  # larger documents get actions on a selection only (no block search at all)
# Python documents larger than this are not parsed (a parse of 800 KB held the event loop ~2 s): no
# Explain/Run on a cursor there, only on a selection. The same cap as cortex.run (sandbox MAX_CODE_CHARS).
MAX_PARSE_CHARS = 200_000
PARSE_CACHE_DOCUMENTS = 8
MAX_DIAGNOSTIC_ACTIONS = 20
MAX_DIAGNOSTIC_MESSAGE = 8192  # what cortex.explain accepts


@dataclass(frozen=True)
class LineSpan:
    start: int
    end: int  # inclusive


def _is_empty(rng: types.Range) -> bool:
    return rng.start.line == rng.end.line and rng.start.character == rng.end.character


def _parse_python(source: str) -> ast.Module | None:
    """The parsed document, or None: a syntax error, or any failure of the parser on valid but
    hostile code (``RecursionError`` on 200k chained ``+``, ``MemoryError`` on ``---…1``)."""
    try:
        return ast.parse(source)
    except Exception:  # no parse means no block actions, never an error answer
        return None


class ParseCache:
    """Parsed Python documents, one version each for the last few documents (editors ask for code
    actions on every cursor move, mostly on an unedited version). ``parses`` counts real parses."""

    def __init__(self, documents: int = PARSE_CACHE_DOCUMENTS) -> None:
        self._documents = documents
        self._trees: OrderedDict[str, tuple[tuple[int | None, int, int], ast.Module | None]] = OrderedDict()
        self.parses = 0

    def tree(self, uri: str, version: int | None, source: str) -> ast.Module | None:
        """The parse of ``source`` (None when too large or not parseable), at most once per version."""
        if len(source) > MAX_PARSE_CHARS:
            return None  # size before parse
        key = (version, len(source), hash(source))  # a reopened document may reuse a version number
        cached = self._trees.get(uri)
        if cached is not None and cached[0] == key and version is not None:
            self._trees.move_to_end(uri)
            return cached[1]
        self.parses += 1
        tree = _parse_python(source)
        self._trees[uri] = (key, tree)
        self._trees.move_to_end(uri)
        while len(self._trees) > self._documents:
            self._trees.popitem(last=False)
        return tree


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def enclosing_python(tree: ast.Module, line: int) -> LineSpan | None:
    """The innermost function or class around ``line`` (0-based), by the Python AST.

    Descends only into the statements that contain ``line`` (not ``ast.walk`` over the whole tree).
    """
    best: LineSpan | None = None
    node: ast.AST = tree
    while True:
        inner: ast.AST | None = None
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _BLOCKS):
                continue
            if isinstance(child, ast.match_case):  # no position of its own: pattern to last statement
                first, last = child.pattern.lineno - 1, (child.body[-1].end_lineno or child.pattern.lineno) - 1
            else:
                first = child.lineno - 1
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)]) - 1
                last = (child.end_lineno or child.lineno) - 1
            if first <= line <= last:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    best = LineSpan(first, last)
                inner = child
                break
        if inner is None:
            return best
        node = inner


def enclosing_by_shape(lines: list[str], line: int) -> LineSpan | None:
    """The block around ``line`` in any language: a header line with less indentation and the lines
    below it that are indented deeper, or bracketed (``{ … }``)."""
    if not lines or line >= len(lines):
        return None

    def indent(text: str) -> int:
        return len(text) - len(text.lstrip())

    current = line
    while current >= 0 and not lines[current].strip():
        current -= 1
    if current < 0:
        return None
    base = indent(lines[current])
    start = current
    while start > 0:
        prev = lines[start - 1]
        if prev.strip() and indent(prev) < base:
            start -= 1
            break
        start -= 1
    if indent(lines[start]) >= base and start != 0:
        return None
    header_indent = indent(lines[start])
    end = start + 1
    while end < len(lines):
        text = lines[end]
        if text.strip() and indent(text) <= header_indent:
            if text.strip().startswith(("}", ")", "]", "end")):
                break
            end -= 1
            break
        end += 1
    end = min(end, len(lines) - 1)
    while end > start and not lines[end].strip():
        end -= 1
    return LineSpan(start, end) if end > start else None


_PROSE_LANGUAGES = frozenset({"markdown", "plaintext", "text", "restructuredtext", "asciidoc", "latex", "tex"})
_PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".adoc", ".tex")
_PY_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)


def _top_level_python_block(tree: ast.Module, line: int) -> LineSpan | None:
    """The top-level compound statement (``if __name__ == "__main__":``, a loop, ``with``…) around ``line``."""
    for stmt in tree.body:
        if isinstance(stmt, _PY_BLOCKS) and stmt.lineno - 1 <= line <= (stmt.end_lineno or stmt.lineno) - 1:
            return LineSpan(stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1)
    return None


def _is_main_guard(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either side of the ``==``)."""
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare) or len(stmt.test.ops) != 1:
        return False
    sides = [stmt.test.left, *stmt.test.comparators]
    return (isinstance(stmt.test.ops[0], ast.Eq)
            and any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def has_entry_block(tree: ast.Module) -> bool:
    """Whether the module has a top-level ``if __name__ == "__main__":`` block."""
    return any(_is_main_guard(stmt) for stmt in tree.body)


@dataclass(frozen=True)
class Blocks:
    """Where the block actions apply for one request: Explain's range, Run's range, and whether the file
    has an entry block (Run file); None where an action is not offered."""

    explain: types.Range | None = None
    run: types.Range | None = None
    entry: bool = False


def _as_range(lines: list[str], span: LineSpan | None) -> types.Range | None:
    if span is None:
        return None
    end_text = lines[span.end] if span.end < len(lines) else ""
    return types.Range(start=types.Position(span.start, 0), end=types.Position(span.end, len(end_text)))


def blocks(source: str, language: str, uri: str, rng: types.Range, *,
           parses: ParseCache | None = None, version: int | None = None) -> Blocks:
    """The ranges Explain and Run work on: the selection, or the block around the cursor."""
    python = language == "python"
    tree: ast.Module | None = None
    if python and len(source) <= MAX_BLOCK_CHARS:
        tree = (parses or ParseCache()).tree(uri, version, source)
    entry = tree is not None and has_entry_block(tree)
    if not _is_empty(rng):
        return Blocks(explain=rng, run=rng if python else None, entry=entry)
    if len(source) > MAX_BLOCK_CHARS:
        return Blocks()  # size first: a huge document gets actions on a selection only
    if language in _PROSE_LANGUAGES or uri.lower().endswith(_PROSE_SUFFIXES):
        return Blocks()
    lines = source.split("\n")
    if not python:
        return Blocks(explain=_as_range(lines, enclosing_by_shape(lines, rng.start.line)))
    if tree is None:
        return Blocks()  # too large to parse on a cursor move, or not parseable: a selection only
    top = _top_level_python_block(tree, rng.start.line)
    inner = enclosing_python(tree, rng.start.line)
    return Blocks(explain=_as_range(lines, inner or top), run=_as_range(lines, top), entry=entry)


def block_range(source: str, language: str, uri: str, rng: types.Range, *,
                parses: ParseCache | None = None, version: int | None = None) -> types.Range | None:
    """Where Explain helps: the selection, or the block around the cursor; None on a plain line."""
    return blocks(source, language, uri, rng, parses=parses, version=version).explain


def _range_json(rng: types.Range) -> dict[str, dict[str, int]]:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


def _is_python(uri: str, language: str) -> bool:
    return language == "python" or uri.endswith((".py", ".pyw"))


def _diagnostic_json(diag: types.Diagnostic) -> dict[str, object]:
    out: dict[str, object] = {"message": diag.message[:MAX_DIAGNOSTIC_MESSAGE], "range": _range_json(diag.range)}
    if diag.source:
        out["source"] = diag.source
    if diag.code is not None:
        out["code"] = diag.code
    if diag.severity is not None:
        out["severity"] = int(diag.severity)
    return out


def _action(name: str, kind: str, command: str, argument: dict[str, object],
            diagnostic: types.Diagnostic | None = None) -> types.CodeAction:
    """The action ``name`` ("Cortex: …"); on a diagnostic, its title ends with the message."""
    title = f"{name}: {diagnostic.message[:60]}" if diagnostic is not None else name
    return types.CodeAction(title=title, kind=kind, diagnostics=[diagnostic] if diagnostic is not None else None,
                            command=types.Command(title=name, command=command, arguments=[argument]))


def code_actions(uri: str, source: str, language: str, params: types.CodeActionParams, *,
                 parses: ParseCache | None = None, version: int | None = None,
                 writable: bool = True) -> list[types.CodeAction]:
    """The actions for ``params``; ``parses`` (the server's) keeps one parse per document version;
    ``writable``: Cortex may write this file (its extension is allowed), so Fix this error is offered."""
    if not uri.startswith("file:"):
        return []
    only = params.context.only
    python = _is_python(uri, language)
    found = blocks(source, "python" if python else language, uri, params.range, parses=parses, version=version)
    actions: list[types.CodeAction] = []

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(f"{k}.") or k == "" for k in only)

    if found.explain is not None and wanted(KIND_EXPLAIN):
        actions.append(_action("Cortex: Explain this", KIND_EXPLAIN, "cortex.explain",
                               {"uri": uri, "range": _range_json(found.explain)}))
    if found.run is not None and python and wanted(KIND_RUN):
        actions.append(_action("Cortex: Run this", KIND_RUN, "cortex.run",
                               {"uri": uri, "range": _range_json(found.run)}))
    if found.entry and wanted(KIND_RUN_FILE):
        actions.append(_action("Cortex: Run file", KIND_RUN_FILE, "cortex.run", {"uri": uri}))
    if wanted(KIND_ERROR):
        for diag in params.context.diagnostics[:MAX_DIAGNOSTIC_ACTIONS]:
            argument: dict[str, object] = {"uri": uri, "range": _range_json(diag.range),
                                           "diagnostic": _diagnostic_json(diag)}
            actions.append(_action("Cortex: Explain this error", KIND_ERROR, "cortex.explain", argument, diag))
            if writable:
                actions.append(_action("Cortex: Fix this error", KIND_ERROR, "cortex.fix", argument, diag))
    return actions
