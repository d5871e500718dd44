"""The tool registry: schemas for the model, validated and time-limited execution."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema

from cortex_lsp.models.base import ToolSpec
from cortex_lsp.tools.base import BaseTool, ToolContext, ToolResult
from cortex_lsp.tools.user_wait import tool_time_limit


class ToolRegistry:
    def __init__(self, tools: Iterable[BaseTool] = ()) -> None:
        self._tools: dict[str, BaseTool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: BaseTool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> BaseTool | None:
        return self._tools.get(name)

    def specs(self, names: Iterable[str] | None = None) -> list[ToolSpec]:
        wanted = list(self._tools) if names is None else [n for n in names if n in self._tools]
        return [self._tools[n].spec() for n in wanted]

    async def execute(self, name: str, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Validate ``arguments`` against the tool's schema, run it under its time limit."""
        started = time.perf_counter()
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(tool_name=name, success=False, error=f"Unknown tool {name!r}. Tools: {known}.")
        if not isinstance(arguments, Mapping):
            return tool.fail("Arguments must be a JSON object.")
        args = tool.repair_arguments(arguments)
        errors = sorted(jsonschema.Draft202012Validator(tool.parameters).iter_errors(args), key=str)
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.absolute_path) or "arguments"
            return tool.fail(f"Invalid arguments for {name} ({where}): {first.message}")
        limit = tool.timeout or context.settings.tool_timeout_seconds
        try:
            async with asyncio.timeout(limit) as time_limit:
                with tool_time_limit(time_limit):  # a wait for the user's review pauses it (user_wait.py)
                    result = await tool.execute(args, context)
        except TimeoutError:
            result = tool.fail(f"{name} did not finish within {limit:g} s and was stopped.")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool fault is a failed result, never a crashed run
            result = tool.fail(f"{name} failed: {exc.__class__.__name__}: {exc}")
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result
