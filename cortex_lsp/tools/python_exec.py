"""The ``python_exec`` tool: run a Python snippet in the sandbox and report output, value and errors.

The tool only formats; every rule (allowed imports, guarded attributes, read-only ``open()`` in the
roots, the folder's own modules the code imports, limits, isolation) is enforced by
:mod:`cortex_lsp.tools.sandbox`: the pool reads those modules through the path guards, from the
workspace roots passed here. A refusal is a failed result with ``data["refused"] = True`` so the agent
can stop instead of retrying forbidden code.

Two rules of its own: code over the sandbox's size limit is refused before anything reads it (no parse
for the argument repair), and where the host offers no OS boundary (neither bubblewrap nor Landlock
with seccomp, :attr:`~cortex_lsp.tools.sandbox.isolation.IsolationPlan.model_code_allowed`) nothing
runs: the result says what to install. Whether the tool is offered at all is the plan guards' decision
(:func:`~cortex_lsp.agent.plan_guards.python_allowed`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cortex_lsp.tools.base import BaseTool, ToolContext, ToolResult
from cortex_lsp.tools.details import CodeRun
from cortex_lsp.tools.sandbox.policy import parse_code
from cortex_lsp.tools.sandbox.pool import MAX_CODE_CHARS, SandboxPool, SandboxResult, too_long_message

_ESCAPED_NEWLINES = re.compile(r"(?:\\r)?\\n")
_ESCAPED_QUOTES = re.compile(r'\\(["\'])')


def repair_code(code: str) -> str:
    """Undo a small model's double escaping: ``print(1)\\nprint(2)`` with literal ``\\n`` / ``\\"``.

    Only when the code does not parse as written and the repaired text does (so string literals that
    really hold ``\\n`` are left alone).
    """
    if len(code) > MAX_CODE_CHARS:
        return code  # never parsed: the sandbox refuses it by its size
    if _parses(code) or ("\\n" not in code and '\\"' not in code and "\\'" not in code):
        return code
    candidate = code
    if "\n" not in candidate:
        candidate = _ESCAPED_NEWLINES.sub("\n", candidate).replace("\\t", "\t")
    candidate = _ESCAPED_QUOTES.sub(r"\1", candidate)
    return candidate if _parses(candidate) else code


def _parses(code: str) -> bool:
    """Does ``code`` parse? (:func:`~.sandbox.policy.parse_code`: a dotted name past the bound or nesting
    past the parser's counts as not parsing, never as an error or a parse quadratic in the name.)"""
    try:
        parse_code(code, "<check>")
    except (SyntaxError, ValueError):
        return False
    return True


def format_result(result: SandboxResult, limit: int = 6000) -> str:
    """The run as text for the model or the editor: output, value, error, and where it ran."""
    parts: list[str] = []
    if result.stdout:
        parts.append(f"stdout:\n{result.stdout.rstrip()}")
    if result.stderr:
        parts.append(f"stderr:\n{result.stderr.rstrip()}")
    if result.value is not None:
        parts.append(f"value: {result.value}")
    if result.error:
        parts.append(f"error:\n{result.error}")
    if not parts:
        parts.append("(no output)")
    parts.extend(f"note: {note}" for note in result.notes)
    text = "\n".join(parts)
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


class PythonExecTool(BaseTool):
    name = "python_exec"
    description = (
        "Run Python code in a sandbox and return its printed output and the value of its last line. "
        "Only pure-computation modules can be imported (math, statistics, random, decimal, fractions, json, "
        "datetime, itertools, functools, collections, re, string, ...), and the open folder's own Python "
        "modules and packages (import utils, from src.db import URL) under the same rules. open() can read "
        "text files inside the open folder (read-only); no writing files, no network, no subprocesses. Use it "
        "for calculations, data transformation and checking code."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Python source code to run"}},
        "required": ["code"],
        "additionalProperties": False,
    }

    def __init__(self, pool: SandboxPool) -> None:
        self._pool = pool
        # The registry's limit for this tool covers the sandbox's own time limit plus a worker start.
        self.timeout = pool.timeout_seconds + 5.0

    def repair_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        if isinstance(args.get("code"), str):
            args["code"] = repair_code(args["code"])
        return args

    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        code = str(arguments.get("code", ""))
        if len(code) > MAX_CODE_CHARS:
            return self.fail(too_long_message(), refused=True)
        if not code.strip():
            return self.fail("No code was given.")
        plan = await self._pool.isolation()
        if not plan.model_code_allowed:
            return self.fail(plan.refusal, refused=True)
        result = await self._pool.run(code, roots=list(context.workspace.roots))
        ran = CodeRun(stdout=result.stdout, stderr=result.stderr, value=result.value, error=result.error,
                      backend=result.backend, isolation=result.isolation, duration_ms=result.duration_ms)
        text = format_result(result)
        if result.error:
            return self.fail(text, detail=ran, refused=result.refused)
        return self.ok(text, detail=ran)
