"""Running one agent request, the same way for every front: deps, kernel, cancel, an honest result.

:func:`agent_body` is what a run executes (build the kernel's deps, run the kernel, say what the answer
did not see); :func:`settle` waits for that run's task and turns a cancel or a crash into a truthful
:class:`~cortex_lsp.agent.types.AgentResult` (``cancelled`` with the writes as they stand, or ``error``).
A front keeps the task to cancel it (LSP: ``$/cancelRequest`` / progress cancel; ACP: ``session/cancel``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from cortex_lsp.agent.ledger import with_ledger
from cortex_lsp.agent.types import AgentRequest, AgentResult, RunRecord
from cortex_lsp.models.base import ModelError
from cortex_lsp.ports import AgentEvent, AnswerToken, ErrorReported

if TYPE_CHECKING:
    from cortex_lsp.agent.deps import AgentDeps

log = logging.getLogger("cortex.runs")

Emit = Callable[[AgentEvent], None]
RunBody = Callable[[Emit, RunRecord], Coroutine[Any, Any, AgentResult]]


def agent_body(deps: Callable[[], Awaitable[AgentDeps]], request: AgentRequest, backend_info: Callable[[], Any],
               notes: list[str] | None = None) -> RunBody:
    """The run of ``request``: ``deps()`` builds what the kernel needs (a model server that is down
    becomes ``model_unavailable`` with its advice); ``notes`` (e.g. a truncated selection) end the answer."""

    async def body(emit: Emit, record: RunRecord) -> AgentResult:
        record.notes.extend(notes or ())
        try:
            built = await deps()
        except ModelError as exc:
            emit(ErrorReported(exc.user_message()))
            return record.result("model_unavailable", answer=exc.user_message())
        info = backend_info()
        record.backend = getattr(info, "backend", built.model.backend)
        record.model = getattr(info, "chat_model", None) or ""
        from cortex_lsp.agent.kernel import AgentKernel

        result = await AgentKernel(built).run(request, emit, record)
        for note in notes or ():  # the answer itself says what it did not see
            emit(AnswerToken(f"\n\n({note})"))
            result.answer = f"{result.answer.rstrip()}\n\n({note})"
        return result

    return body


async def settle(task: asyncio.Task[AgentResult], record: RunRecord, emit: Emit) -> AgentResult:
    """The result of the run ``task``: its own, or ``cancelled`` / ``error`` built from ``record``.

    A cancel of the caller (or of the task) stops the task and waits for it, so nothing is half-done when
    this returns; the answer then states the writes as they stand (an unanswered edit is "unknown")."""
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        # Either the run was cancelled (task cancelled) or our own waiter was: stop the run.
        if not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        return record.result("cancelled", answer=with_ledger(record.answer, record))
    except Exception as exc:
        log.exception("run failed")
        emit(ErrorReported(f"Internal error: {exc.__class__.__name__}: {exc}"))
        return record.result("error", answer=f"Cortex hit an internal error: {exc}")
