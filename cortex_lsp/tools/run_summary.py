"""What a "Run this" did, in one line: "defined `restock`; nothing calls it" for a block that only
defines things, otherwise what ran and what came out ("ran in 0.02 s; printed 3 lines").

Read from the block the user picked (not the definitions gathered from its file to make it run) and
from the sandbox's result; no model call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: statements that only define or prepare names: a block made of these runs nothing the user can see
_DEFINING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Pass)


@dataclass(frozen=True)
class Definitions:
    functions: tuple[str, ...]
    classes: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return self.functions + self.classes


def bare_definitions(code: str) -> Definitions | None:
    """The functions and classes ``code`` defines when defining (and importing) is all it does at its top
    level, else ``None`` (a call, a loop, a print, a syntax error)."""
    try:
        tree = ast.parse(code)
    except Exception:  # not parseable (or too deep): not a block of definitions
        return None
    functions: list[str] = []
    classes: list[str] = []
    for index, stmt in enumerate(tree.body):
        if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str):
            continue  # a docstring
        if not isinstance(stmt, _DEFINING):
            return None
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            classes.append(stmt.name)
    if not functions and not classes:
        return None
    return Definitions(tuple(functions), tuple(classes))


def _quoted(names: tuple[str, ...]) -> str:
    shown = [f"`{n}`" for n in names[:4]]
    if len(names) > 4:
        shown.append(f"{len(names) - 4} more")
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _lines(text: str) -> int:
    return len(text.rstrip("\n").split("\n")) if text.strip() else 0


def summarize(code: str, *, ran: bool, stdout: str = "", stderr: str = "", value: str | None = None,
              error: str | None = None, duration_ms: float = 0.0, reason: str | None = None) -> str:
    """One line saying what running ``code`` did (``ran`` False: why it did not run)."""
    if not ran:
        return "not run: " + (reason or "the sandbox refused it").removeprefix("Not run: ")
    if error:
        first = error.strip().splitlines()[-1] if error.strip() else error
        return f"failed after {duration_ms / 1000:.2f} s: {first}"
    defined = bare_definitions(code) if not (stdout.strip() or stderr.strip() or value) else None
    if defined is not None:
        if defined.functions and not defined.classes:
            verb = "nothing calls it" if len(defined.functions) == 1 else "nothing calls them"
        else:
            verb = "nothing uses it" if len(defined.names) == 1 else "nothing uses them"
        return f"defined {_quoted(defined.names)}; {verb}"
    parts = [f"ran in {duration_ms / 1000:.2f} s"]
    if stdout.strip():
        n = _lines(stdout)
        parts.append(f"printed {n} line{'s' if n != 1 else ''}")
    if stderr.strip():
        parts.append("wrote to stderr")
    if value is not None:
        parts.append(f"value: {value[:80]}")
    if len(parts) == 1:
        parts.append("no output")
    return "; ".join(parts)
