"""The seams between the agent and whoever hosts it (the LSP server, the tests).

The agent knows nothing of LSP. It is given a :class:`Workspace` (the allowed roots and a reader that
sees unsaved editor buffers) and an :class:`EditSink` (how a write is proposed), and it yields
:class:`AgentEvent` s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from cortex_lsp.intent.grants import WriteGrant

EventType = Literal["plan", "step_start", "tool_call", "tool_result", "token", "edit", "done", "error"]


class Workspace(Protocol):
    """The allowed roots, and a reader that prefers the editor's (possibly unsaved) text.

    A workspace whose editor is asked over the wire (ACP's ``fs/read_text_file``) also has an
    ``async read_text_async(path)``; tools read through :func:`read_open_text`, which prefers it."""

    @property
    def roots(self) -> list[Path]: ...

    def read_text(self, path: Path) -> str | None:
        """The editor's text for an open document, else ``None`` (the caller reads the disk)."""
        ...


async def read_open_text(workspace: Workspace, path: Path) -> str | None:
    """The editor's text for ``path`` (asked for when the workspace can ask), else ``None``."""
    reader = getattr(workspace, "read_text_async", None)
    if reader is not None:
        text: str | None = await reader(path)
        return text
    return workspace.read_text(path)


@dataclass
class StaticWorkspace:
    """A workspace with fixed roots and optional in-memory overlays (the CLI and tests use it)."""

    root_paths: list[Path]
    overlays: dict[Path, str] = field(default_factory=dict)

    @property
    def roots(self) -> list[Path]:
        return self.root_paths

    def read_text(self, path: Path) -> str | None:
        return self.overlays.get(path)


EditKind = Literal["create", "replace"]


@dataclass(frozen=True)
class EditRequest:
    """A write the agent wants: ``path`` already resolved inside a root by the path guards.

    ``grant`` is what the user's own words allowed (:class:`~cortex_lsp.intent.grants.WriteGrant`).
    ``asked`` says whether the user's own words clearly asked for this write (it labels the review, and
    is all a sink that nobody reviews accepts); ``unasked_reason`` says why the model proposed it when
    they did not ("the model proposed it after reading notes.md").
    """

    path: Path
    text: str
    overwrite: bool = False
    label: str = ""
    grant: WriteGrant | None = None
    #: the user's own words (or their click: Apply, Fix this error) asked for this write
    asked: bool = False
    #: why the write was not asked for, shown in the review (e.g. "the model proposed it after reading notes.md")
    unasked_reason: str = ""
    #: the user's own words named this file (a tool-configuration or executable name needs that)
    named: bool = False


@dataclass(frozen=True)
class EditOutcome:
    uri: str
    kind: EditKind
    #: ``True`` written, ``False`` not written, ``None`` unknown (a cancel, and the editor had not answered)
    applied: bool | None
    reason: str = ""
    #: the user's own words asked for this write (the label of its review)
    asked: bool = False
    #: what the review said about it ("You asked for this change." / "You did not ask …")
    description: str = ""
    #: the editor (the user) answered and did not apply it; ``False`` for a write refused before it was sent
    declined: bool = False


class EditSink(Protocol):
    """The one way anything is written: the host shows, applies (or declines) the edit.

    ``reviewed`` is ``True`` when the user sees and accepts every write before it is applied (their
    accept is the consent); ``False`` when nobody reviews it, so only writes they clearly asked for go."""

    @property
    def reviewed(self) -> bool: ...

    async def propose(self, request: EditRequest) -> EditOutcome: ...


# -- what a run reports as it goes --------------------------------------------------------------------
# One frozen dataclass per event type; ``type`` is its name on the wire. ``worker`` is set on the events a
# supervisor's worker made (its number), ``None`` otherwise. Each front turns them into its own wire
# messages in one place: the language server in ``server/event_wire.py``, ACP through
# ``runtime/updates.py`` and ``acp/render.py``.


@dataclass(frozen=True)
class PlanMade:
    """The run's plan: ``kind`` is ``direct``, ``tools`` or ``refusal``; ``steps`` in order."""

    type: ClassVar[Literal["plan"]] = "plan"
    kind: str
    steps: tuple[str, ...]
    worker: int | None = None


@dataclass(frozen=True)
class StepStarted:
    """A step of the run begins: its number (from 1) and what it does."""

    type: ClassVar[Literal["step_start"]] = "step_start"
    step: int
    description: str
    worker: int | None = None


@dataclass(frozen=True)
class ToolCalled:
    """The run calls a tool, with the arguments it will run with (after repair)."""

    type: ClassVar[Literal["tool_call"]] = "tool_call"
    tool: str
    arguments: Mapping[str, Any]
    worker: int | None = None


@dataclass(frozen=True)
class ToolReturned:
    """A tool call's outcome: ``output`` is its text or its error, shortened; ``repeated`` when the
    same call was answered from this run's earlier result."""

    type: ClassVar[Literal["tool_result"]] = "tool_result"
    tool: str
    success: bool
    output: str
    repeated: bool = False
    worker: int | None = None


@dataclass(frozen=True)
class EditReported:
    """What became of a write the run proposed (written, declined, refused, unknown)."""

    type: ClassVar[Literal["edit"]] = "edit"
    edit: EditOutcome
    worker: int | None = None


@dataclass(frozen=True)
class AnswerToken:
    """A piece of the answer, in order."""

    type: ClassVar[Literal["token"]] = "token"
    value: str
    worker: int | None = None


@dataclass(frozen=True)
class ErrorReported:
    """Something went wrong that the user should read (the model is down, an internal error)."""

    type: ClassVar[Literal["error"]] = "error"
    message: str
    worker: int | None = None


AgentEvent = PlanMade | StepStarted | ToolCalled | ToolReturned | EditReported | AnswerToken | ErrorReported
