"""Work-done progress and ``cortex/event`` streaming for one run.

``RunStream`` is an async context manager: it takes the client's ``workDoneToken`` or asks the client
to create one (only when the client supports it) *without waiting for the reply*: the run starts at
once, and progress begins when the client says yes (holding only the latest message until then; a
refusal, or a reply after the run ended, means events only). It sends ``begin`` (cancellable), a
``report`` per plan, step, tool call, tool result and answer chunk — tokens coalesced to at most ~20
messages a second — and always sends ``end``, whatever happened. Messages are words for the user
("Step 2: Read stats.py", "read_file stats.py", "Answering…"), never byte counts. The same events go
out as ``cortex/event`` notifications.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any, assert_never

from lsprotocol import types

from cortex_lsp.ports import (
    AgentEvent,
    AnswerToken,
    EditReported,
    ErrorReported,
    EventType,
    PlanMade,
    StepStarted,
    ToolCalled,
    ToolReturned,
)
from cortex_lsp.runtime.updates import short as _short
from cortex_lsp.runtime.updates import short_arguments
from cortex_lsp.server.capabilities import supports_work_done_progress
from cortex_lsp.server.wire import event_data

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.progress")

EVENT_METHOD = "cortex/event"
FLUSH_INTERVAL = 0.06  # seconds: ≤ 17 coalesced token reports a second, leaving room for step reports (≤ 20/s)


ANSWERING = "Answering…"


def describe(event: AgentEvent) -> str:
    """A one-line status for the editor's progress display, in words a user wants to read."""
    match event:
        case PlanMade():
            if event.kind == "tools" and len(event.steps) > 1:
                return _short(f"Plan: {len(event.steps)} steps — {event.steps[0]}")
            return "Thinking…"  # a one-step or direct plan says nothing the next message won't
        case StepStarted():
            return _short(f"Step {event.step}: {event.description}")
        case ToolCalled():
            return _short(f"{event.tool} {short_arguments(dict(event.arguments))}".strip())
        case ToolReturned():
            return f"{event.tool} ✔" if event.success else f"{event.tool} ✘"
        case EditReported():
            name = event.edit.uri.rstrip("/").rsplit("/", 1)[-1]
            return f"Wrote {name}" if event.edit.applied else f"Not written: {name}"
        case ErrorReported():
            return _short(f"Error: {event.message}")
        case AnswerToken():
            return ANSWERING
        case _:
            assert_never(event)


class RunStream:
    def __init__(self, server: CortexServer, run_id: str, title: str,
                 client_token: types.ProgressToken | None) -> None:
        self.server = server
        self.run_id = run_id
        self.title = title
        self.token: types.ProgressToken | None = client_token
        self._client_token = client_token is not None
        self._pending_tokens: list[str] = []
        self._last_flush = 0.0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._began = False
        self._ended = False
        #: the latest message while the client has not yet answered ``workDoneProgress/create``
        self._held = "Starting…"
        self._last_message = ""
        self.reports = 0
        self._entered = False

    async def __aenter__(self) -> RunStream:
        if self._entered:  # begun early (runs.RunManager.begin_early), then run in
            return self
        self._entered = True
        if self.token is not None:
            self._begin(self.token)
        elif supports_work_done_progress(self.server.client_capabilities):
            token = f"cortex-{self.run_id}-{uuid.uuid4().hex[:6]}"
            # Bound to the run before the create request goes out: a cancel with this token at any moment
            # after the client has seen it (even before begin) stops the run.
            self._created_token = token
            self.server.runs.bind_token(token, self.run_id)
            # Never wait for the reply (a client may answer late or not at all): the run goes on.
            reply = self.server.protocol.send_request(
                types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WorkDoneProgressCreateParams(token=token))
            asyncio.wrap_future(reply).add_done_callback(lambda done: self._created(token, done))
        return self

    def _created(self, token: str, reply: asyncio.Future[Any]) -> None:
        if reply.cancelled() or reply.exception() is not None:
            log.info("progress token not created: %s", "cancelled" if reply.cancelled() else reply.exception())
            return
        try:
            if self._ended:  # the run is over: close the token the client made (begin, end), no reports
                final = self._summary or "Stopped"
                self.server.work_done_progress.begin(
                    token, types.WorkDoneProgressBegin(title=self.title, cancellable=False, message=final))
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=final))
                self.server.work_done_progress.tokens.pop(token, None)
                return
            self.token = token
            self._begin(token)
        except Exception as exc:  # e.g. the client went away meanwhile: the run streams events only
            log.info("progress not begun: %s", exc)

    def _begin(self, token: types.ProgressToken) -> None:
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=self.title, cancellable=True, message=self._held),
        )
        self._began = True
        self._last_message = self._held
        self.server.runs.bind_token(token, self.run_id)

    async def __aexit__(self, *exc: object) -> None:
        self.end(self._summary or "Stopped")

    _summary = ""
    _created_token: types.ProgressToken | None = None

    def set_summary(self, text: str) -> None:
        self._summary = text

    # -- events ----------------------------------------------------------------------------------
    def event(self, event: AgentEvent) -> None:
        """Send one agent event (tokens are coalesced)."""
        if isinstance(event, AnswerToken):
            self.write_token(event.value)
            return
        self.flush()
        self.notify(event.type, event_data(event))
        self._report(describe(event))

    __call__ = event  # the run's ``emit``; also a TokenSink (``write_token``, ``flush_tokens``)

    def write_token(self, text: str) -> None:
        """One piece of the answer: buffered; the coalescer sends the buffer once per tick.

        Per token this is a list append and an attribute test; the clock is read, and a timer set,
        once per tick (the first token after a quiet spell goes out at once).
        """
        self._pending_tokens.append(text)
        if self._flush_handle is None:
            wait = FLUSH_INTERVAL - (time.monotonic() - self._last_flush)
            if wait <= 0:
                self.flush()
            else:
                self._flush_handle = asyncio.get_running_loop().call_later(wait, self.flush)

    def flush_tokens(self) -> None:
        """The answer is complete: its buffered tail goes out now."""
        self.flush()

    def flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._pending_tokens:
            return
        text = "".join(self._pending_tokens)
        self._pending_tokens.clear()
        self._last_flush = time.monotonic()
        self.notify(AnswerToken.type, event_data(AnswerToken(text)))
        self._report(ANSWERING)

    def notify(self, type_: EventType, data: dict[str, Any]) -> None:
        """One ``cortex/event`` notification: ``data`` from :mod:`cortex_lsp.server.wire`."""
        self.server.protocol.notify(EVENT_METHOD, {"run_id": self.run_id, "type": type_, "data": data})

    def _report(self, message: str) -> None:
        if self.token is None or not self._began:
            self._held = message  # begin shows it once the client has made the token
            return
        if message == self._last_message:  # "Answering…" once, not once per chunk
            return
        self._last_message = message
        self.reports += 1
        self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def end(self, message: str) -> None:
        self.flush()
        self._ended = True
        if self._created_token is not None:
            self.server.runs.unbind_token(self._created_token)
        if self.token is not None and self._began:
            self._began = False
            try:
                self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            finally:
                self.server.runs.unbind_token(self.token)
                self.server.work_done_progress.tokens.pop(self.token, None)
