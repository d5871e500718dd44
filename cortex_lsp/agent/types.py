"""What goes into and comes out of an agent run (plain data; no LSP types)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cortex_lsp.intent.intent import Intent
from cortex_lsp.ports import EditOutcome, PlanMade

Orchestration = Literal["single", "lats", "supervisor"]
StopReason = Literal["answered", "step_budget", "time_budget", "cancelled", "refused", "model_unavailable", "error"]
PlanKind = Literal["direct", "tools", "refusal"]
Mode = Literal["ask", "explain"]


@dataclass(frozen=True)
class Selection:
    """Editor text the request points at. It is data, never the user's request."""

    uri: str
    text: str
    path: Path | None = None
    language: str = ""
    start_line: int = 0
    end_line: int = 0


@dataclass(frozen=True)
class AgentRequest:
    message: str
    session_id: str
    run_id: str = ""
    selection: Selection | None = None
    diagnostic: str | None = None
    orchestration: Orchestration = "single"
    mode: Mode = "ask"
    #: what the session history keeps of this turn when it is more than ``message``: the code (or the
    #: diagnostic) an editor command worked on, so a follow-up still has it
    history_text: str = ""
    #: ask the session's last question again: its last exchange is dropped first (the new answer replaces it)
    regenerate: bool = False
    #: the reading of ``message`` with ``selection``, when the command that built the request made it already
    #: (cortex.fix checks its write grant with it); the run reads the message itself otherwise
    intent: Intent | None = field(default=None, compare=False, repr=False)

    @property
    def stored_text(self) -> str:
        """The user turn as the session history keeps it."""
        return self.history_text or self.message


@dataclass
class Plan:
    kind: PlanKind = "direct"
    steps: list[str] = field(default_factory=list)
    #: tools the plan names, in order (internal; not part of the public result)
    tools: list[str] = field(default_factory=list)

    def made(self) -> PlanMade:
        """The event that shows this plan."""
        return PlanMade(kind=self.kind, steps=tuple(self.steps))


@dataclass
class ToolCallRecord:
    tool: str
    arguments: dict[str, Any]
    success: bool
    output: str


@dataclass
class RunRecord:
    """Filled in as a run goes, so a cancelled or failed run still yields an honest result."""

    session_id: str
    started: float = field(default_factory=time.monotonic)
    plan: Plan = field(default_factory=Plan)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    edits: list[EditOutcome] = field(default_factory=list)
    answer_parts: list[str] = field(default_factory=list)
    backend: str = ""
    model: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return "".join(self.answer_parts)

    def result(self, stop_reason: StopReason, answer: str | None = None) -> AgentResult:
        return AgentResult(
            session_id=self.session_id,
            answer=self.answer if answer is None else answer,
            plan=self.plan,
            tool_calls=list(self.tool_calls),
            edits=list(self.edits),
            stop_reason=stop_reason,
            elapsed_ms=round((time.monotonic() - self.started) * 1000, 1),
            backend=self.backend,
            model=self.model,
            notes=list(self.notes),
        )


@dataclass
class AgentResult:
    session_id: str
    answer: str
    plan: Plan
    tool_calls: list[ToolCallRecord]
    edits: list[EditOutcome]
    stop_reason: StopReason
    elapsed_ms: float
    backend: str = ""
    model: str = ""
    notes: list[str] = field(default_factory=list)
