"""Agent runs: start, track, stream, cancel.

Each run is an asyncio task with a :class:`~cortex_lsp.agent.types.RunRecord` filled as it goes. A
run is cancelled by ``window/workDoneProgress/cancel`` (its progress token) or ``$/cancelRequest``
(the executeCommand request that started it); the task is cancelled at its next await and the result
says ``stop_reason: cancelled``. Writes are single ``applyEdit`` requests, so nothing is half-done.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cortex_lsp.agent.types import AgentResult, RunRecord
from cortex_lsp.ports import AgentEvent
from cortex_lsp.server.logs import run_id_var
from cortex_lsp.server.progress import RunStream

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.runs")

RunBody = Callable[[Callable[[AgentEvent], None], RunRecord], Coroutine[Any, Any, AgentResult]]


@dataclass
class Run:
    run_id: str
    record: RunRecord
    task: asyncio.Task[AgentResult] | None = None
    msg_id: Any = None
    tokens: set[types.ProgressToken] = field(default_factory=set)


class RunManager:
    def __init__(self, server: CortexServer) -> None:
        self.server = server
        self._runs: dict[str, Run] = {}
        self._by_token: dict[types.ProgressToken, str] = {}
        self._by_msg: dict[Any, str] = {}
        self._background: set[asyncio.Task[Any]] = set()

    # -- bookkeeping used by RunStream and the protocol --------------------------------------------
    def bind_token(self, token: types.ProgressToken, run_id: str) -> None:
        self._by_token[token] = run_id

    def unbind_token(self, token: types.ProgressToken) -> None:
        self._by_token.pop(token, None)

    def cancel_by_token(self, token: types.ProgressToken) -> bool:
        run_id = self._by_token.get(token)
        return self.cancel(run_id) if run_id else False

    def cancel_by_msg(self, msg_id: Any) -> bool:
        run_id = self._by_msg.get(msg_id)
        return self.cancel(run_id) if run_id else False

    def cancel(self, run_id: str) -> bool:
        run = self._runs.get(run_id)
        if run is None or run.task is None or run.task.done():
            return False
        log.info("cancelling run", extra={"run_id": run_id})
        run.task.cancel()
        return True

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
        if msg_id is not None and wait:
            self._by_msg[msg_id] = run_id
        coro = self._drive(run, title, body, work_done_token if wait else None)
        if not wait:
            task = asyncio.create_task(coro)
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return {"run_id": run_id, "session_id": session_id}
        return await coro

    async def _drive(self, run: Run, title: str, body: RunBody,
                     token: types.ProgressToken | None) -> dict[str, Any]:
        run_id_var.set(run.run_id)
        try:
            async with RunStream(self.server, run.run_id, title, token) as stream:
                run.task = asyncio.create_task(body(stream.event, run.record))
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
                    result = run.record.result("cancelled")
                except Exception as exc:
                    log.exception("run failed")
                    stream.event(AgentEvent("error", {"message": f"Internal error: {exc.__class__.__name__}: {exc}"}))
                    result = run.record.result("error", answer=f"Cortex hit an internal error: {exc}")
                payload = result.as_dict()
                payload["run_id"] = run.run_id
                stream.set_summary(_summary(result))
                stream.flush()
                stream.notify("done", payload)
                return payload
        finally:
            self._runs.pop(run.run_id, None)
            if run.msg_id is not None:
                self._by_msg.pop(run.msg_id, None)

    async def aclose(self) -> None:
        for run in list(self._runs.values()):
            if run.task is not None:
                run.task.cancel()
        for task in list(self._background):
            task.cancel()


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
