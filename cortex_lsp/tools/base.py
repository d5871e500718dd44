"""Tool base types: a tool is a JSON schema plus an async ``execute``.

Tools know nothing of LSP or of the model. They receive a :class:`ToolContext` (the workspace, the
edit sink, settings, and the user's own words for provenance checks) and return a :class:`ToolResult`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.intent.intent import Intent, parse_intent
from cortex_lsp.models.base import ToolSpec
from cortex_lsp.ports import EditOutcome, EditSink, Workspace
from cortex_lsp.tools.details import ToolDetail


@dataclass
class ToolContext:
    """What a tool may see of the run. ``user_words`` is the user's own request (provenance-filtered),
    ``intent`` the run's one reading of it (read here from ``user_words`` when a caller outside a run
    gives none); ``user_turns`` are the user messages of the conversation (for the URL rule; web_fetch
    reads only their own words, never pasted material)."""

    workspace: Workspace
    settings: Settings
    edits: EditSink | None = None
    user_words: str = ""
    user_turns: list[str] = field(default_factory=list)
    run_id: str = ""
    #: what this run has read so far (files, pages): why the model may propose a write nobody asked for
    read_sources: list[str] = field(default_factory=list)
    intent: Intent | None = None

    def __post_init__(self) -> None:
        if self.intent is None:
            self.intent = parse_intent(self.user_words)

    @property
    def words_read(self) -> Intent:
        """The run's reading of the user's words (never ``None`` after construction)."""
        assert self.intent is not None
        return self.intent


@dataclass
class ToolResult:
    """One tool call's outcome: its text for the model, the edits it proposed, and for callers that act
    on it in code a typed ``detail`` (:mod:`cortex_lsp.tools.details`). ``refused`` marks a failure the
    tool's own gate decided (a URL the user's words did not grant, code the sandbox does not run), as
    against one the work ran into."""

    tool_name: str
    success: bool
    output: str = ""
    error: str = ""
    elapsed_ms: float = 0.0
    edits: list[EditOutcome] = field(default_factory=list)
    detail: ToolDetail | None = None
    refused: bool = False

    def text_for_model(self, limit: int = 6000) -> str:
        """The result as the model sees it: labelled, capped, and marked as data."""
        body = self.output if self.success else f"ERROR: {self.error}"
        if len(body) > limit:
            body = body[:limit] + f"\n[... cut: {len(body) - limit} more characters not shown]"
        return f"[{self.tool_name} result]\n{body}"


class BaseTool(ABC):
    name: str
    description: str
    parameters: dict[str, Any]
    #: seconds; ``None`` means the ``tool_timeout_seconds`` setting
    timeout: float | None = None

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def repair_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Fix common small-model slips before validation (override per tool)."""
        return dict(arguments)

    @abstractmethod
    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult: ...

    def ok(self, output: str, *, detail: ToolDetail | None = None, edits: list[EditOutcome] | None = None
           ) -> ToolResult:
        return ToolResult(tool_name=self.name, success=True, output=output, detail=detail, edits=list(edits or []))

    def fail(self, error: str, *, detail: ToolDetail | None = None, edits: list[EditOutcome] | None = None,
             refused: bool = False) -> ToolResult:
        return ToolResult(tool_name=self.name, success=False, error=error, detail=detail,
                          edits=list(edits or []), refused=refused)
