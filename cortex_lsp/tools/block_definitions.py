"""What a block of Python needs from its own file, for "Cortex: Run this".

Running only the selected lines fails with ``NameError`` as soon as they call a function defined
higher up in the same file (``workspace/stats.py``'s bottom block calls ``summarize``). This module
finds the names the block uses but does not define, and the file's top-level statements that define
them (imports, functions, classes, assignments), following those definitions' own names in turn, and
returns the code to run: those statements in file order, then the block. Plain ``ast``; no I/O.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class BlockCode:
    code: str                        # what to run
    included: tuple[str, ...]        # names whose definitions were added, e.g. ("mean", "summarize")


def _defined_by(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _used_names(nodes: list[ast.stmt]) -> set[str]:
    used: set[str] = set()
    bound: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                (used if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
            elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(sub.name)
            elif isinstance(sub, ast.arg):
                bound.add(sub.arg)
            elif isinstance(sub, ast.alias):
                bound.add((sub.asname or sub.name).split(".")[0])
    return used - bound - _BUILTINS


def with_definitions(source: str, first_line: int, last_line: int, block: str) -> BlockCode:
    """``block`` (lines ``first_line``..``last_line``, 0-based, of ``source``) preceded by the top-level
    definitions of the file that it uses. Unparsable code is returned as it is (the sandbox reports it)."""
    try:
        tree = ast.parse(source)
        selected = ast.parse(_dedent(block))
    except (SyntaxError, ValueError):
        return BlockCode(code=block, included=())
    outside = [s for s in tree.body if (s.end_lineno or s.lineno) - 1 < first_line or s.lineno - 1 > last_line]
    # only what comes before the block (as when the file runs top to bottom), plus imports anywhere
    candidates = [s for s in outside if s.lineno - 1 < first_line or isinstance(s, ast.Import | ast.ImportFrom)]
    wanted = _used_names(selected.body)
    chosen: dict[int, ast.stmt] = {}
    included: list[str] = []
    pending = set(wanted)
    while pending:
        name = pending.pop()
        for stmt in reversed(candidates):  # the last definition before the block wins
            if name in _defined_by(stmt):
                if id(stmt) not in chosen:
                    chosen[id(stmt)] = stmt
                    pending |= _used_names([stmt]) - set(included)
                included.append(name)
                break
    if not chosen:
        return BlockCode(code=block, included=())
    lines = source.split("\n")
    parts = []
    for stmt in sorted(chosen.values(), key=lambda s: s.lineno):
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))]) - 1
        parts.append("\n".join(lines[start:stmt.end_lineno or stmt.lineno]))
    return BlockCode(code="\n\n".join(parts) + "\n\n" + _dedent(block), included=tuple(sorted(set(included))))


def _dedent(block: str) -> str:
    import textwrap

    return textwrap.dedent(block)
