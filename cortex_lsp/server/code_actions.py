"""Code actions: "Cortex: Explain this", "Cortex: Run this" (Python), "Cortex: Explain this error".

No model call and no I/O beyond the open document: this answers in milliseconds, even
while an agent run streams. Full ``CodeAction`` s with the command inline (no ``codeAction/resolve``).
The block under the cursor is the selection, or the enclosing function/class (Python via ``ast``,
other languages by indentation and brackets). Explain/Run are offered only where they help: on a
selection, inside a function or class (or a top-level Python block such as ``if __name__ ==
"__main__":``); prose files (Markdown, plain text) only on a selection. "Explain this error" is
offered on a diagnostic, anywhere. A Python document is parsed at most once per version (the
server's :class:`ParseCache`) and only up to :data:`MAX_PARSE_CHARS`; a document the parser fails on
in any way (too deep, too large) just gets no block actions.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from dataclasses import dataclass

from lsprotocol import types

KIND_EXPLAIN = types.CodeActionKind.Empty
KIND_RUN = types.CodeActionKind.Empty
KIND_ERROR = types.CodeActionKind.QuickFix
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


def block_range(source: str, language: str, uri: str, rng: types.Range, *,
                parses: ParseCache | None = None, version: int | None = None) -> types.Range | None:
    """Where Explain/Run help: the selection, or the block around the cursor; None on a plain line."""
    if not _is_empty(rng):
        return rng
    if len(source) > MAX_BLOCK_CHARS:
        return None  # size first: a huge document gets actions on a selection only
    if language in _PROSE_LANGUAGES or uri.lower().endswith(_PROSE_SUFFIXES):
        return None
    lines = source.split("\n")
    if language == "python":
        tree = (parses or ParseCache()).tree(uri, version, source)
        if tree is None:
            return None  # too large to parse on a cursor move, or not parseable: a selection only
        span = enclosing_python(tree, rng.start.line) or _top_level_python_block(tree, rng.start.line)
    else:
        span = enclosing_by_shape(lines, rng.start.line)
    if span is None:
        return None
    end_text = lines[span.end] if span.end < len(lines) else ""
    return types.Range(start=types.Position(span.start, 0), end=types.Position(span.end, len(end_text)))


def _range_json(rng: types.Range) -> dict[str, dict[str, int]]:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


def _is_python(uri: str, language: str) -> bool:
    return language == "python" or uri.endswith((".py", ".pyw"))


def code_actions(uri: str, source: str, language: str, params: types.CodeActionParams, *,
                 parses: ParseCache | None = None, version: int | None = None) -> list[types.CodeAction]:
    """The actions for ``params``; ``parses`` (the server's) keeps one parse per document version."""
    if not uri.startswith("file:"):
        return []
    only = params.context.only
    block = block_range(source, "python" if _is_python(uri, language) else language, uri, params.range,
                        parses=parses, version=version)
    actions: list[types.CodeAction] = []

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(f"{k}.") or k == "" for k in only)

    if block is not None and wanted(KIND_EXPLAIN):
        rng = block
        actions.append(types.CodeAction(
            title="Cortex: Explain this",
            kind=KIND_EXPLAIN,
            command=types.Command(title="Cortex: Explain this", command="cortex.explain",
                                  arguments=[{"uri": uri, "range": _range_json(rng)}]),
        ))
    if block is not None and _is_python(uri, language) and wanted(KIND_RUN):
        rng = block
        actions.append(types.CodeAction(
            title="Cortex: Run this",
            kind=KIND_RUN,
            command=types.Command(title="Cortex: Run this", command="cortex.run",
                                  arguments=[{"uri": uri, "range": _range_json(rng)}]),
        ))
    if wanted(KIND_ERROR):
        for diag in params.context.diagnostics[:MAX_DIAGNOSTIC_ACTIONS]:
            diag_json: dict[str, object] = {"message": diag.message[:MAX_DIAGNOSTIC_MESSAGE],
                                            "range": _range_json(diag.range)}
            if diag.source:
                diag_json["source"] = diag.source
            if diag.code is not None:
                diag_json["code"] = diag.code
            if diag.severity is not None:
                diag_json["severity"] = int(diag.severity)
            actions.append(types.CodeAction(
                title=f"Cortex: Explain this error: {diag.message[:60]}",
                kind=KIND_ERROR,
                diagnostics=[diag],
                command=types.Command(title="Cortex: Explain this error", command="cortex.explain",
                                      arguments=[{"uri": uri, "range": _range_json(diag.range),
                                                  "diagnostic": diag_json}]),
            ))
    return actions
