"""The ACP edit sink: every write asks ``session/request_permission``, then the client writes it.

A proposed write passes the same checks as on the LSP front (the path guards: inside the session's
folder, no hidden or system path, allowed extension, size; the several-folders rule; no replacing a
file nobody asked to replace). Then the user is asked (allow once / reject), with the change as a diff
and labelled as the consent contract says: "You asked for this change." or "You did not ask for this
change: <reason>." Only after *allow* does the client write the file (``fs/write_text_file``).

A client that does not offer ``fs/write_text_file`` gets no write at all (Cortex never writes a file
itself); it is in strict mode: a write the user's words did not clearly ask for is refused before
anything is shown. A cancelled run sends nothing more; a write already sent is awaited (bounded) so
its outcome is true.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import text_block, tool_content
from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallLocation,
    ToolCallUpdate,
)

from cortex_lsp.acp.render import diff_content
from cortex_lsp.acp.workspace import AcpWorkspace
from cortex_lsp.config import Settings
from cortex_lsp.guards.consent import description as describe_write
from cortex_lsp.guards.consent import sink_refusal
from cortex_lsp.guards.paths import MAX_READ_BYTES, PathRefused, check_write, resolve_in_roots
from cortex_lsp.guards.workspace_files import UnsafeFile, read_untrusted_text
from cortex_lsp.ports import EditKind, EditOutcome, EditRequest
from cortex_lsp.tools.user_wait import waiting_for_user

log = logging.getLogger("cortex.acp.edits")

ALLOW = "allow"
REJECT = "reject"
ASKED = "You asked for this change."
NO_CLIENT_WRITE = ("Not written: this client does not offer fs/write_text_file, so Cortex cannot write files "
                   "here. The text is in the answer instead.")
#: how long a cancelled run waits for the client's answer to a write it already sent
SETTLE_SECONDS = 10.0

RequestPermission = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
WriteFile = Callable[[Path, str], Awaitable[Any]]


@dataclass
class WriteLog:
    """What the run's writes showed: the diff of each tool call, for its ``tool_call_update``."""

    diffs: dict[str, FileEditToolCallContent] = field(default_factory=dict)


class AcpEditSink:
    def __init__(self, *, settings: Callable[[], Settings], workspace: AcpWorkspace, protected: list[Path],
                 ask: RequestPermission, write: WriteFile | None, current_call: Callable[[], str | None],
                 cancelled: Callable[[], bool], log_: WriteLog,
                 settled: Callable[[EditOutcome], None]) -> None:
        self._settings = settings
        self._workspace = workspace
        self._protected = protected
        self._ask = ask
        self._write = write
        self._current_call = current_call
        self._cancelled = cancelled
        self._log = log_
        self._settled = settled
        self._proposals = 0

    @property
    def reviewed(self) -> bool:
        """Every write is shown and needs the user's *allow* (when the client can write at all)."""
        return self._write is not None

    async def propose(self, request: EditRequest) -> EditOutcome:
        roots = self._workspace.roots
        uri = request.path.as_uri()
        exists = request.path.exists()
        kind: EditKind = "replace" if exists else "create"
        asked = request.asked
        said = describe_write(asked, request.unasked_reason)

        def outcome(applied: bool | None, reason: str = "", declined: bool = False) -> EditOutcome:
            return EditOutcome(uri=uri, kind=kind, applied=applied, reason=reason, asked=asked,
                               description=said, declined=declined)

        # the hard rules, then strict mode when nobody can review (the same rule as every front's sink)
        if (refused := sink_refusal(request, roots, reviewed=self.reviewed)) is not None:
            return outcome(False, refused)
        if self._write is None:  # nothing can write
            return outcome(False, NO_CLIENT_WRITE)
        settings = self._settings()
        try:
            target = resolve_in_roots(str(request.path), roots, protected=self._protected)
            check_write(target, request.text, allowed_extensions=settings.allowed_write_extensions,
                        max_bytes=settings.max_write_bytes)
        except PathRefused as exc:
            return outcome(False, str(exc))
        if target.path != request.path.resolve():
            return outcome(False, "Not written: the path changed on resolution.")
        if exists and not request.overwrite:
            return outcome(False, f"Not written: {target.relative} already exists and replacing it was not asked for.")
        if self._cancelled():
            return outcome(False, "Not sent: the run was cancelled.")
        old = await self._current_text(target.path) if exists else None
        label = request.label or f"Cortex: {'replace' if exists else 'create'} {target.relative}"
        self._proposals += 1
        call_id = self._current_call() or f"write-{self._proposals}"
        diff = diff_content(str(target.path), request.text, old)
        self._log.diffs[call_id] = diff
        tool_call = ToolCallUpdate(
            tool_call_id=call_id, title=label, kind="edit", status="pending",
            content=[tool_content(text_block(said)), diff],
            locations=[ToolCallLocation(path=str(target.path))],
            field_meta={"cortex": {"asked": asked, "description": said, "label": label}},
        )
        options = [PermissionOption(option_id=ALLOW, name="Allow", kind="allow_once"),
                   PermissionOption(option_id=REJECT, name="Reject", kind="reject_once")]
        with waiting_for_user():  # the user's review is bounded by cancel, not by the tool time-out
            try:
                answer = await self._ask(tool_call, options)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                return outcome(False, f"Not written: the permission request failed ({exc}).")
        chosen = answer.outcome
        if not isinstance(chosen, AllowedOutcome) or chosen.option_id != ALLOW:
            cancelled = not isinstance(chosen, AllowedOutcome)
            return outcome(False, "Not written: the request was cancelled." if cancelled
                           else f"Not written: you rejected the change to {target.relative}.", declined=True)
        if self._cancelled():
            return outcome(False, "Not sent: the run was cancelled.")
        return await self._send(target.path, request.text, outcome)

    async def _send(self, path: Path, text: str, outcome: Callable[..., EditOutcome]) -> EditOutcome:
        assert self._write is not None
        future = asyncio.ensure_future(self._write(path, text))
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            # cancelled while the client writes: its answer still decides what the result says
            done, _ = await asyncio.wait({future}, timeout=SETTLE_SECONDS)
            if not done:
                future.cancel()
                self._settled(outcome(None, "Unknown: the run was cancelled and the editor had not answered the "
                                            f"write within {SETTLE_SECONDS:g} s; check the file."))
            elif future.exception() is not None:
                self._settled(outcome(False, "The editor did not write the file."))
            else:
                self._workspace.remember(path, text)
                self._settled(outcome(True))
            raise
        except Exception as exc:
            return outcome(False, f"Not written: the editor did not write the file ({exc}).")
        self._workspace.remember(path, text)
        return outcome(True)

    async def _current_text(self, path: Path) -> str | None:
        text = await self._workspace.read_text_async(path)
        if text is not None:
            return text
        try:
            return read_untrusted_text(path, max_bytes=MAX_READ_BYTES, strict=False)
        except (UnsafeFile, OSError, PathRefused):
            return None
