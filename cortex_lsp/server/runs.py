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
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from cortex_lsp import telemetry
from cortex_lsp.agent.types import AgentResult, RunRecord
from cortex_lsp.ports import EditKind, EditOutcome
from cortex_lsp.runtime.runner import RunBody, settle
from cortex_lsp.server.logs import run_id_var
from cortex_lsp.server.progress import RunStream
from cortex_lsp.server.wire import result_payload

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.runs")

# Commands whose handler a cancel interrupts (read-only, the sandbox, which kills its worker, or an apply,
# whose edit a cancel withdraws and settles like an agent's). Agent
# commands stop through their run; forget and reset always finish, so their answer is true.
INTERRUPTIBLE = frozenset({"cortex.run", "cortex.doctor", "cortex.memory.search", "cortex.memory.sessions",
                           "cortex.session.turns", "cortex.apply"})
# at shutdown these are waited for, never cut short (their answer says what they did)
FINISH_AT_SHUTDOWN = frozenset({"cortex.memory.forget", "cortex.memory.reset"})

# How long a cancelled run waits for the editor's answer to an applyEdit it already sent.
SETTLE_SECONDS = 10.0
#: at shutdown, how long the runs and commands in flight get to unwind before the services close
CLOSE_SECONDS = 6.0


@dataclass
class Run:
    run_id: str
    record: RunRecord
    task: asyncio.Task[AgentResult] | None = None
    msg_id: Any = None
    tokens: set[types.ProgressToken] = field(default_factory=set)
    cancelled: bool = False


class CancelledEarly(Exception):
    """An agent command was cancelled before its run started; ``result`` is what the request answers."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("cancelled before the run started")
        self.result = result


@dataclass
class Ticket:
    """One executeCommand in flight, registered when the request arrives."""

    msg_id: Any
    token: types.ProgressToken | None
    command: str = ""
    cancelled: bool = False
    run: Run | None = None
    task: asyncio.Task[Any] | None = None  # the command handler's task (interruptible commands)
    #: an agent command's progress, begun the moment it arrives (before the wait for imports, memory, the
    #: session): the run streams on it, and a cancel before the run starts ends it at once
    early: RunStream | None = None
    early_run_id: str = ""
    stopped: asyncio.Event = field(default_factory=asyncio.Event)


class RunManager:
    def __init__(self, server: CortexServer) -> None:
        self.server = server
        self._runs: dict[str, Run] = {}
        self._by_token: dict[types.ProgressToken, str] = {}
        self._by_msg: dict[Any, str] = {}
        self._tickets: dict[Any, Ticket] = {}
        self._ticket_tokens: dict[types.ProgressToken, Ticket] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._closing = False

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
        ticket.stopped.set()
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
        if run_id and run_id not in self._runs:  # a token begun early, before its run exists
            early = next((t for t in self._tickets.values() if t.early_run_id == run_id), None)
            if early is not None:
                return self._cancel_ticket(early)
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
    async def apply_edit(self, params: types.ApplyWorkspaceEditParams, *, uri: str, kind: EditKind,
                         asked: bool = False, description: str = "") -> EditOutcome:
        """Send the edit and wait for the editor's answer; the outcome carries the review's label."""
        with telemetry.span("edit", {"cortex.edit.kind": kind, "cortex.edit.asked": asked},
                            content={"cortex.edit.uri": uri}) as span:
            outcome = await self._apply_edit(params, uri=uri, kind=kind)
            review = _review(outcome)
            span.set({"cortex.edit.review": review})
        telemetry.record_review(review)
        return replace(outcome, asked=asked, description=description)

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

    # -- feedback at once: progress begun before the run can start --------------------------------
    async def begin_early(self, msg_id: Any, title: str, token: types.ProgressToken | None) -> None:
        """Begin the progress of the agent command ``msg_id`` now ("Starting…"), before anything it waits
        for (the warm-up's imports, the memory store, the session): the editor shows it at once."""
        ticket = self._tickets.get(msg_id)
        if ticket is None or ticket.early is not None:
            return
        ticket.early_run_id = uuid.uuid4().hex[:12]
        ticket.early = RunStream(self.server, ticket.early_run_id, title, token)
        await ticket.early.__aenter__()
        if ticket.cancelled:
            ticket.stopped.set()

    async def until_started(self, msg_id: Any, preparing: Coroutine[Any, Any, Any]) -> Any:
        """``preparing`` (parsing, waiting for imports and memory) unless a cancel comes first: then
        :class:`CancelledEarly` carries the cancelled result at once. A preparation left behind finishes
        in the background (never interrupted halfway through opening the store)."""
        ticket = self._tickets.get(msg_id)
        task = asyncio.ensure_future(preparing)
        if ticket is None:
            return await task
        if not ticket.stopped.is_set():
            stop = asyncio.ensure_future(ticket.stopped.wait())
            try:
                await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                task.cancel()
                raise
            finally:
                stop.cancel()
        if task.done() and not ticket.stopped.is_set():
            return task.result()
        if not task.done():
            self._background.add(task)
            task.add_done_callback(self._left_behind)
        raise CancelledEarly(self.cancelled_early(ticket))

    def _left_behind(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.info("a cancelled command's preparation failed: %s", task.exception())

    def cancelled_early(self, ticket: Ticket, session_id: str = "") -> dict[str, Any]:
        """The result of an agent command cancelled before its run started; its progress ends now."""
        record = RunRecord(session_id=session_id)
        record.notes.append("Cancelled before the run started; nothing was done.")
        result = record.result("cancelled")
        payload = result_payload(result, ticket.early_run_id)
        stream = ticket.early
        if stream is not None:
            stream.set_summary(_summary(result))
            stream.notify("done", payload)
            stream.end(_summary(result))
        return payload

    def end_early(self, msg_id: Any, message: str) -> None:
        """The command failed before its run (bad arguments): its progress ends with ``message``."""
        ticket = self._tickets.get(msg_id)
        if ticket is not None and ticket.early is not None and ticket.run is None:
            ticket.early.end(message)

    # -- running -----------------------------------------------------------------------------------
    async def execute(self, *, title: str, session_id: str, body: RunBody, wait: bool,
                      work_done_token: types.ProgressToken | None, msg_id: Any) -> dict[str, Any]:
        early = self._tickets.get(msg_id) if msg_id is not None else None
        stream = early.early if early is not None else None
        run_id = early.early_run_id if early is not None and stream is not None else uuid.uuid4().hex[:12]
        record = RunRecord(session_id=session_id)
        run = Run(run_id=run_id, record=record, msg_id=msg_id)
        run.cancelled = self._closing  # the server is shutting down: it ends as cancelled, doing nothing
        self._runs[run_id] = run
        ticket = self._tickets.get(msg_id) if msg_id is not None and wait else None
        if ticket is not None:
            ticket.run = run
            run.cancelled = ticket.cancelled or self._closing
        if stream is not None and early is not None:
            early.run = run  # a later cancel goes to the run
        if msg_id is not None and wait:
            self._by_msg[msg_id] = run_id
        if stream is not None and not wait:  # the request answers now: the run gets a token of its own
            stream.end("Running in the background")
            stream = None
        command = ticket.command if ticket is not None and ticket.command else title
        coro = self._drive(run, title, body, work_done_token if wait else None, stream, command)
        if not wait:
            task = asyncio.create_task(coro)
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return {"run_id": run_id, "session_id": session_id}
        return await coro

    async def _drive(self, run: Run, title: str, body: RunBody, token: types.ProgressToken | None,
                     early: RunStream | None = None, command: str = "") -> dict[str, Any]:
        run_id_var.set(run.run_id)
        await telemetry.ready()
        with telemetry.run_span(command=command or title, run_id=run.run_id, session_id=run.record.session_id):
            return await self._drive_run(run, title, body, token, early)

    async def _drive_run(self, run: Run, title: str, body: RunBody,
                         token: types.ProgressToken | None, early: RunStream | None) -> dict[str, Any]:
        try:
            async with early or RunStream(self.server, run.run_id, title, token) as stream:
                if run.cancelled:  # cancelled before it started (or while the progress token was created)
                    run.record.notes.append("Cancelled before the run started; nothing was done.")
                    return self._finish(run, stream, run.record.result("cancelled"))
                run.task = asyncio.create_task(body(stream, run.record))
                result = await settle(run.task, run.record, stream.event)
                return self._finish(run, stream, result)
        finally:
            self._runs.pop(run.run_id, None)
            if run.msg_id is not None:
                self._by_msg.pop(run.msg_id, None)

    @staticmethod
    def _finish(run: Run, stream: RunStream, result: AgentResult) -> dict[str, Any]:
        payload = result_payload(result, run.run_id)
        info = telemetry.current_run()
        if info is not None:
            info.attrs["cortex.run.outcome"] = result.stop_reason
            telemetry.record_run(result.stop_reason, info.steps, info.command)
        stream.set_summary(_summary(result))
        stream.flush()
        stream.notify("done", payload)
        return payload

    async def aclose(self) -> None:
        """Stop every run and every command still in flight, and wait (at most CLOSE_SECONDS) until they
        have unwound: the memory store and the model close after this, so nothing may still use them.
        A command that reaches :meth:`execute` from now on ends as cancelled before it starts."""
        self._closing = True
        me = asyncio.current_task()
        stopping: set[asyncio.Task[Any]] = set()
        for ticket in list(self._tickets.values()):
            ticket.cancelled = True
            task = ticket.task
            if task is not None and task is not me and not task.done():
                if ticket.run is None and ticket.command not in FINISH_AT_SHUTDOWN:
                    task.cancel()  # still before its run (opening memory, starting the model)
                stopping.add(task)
        for run in list(self._runs.values()):
            run.cancelled = True
            if run.task is not None and not run.task.done():
                run.task.cancel()
                stopping.add(run.task)
        for task in list(self._background):
            task.cancel()
            stopping.add(task)
        if stopping:
            _, late = await asyncio.wait(stopping, timeout=CLOSE_SECONDS)
            if late:
                log.warning("shutdown: %d run(s) still unwinding after %g s", len(late), CLOSE_SECONDS)


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
    if future.cancelled() or future.exception() is not None:  # the review was withdrawn: sent, not applied
        return EditOutcome(uri=uri, kind=kind, applied=False, declined=True,
                           reason="The editor did not apply the edit (the run was cancelled during its review).")
    return _outcome(future.result(), uri, kind)


def _outcome(result: Any, uri: str, kind: EditKind) -> EditOutcome:
    if not getattr(result, "applied", False):
        why = str(getattr(result, "failure_reason", None) or "").strip().rstrip(".")
        name = PurePosixPath(unquote(urlparse(uri).path)).name
        reason = f"Not written: {name} was declined" + (f" ({why})." if why else ".")
        return EditOutcome(uri=uri, kind=kind, applied=False, reason=reason, declined=True)
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
