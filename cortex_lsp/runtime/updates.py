"""Kernel events as client updates, in a front-neutral form.

:class:`UpdateTracker` turns the kernel's :class:`~cortex_lsp.ports.AgentEvent` stream into updates a
front shows: the plan with each step's status, answer text, each tool call's start (with an id, a
title a user reads and a kind: read, edit, execute, search, fetch) and end, a file write, a notice.
The LSP front shows them as ``$/progress``; the ACP front as ``session/update``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from cortex_lsp.ports import (
    AgentEvent,
    AnswerToken,
    EditReported,
    ErrorReported,
    PlanMade,
    StepStarted,
    ToolCalled,
    ToolReturned,
)

ToolKind = Literal["read", "edit", "execute", "search", "fetch", "think", "other"]
StepStatus = Literal["pending", "in_progress", "completed"]

#: what each built-in tool does, as an editor groups tool calls
TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "search_files": "search",
    "doc_search": "search",
    "write_file": "edit",
    "python_exec": "execute",
    "web_fetch": "fetch",
    "calculator": "think",
    "current_time": "other",
}


def tool_kind(tool: str) -> ToolKind:
    return TOOL_KINDS.get(tool, "other")


def short_arguments(arguments: object, *, each: int = 40, total: int = 80) -> str:
    """A tool call's arguments as a user reads them: the values, shortened (``stats.py``, ``12*7``)."""
    if isinstance(arguments, dict):
        values = [v for v in arguments.values() if v not in (None, "", [], {})]
    elif arguments in (None, "", [], {}):
        values = []
    else:
        values = [arguments]
    parts = []
    for value in values:
        text = " ".join(str(value).split())
        parts.append(text if len(text) <= each else text[: each - 1] + "…")
    return short(", ".join(parts), total)


def short(text: str, limit: int = 120) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_title(tool: str, arguments: object) -> str:
    """``read_file notes.md``: the tool and its shortened arguments (never the text of a write)."""
    if tool == "write_file" and isinstance(arguments, dict):
        arguments = {"path": arguments.get("path")}
    return short(f"{tool} {short_arguments(arguments)}".strip())


@dataclass(frozen=True)
class PlanStep:
    description: str
    status: StepStatus


@dataclass(frozen=True)
class PlanShown:
    kind: str
    steps: tuple[PlanStep, ...]


@dataclass(frozen=True)
class AnswerText:
    text: str


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    tool: str
    title: str
    kind: ToolKind
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    tool: str
    success: bool
    output: str
    repeated: bool = False


@dataclass(frozen=True)
class FileWritten:
    call_id: str
    uri: str
    kind: str
    applied: bool | None


@dataclass(frozen=True)
class Notice:
    message: str


ClientUpdate = PlanShown | AnswerText | ToolStarted | ToolFinished | FileWritten | Notice


@dataclass
class UpdateTracker:
    """One run's events in, client updates out; ``current_call`` is the tool call now running."""

    prefix: str = "call"
    steps: list[str] = field(default_factory=list)
    plan_kind: str = "direct"
    step: int = 0
    calls: int = 0
    current_call: str | None = None

    def feed(self, event: AgentEvent) -> list[ClientUpdate]:
        match event:
            case AnswerToken():
                return [AnswerText(event.value)] if event.value else []
            case PlanMade():
                self.plan_kind = event.kind or "direct"
                self.steps = list(event.steps)
                self.step = 0
                return [self.plan()]
            case StepStarted():
                self.step = event.step
                if self.step > len(self.steps) and event.description:
                    self.steps.append(event.description)  # a step the plan did not list (a recovery, a merge)
                return [self.plan()] if self.steps else []
            case ToolCalled():
                self.calls += 1
                self.current_call = f"{self.prefix}-{self.calls}"
                arguments = dict(event.arguments)
                return [ToolStarted(self.current_call, event.tool, tool_title(event.tool, arguments),
                                    tool_kind(event.tool), arguments)]
            case ToolReturned():
                call_id = self.current_call or f"{self.prefix}-{self.calls}"
                return [ToolFinished(call_id, event.tool, event.success, event.output, event.repeated)]
            case EditReported():
                return [FileWritten(self.current_call or "", event.edit.uri, event.edit.kind, event.edit.applied)]
            case ErrorReported():
                return [Notice(event.message or "error")]
            case _:
                assert_never(event)

    def plan(self, *, finished: bool = False) -> PlanShown:
        def status(index: int) -> StepStatus:
            if finished or index + 1 < self.step:
                return "completed"
            return "in_progress" if index + 1 == self.step else "pending"

        return PlanShown(self.plan_kind, tuple(PlanStep(s, status(i)) for i, s in enumerate(self.steps)))
