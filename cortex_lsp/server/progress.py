"""Work-done progress and ``cortex/event`` streaming for one run.

``RunStream`` is an async context manager: it takes the client's ``workDoneToken`` or creates one
(only when the client supports it), sends ``begin`` (cancellable), a ``report`` per plan, step, tool
call, tool result and answer chunk — tokens coalesced to at most ~20 messages a second — and always
sends ``end``, whatever happened. The same events go out as ``cortex/event`` notifications.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cortex_lsp.ports import AgentEvent
from cortex_lsp.server.capabilities import supports_work_done_progress

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.progress")

EVENT_METHOD = "cortex/event"
FLUSH_INTERVAL = 0.06  # seconds: ≤ 17 coalesced token reports a second, leaving room for step reports (≤ 20/s)


def describe(event: AgentEvent) -> str:
    """A one-line status for the editor's progress display."""
    data = event.data
    if event.type == "plan":
        steps = data.get("steps") or []
        return f"Plan ({data.get('kind', '?')}): " + "; ".join(str(s) for s in steps)[:200]
    if event.type == "step_start":
        return f"Step {data.get('step')}: {str(data.get('description', ''))[:160]}"
    if event.type == "tool_call":
        return f"Calling {data.get('tool')}"
    if event.type == "tool_result":
        state = "ok" if data.get("success") else "failed"
        return f"{data.get('tool')} {state}"
    if event.type == "edit":
        state = "applied" if data.get("applied") else "not applied"
        return f"Edit {data.get('kind')} {data.get('uri')}: {state}"
    if event.type == "error":
        return f"Error: {str(data.get('message', ''))[:200]}"
    return event.type


class RunStream:
    def __init__(self, server: CortexServer, run_id: str, title: str,
                 client_token: types.ProgressToken | None) -> None:
        self.server = server
        self.run_id = run_id
        self.title = title
        self.token: types.ProgressToken | None = client_token
        self._client_token = client_token is not None
        self._pending_tokens: list[str] = []
        self._answer_chars = 0
        self._last_flush = 0.0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._began = False
        self.reports = 0

    async def __aenter__(self) -> RunStream:
        if self.token is None and supports_work_done_progress(self.server.client_capabilities):
            token = f"cortex-{self.run_id}-{uuid.uuid4().hex[:6]}"
            try:
                await asyncio.wait_for(self.server.work_done_progress.create_async(token), timeout=5)
                self.token = token
            except Exception as exc:  # the client refused or never answered: stream events only
                log.warning("progress token not created: %s", exc)
                self.token = None
        if self.token is not None:
            self.server.work_done_progress.begin(
                self.token,
                types.WorkDoneProgressBegin(title=self.title, cancellable=True, message="Starting…"),
            )
            self._began = True
            self.server.runs.bind_token(self.token, self.run_id)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.end(self._summary or "Stopped")

    _summary = ""

    def set_summary(self, text: str) -> None:
        self._summary = text

    # -- events ----------------------------------------------------------------------------------
    def event(self, event: AgentEvent) -> None:
        """Send one agent event (tokens are coalesced)."""
        if event.type == "token":
            self._pending_tokens.append(str(event.data.get("value", "")))
            now = time.monotonic()
            if now - self._last_flush >= FLUSH_INTERVAL:
                self.flush()
            elif self._flush_handle is None:
                loop = asyncio.get_running_loop()
                self._flush_handle = loop.call_later(FLUSH_INTERVAL - (now - self._last_flush), self.flush)
            return
        self.flush()
        self.notify(event.type, event.data)
        self._report(describe(event))

    def flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._pending_tokens:
            return
        text = "".join(self._pending_tokens)
        self._pending_tokens.clear()
        self._last_flush = time.monotonic()
        self._answer_chars += len(text)
        self.notify("token", {"value": text})
        self._report(f"Answering… {self._answer_chars} chars")

    def notify(self, type_: str, data: dict[str, Any]) -> None:
        self.server.protocol.notify(EVENT_METHOD, {"run_id": self.run_id, "type": type_, "data": data})

    def _report(self, message: str) -> None:
        if self.token is None or not self._began:
            return
        self.reports += 1
        self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        self.flush()
        if self.token is not None and self._began:
            self._began = False
            try:
                self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            finally:
                self.server.runs.unbind_token(self.token)
                self.server.work_done_progress.tokens.pop(self.token, None)
