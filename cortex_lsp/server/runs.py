"""Agent runs: start, track, stream, cancel.

Each run is an asyncio task with a :class:`~cortex_lsp.agent.types.RunRecord` filled as it goes. A
run is cancelled by ``window/workDoneProgress/cancel`` (its progress token) or ``$/cancelRequest``
(the executeCommand request that started it); the task is cancelled at its next await and the result
says ``stop_reason: cancelled``. Writes are single ``applyEdit`` requests, so nothing is half-done.

Every executeCommand gets a :class:`Ticket` the moment it arrives (before any await), keyed by its
request id and ``workDoneToken``: a cancel that comes before the run has started marks the ticket,
and the run then never starts. No ``applyEdit`` is sent for a cancelled run, and an ``applyEdit``
already sent is withdrawn (``$/cancelRequest`` to the editor, which closes its review) and awaited
(shielded) so its outcome lands in the result: ``edits`` lists what the editor applied, even when the
cancel arrived while it was applying.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from cortex_lsp import telemetry
from cortex_lsp.agent.types import AgentResult, RunRecord
from cortex_lsp.agent.write_claims import honest_for_record
from cortex_lsp.ports import AgentEvent, EditKind, EditOutcome
from cortex_lsp.server.logs import run_id_var
from cortex_lsp.server.progress import RunStream

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.runs")

RunBody = Callable[[Callable[[AgentEvent], None], RunRecord], Coroutine[Any, Any, AgentResult]]


# Commands whose handler a cancel interrupts (read-only, or the sandbox, which kills its worker). Agent
# commands stop through their run; forget and reset always finish, so their answer is true.
INTERRUPTIBLE = frozenset({"cortex.run", "cortex.doctor", "cortex.memory.search", "cortex.memory.sessions"})

# How long a cancelled run waits for the editor's answer to an applyEdit it already sent.
SETTLE_SECONDS = 10.0


@dataclass
class Run:
    run_id: str
    record: RunRecord
    task: asyncio.Task[AgentResult] | None = None
    msg_id: Any = None
    tokens: set[types.ProgressToken] = field(default_factory=set)
    cancelled: bool = False


@dataclass
class Ticket:
    """One executeCommand in flight, registered when the request arrives."""

    msg_id: Any
    token: types.ProgressToken | None
    command: str = ""
    cancelled: bool = False
    run: Run | None = None
    task: asyncio.Task[Any] | None = None  # the command handler's task (interruptible commands)


class RunManager:
    def __init__(self, server: CortexServer) -> None:
        self.server = server
        self._runs: dict[str, Run] = {}
        self._by_token: dict[types.ProgressToken, str] = {}
        self._by_msg: dict[Any, str] = {}
        self._tickets: dict[Any, Ticket] = {}
        self._ticket_tokens: dict[types.ProgressToken, Ticket] = {}
        self._background: set[asyncio.Task[Any]] = set()

    # -- tickets: registered by the protocol when executeCommand arrives, before any await ---------
    def arrive(self, msg_id: Any, token: types.ProgressToken | None, command: str = "") -> None:
        ticket = Ticket(msg_id=msg_id, token=token, command=command)
        if msg_id is not None:
            self._tickets[msg_id] = ticket
        if token is not None:
            self._ticket_tokens[token] = ticket

    def depart(self, msg_id: Any) -> None:
        ticket = self._tickets.pop(msg_id, None)
        if ticket is not None and ticket.token is not None and self._ticket_tokens.get(ticket.token) is ticket:
            del self._ticket_tokens[ticket.token]

    def _cancel_ticket(self, ticket: Ticket) -> bool:
        ticket.cancelled = True
        if ticket.run is not None:
            self.cancel(ticket.run.run_id)
        elif ticket.command in INTERRUPTIBLE and ticket.task is not None and not ticket.task.done():
            ticket.task.cancel()
        log.info("cancel received for request %r", ticket.msg_id)
        return True

    def cancellable(self, msg_id: Any, handler: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
        """``handler`` as a coroutine whose task a cancel of an interruptible command stops (the request
        then answers RequestCancelled). Agent runs stop through their run instead, with a result."""

        async def cancellable_handler(*args: Any, **kwargs: Any) -> Any:
            ticket = self._tickets.get(msg_id)
            if ticket is not None:
                ticket.task = asyncio.current_task()
                if ticket.cancelled and ticket.command in INTERRUPTIBLE:
                    raise JsonRpcRequestCancelled(f"{ticket.command} was cancelled before it started")
            try:
                result = handler(*args, **kwargs)
                return await result if inspect.isawaitable(result) else result
            except asyncio.CancelledError:
                if ticket is not None and ticket.cancelled:
                    raise JsonRpcRequestCancelled(f"{ticket.command} was cancelled") from None
                raise

        return cancellable_handler

    def is_cancelled(self, run_id: str | None) -> bool:
        run = self._runs.get(run_id or "")
        return run is not None and run.cancelled

    # -- bookkeeping used by RunStream and the protocol --------------------------------------------
    def bind_token(self, token: types.ProgressToken, run_id: str) -> None:
        self._by_token[token] = run_id

    def unbind_token(self, token: types.ProgressToken) -> None:
        self._by_token.pop(token, None)

    def cancel_by_token(self, token: types.ProgressToken) -> bool:
        ticket = self._ticket_tokens.get(token)
        if ticket is not None:
            return self._cancel_ticket(ticket)
        run_id = self._by_token.get(token)
        return self.cancel(run_id) if run_id else False

    def cancel_by_msg(self, msg_id: Any) -> bool:
        """``$/cancelRequest``: True when the request is ours (it then answers with the run's result)."""
        ticket = self._tickets.get(msg_id)
        if ticket is not None:
            return self._cancel_ticket(ticket)
        run_id = self._by_msg.get(msg_id)
        return self.cancel(run_id) if run_id else False

    def cancel(self, run_id: str) -> bool:
        run = self._runs.get(run_id)
        if run is None:
            return False
        run.cancelled = True
        if run.task is None or run.task.done():
            return True
        log.info("cancelling run", extra={"run_id": run_id})
        run.task.cancel()
        return True

    # -- the one applyEdit call: never after a cancel, and its outcome always recorded -------------
    async def apply_edit(self, params: types.ApplyWorkspaceEditParams, *, uri: str, kind: EditKind) -> EditOutcome:
        with telemetry.span("edit", {"cortex.edit.kind": kind}, content={"cortex.edit.uri": uri}) as span:
            outcome = await self._apply_edit(params, uri=uri, kind=kind)
            review = _review(outcome)
            span.set({"cortex.edit.review": review})
        telemetry.record_review(review)
        return outcome

    async def _apply_edit(self, params: types.ApplyWorkspaceEditParams, *, uri: str, kind: EditKind) -> EditOutcome:
        run = self._runs.get(run_id_var.get() or "")
        if run is not None and run.cancelled:
            return EditOutcome(uri=uri, kind=kind, applied=False, reason="Not sent: the run was cancelled.")
        msg_id = f"cortex-edit-{uuid.uuid4().hex}"
        future = asyncio.ensure_future(
            self.server.protocol.send_request_async(types.WORKSPACE_APPLY_EDIT, params, msg_id=msg_id))
        try:
            result = await asyncio.shield(future)
        except asyncio.CancelledError:
            # Cancelled while the editor applies it (or while the user reviews it): withdraw the request, so
            # an editor showing a review closes it, and wait (bounded) for its answer, so the result is true.
            self.server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            outcome = await _settle(future, uri, kind)
            if run is not None:
                run.record.edits.append(outcome)
            raise
        except Exception as exc:
            log.warning("applyEdit failed: %s", exc)
            return EditOutcome(uri=uri, kind=kind, applied=False, reason=f"The editor did not apply the edit: {exc}")
        return _outcome(result, uri, kind)

    @property
    def active(self) -> int:
        return sum(1 for r in self._runs.values() if r.task is not None and not r.task.done())

    # -- running -----------------------------------------------------------------------------------
    async def execute(self, *, title: str, session_id: str, body: RunBody, wait: bool,
                      work_done_token: types.ProgressToken | None, msg_id: Any) -> dict[str, Any]:
        run_id = uuid.uuid4().hex[:12]
        record = RunRecord(session_id=session_id)
        run = Run(run_id=run_id, record=record, msg_id=msg_id)
        self._runs[run_id] = run
        ticket = self._tickets.get(msg_id) if msg_id is not None and wait else None
        if ticket is not None:
            ticket.run = run
            run.cancelled = ticket.cancelled
        if msg_id is not None and wait:
            self._by_msg[msg_id] = run_id
        command = ticket.command if ticket is not None and ticket.command else title
        coro = self._drive(run, title, body, work_done_token if wait else None, command)
        if not wait:
            task = asyncio.create_task(coro)
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return {"run_id": run_id, "session_id": session_id}
        return await coro

    async def _drive(self, run: Run, title: str, body: RunBody,
                     token: types.ProgressToken | None, command: str = "") -> dict[str, Any]:
        run_id_var.set(run.run_id)
        await telemetry.ready()
        with telemetry.run_span(command=command or title, run_id=run.run_id, session_id=run.record.session_id):
            return await self._drive_run(run, title, body, token)

    async def _drive_run(self, run: Run, title: str, body: RunBody,
                         token: types.ProgressToken | None) -> dict[str, Any]:
        try:
            async with RunStream(self.server, run.run_id, title, token) as stream:
                if run.cancelled:  # cancelled before it started (or while the progress token was created)
                    run.record.notes.append("Cancelled before the run started; nothing was done.")
                    return self._finish(run, stream, run.record.result("cancelled"))
                run.task = asyncio.create_task(body(stream, run.record))
                try:
                    result = await asyncio.shield(run.task)
                except asyncio.CancelledError:
                    # Either the run was cancelled (task cancelled) or our own waiter was: stop the run.
                    if not run.task.done():
                        run.task.cancel()
                        try:
                            await run.task
                        except (asyncio.CancelledError, Exception):
                            pass
                    # the writes as they stand (an edit the editor had not answered is "unknown — check")
                    result = run.record.result("cancelled", answer=honest_for_record(run.record.answer, run.record))
                except Exception as exc:
                    log.exception("run failed")
                    stream.event(AgentEvent("error", {"message": f"Internal error: {exc.__class__.__name__}: {exc}"}))
                    result = run.record.result("error", answer=f"Cortex hit an internal error: {exc}")
                return self._finish(run, stream, result)
        finally:
            self._runs.pop(run.run_id, None)
            if run.msg_id is not None:
                self._by_msg.pop(run.msg_id, None)

    @staticmethod
    def _finish(run: Run, stream: RunStream, result: AgentResult) -> dict[str, Any]:
        payload = result.as_dict()
        payload["run_id"] = run.run_id
        info = telemetry.current_run()
        if info is not None:
            info.attrs["cortex.run.outcome"] = result.stop_reason
            telemetry.record_run(result.stop_reason, info.steps, info.command)
        stream.set_summary(_summary(result))
        stream.flush()
        stream.notify("done", payload)
        return payload

    async def aclose(self) -> None:
        for run in list(self._runs.values()):
            if run.task is not None:
                run.task.cancel()
        for task in list(self._background):
            task.cancel()


async def _settle(future: asyncio.Future[Any], uri: str, kind: EditKind) -> EditOutcome:
    """The outcome of an applyEdit already sent, waiting at most SETTLE_SECONDS through further cancels."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_SECONDS
    while not future.done() and loop.time() < deadline:
        try:
            await asyncio.wait({future}, timeout=deadline - loop.time())
        except asyncio.CancelledError:
            continue
    if not future.done():
        future.cancel()
        return EditOutcome(uri=uri, kind=kind, applied=None,  # unknown, never reported as "not written"
                           reason="Unknown: the run was cancelled and the editor had not answered the edit "
                                  f"within {SETTLE_SECONDS:g} s; check the file.")
    if future.cancelled() or future.exception() is not None:
        return EditOutcome(uri=uri, kind=kind, applied=False, reason="The editor did not apply the edit.")
    return _outcome(future.result(), uri, kind)


def _outcome(result: Any, uri: str, kind: EditKind) -> EditOutcome:
    if not getattr(result, "applied", False):
        why = getattr(result, "failure_reason", None) or "the editor declined it"
        return EditOutcome(uri=uri, kind=kind, applied=False, reason=f"Not written: {why}.")
    return EditOutcome(uri=uri, kind=kind, applied=True)


def _review(outcome: EditOutcome) -> str:
    """accepted (applied), rejected (declined or not sent) or unknown (no answer in time)."""
    if outcome.applied is None:
        return "unknown"
    return "accepted" if outcome.applied else "rejected"


def _summary(result: AgentResult) -> str:
    words = {
        "answered": "Answered",
        "cancelled": "Cancelled",
        "refused": "Refused",
        "model_unavailable": "Model unavailable",
        "step_budget": "Stopped at the step budget",
        "time_budget": "Stopped at the time budget",
        "error": "Failed",
    }
    tools = f", {len(result.tool_calls)} tool call(s)" if result.tool_calls else ""
    edits = sum(1 for e in result.edits if e.applied)
    edit_text = f", {edits} edit(s)" if edits else ""
    return f"{words.get(result.stop_reason, result.stop_reason)} in {result.elapsed_ms / 1000:.1f} s{tools}{edit_text}"
