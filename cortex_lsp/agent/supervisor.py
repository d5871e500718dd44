"""The supervisor: split a request into ≤ 4 independent subtasks, run them in parallel, merge.

The split comes from the model; each subtask runs in a worker kernel (``{session}-worker-N``, no
LATS, nothing persisted, ``write_file`` withheld) under ``supervisor.max_workers`` at a time, with
``asyncio.gather``. Workers share the run's deadline, record their tool calls into the run's record,
and read the **user's own words** for every guard: a subtask is model text, never the user's request.
A merge step streams the combined answer. A request that does not split (fewer than 2 subtasks)
returns ``None`` and the kernel runs it as a single agent.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Protocol

from cortex_lsp.agent import prompts
from cortex_lsp.agent.context import RunContext
from cortex_lsp.agent.deps import AgentDeps, Emit
from cortex_lsp.agent.executor import Executor
from cortex_lsp.agent.parsing import extract_string_list
from cortex_lsp.agent.planner import tidy_steps
from cortex_lsp.agent.types import AgentRequest, AgentResult, Plan, RunRecord
from cortex_lsp.intent.intent import Intent
from cortex_lsp.models.base import ChatOptions, Message, ModelError, ModelMissing, ModelUnavailable, collect
from cortex_lsp.ports import AgentEvent, AnswerToken, StepStarted

MAX_SUBTASKS = 4
WORKER_EXCLUDED = frozenset({"write_file"})
SPLIT_FORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {"subtasks": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_SUBTASKS}},
    "required": ["subtasks"],
}


class WorkerKernel(Protocol):
    async def run(self, request: AgentRequest, emit: Emit, record: RunRecord) -> AgentResult: ...


class KernelFactory(Protocol):
    """How a worker's kernel is made (the kernel passes its own class: no import cycle back to it)."""

    def __call__(
        self,
        deps: AgentDeps,
        *,
        allow_lats: bool,
        persist: bool,
        words: str | None,
        intent: Intent | None,
        user_turns: list[str] | None,
        exclude_tools: frozenset[str],
    ) -> WorkerKernel: ...


class Supervisor:
    def __init__(
        self, deps: AgentDeps, ctx: RunContext, emit: Emit, record: RunRecord, kernel: KernelFactory
    ) -> None:
        self.deps = deps
        self.kernel = kernel
        self.ctx = ctx
        self.emit = emit
        self.record = record
        self.results: list[AgentResult] = []

    async def split(self) -> list[str]:
        messages = [Message("system", prompts.SUPERVISOR_SPLIT), Message("user", self.ctx.task)]
        try:
            reply = await collect(
                self.deps.model.chat_stream(
                    messages,
                    model=self.deps.settings.reasoning_model,
                    format=SPLIT_FORMAT,
                    options=ChatOptions(temperature=0.2, max_tokens=400),
                )
            )
        except (ModelUnavailable, ModelMissing):
            raise
        except ModelError:
            return []
        return tidy_steps(extract_string_list(reply.content, keys=("subtasks", "tasks", "steps")) or [])[
            :MAX_SUBTASKS
        ]

    def _worker_emit(self, index: int) -> Emit:
        def emit(event: AgentEvent) -> None:
            if isinstance(event, AnswerToken):
                return  # a worker's answer is material for the merge, not the answer
            self.emit(replace(event, worker=index))

        return emit

    async def _worker(self, index: int, subtask: str, gate: asyncio.Semaphore) -> AgentResult:
        async with gate:
            request = replace(
                self.ctx.request,
                message=subtask,
                orchestration="single",
                mode="ask",
                session_id=f"{self.ctx.request.session_id}-worker-{index}",
                intent=None,  # the subtask is model text; the worker acts on the user's reading (below)
            )
            sub = RunRecord(
                session_id=request.session_id,
                started=self.record.started,
                tool_calls=self.record.tool_calls,
                edits=self.record.edits,
            )
            sub.backend, sub.model = self.record.backend, self.record.model
            kernel = self.kernel(
                self.deps,
                allow_lats=False,
                persist=False,
                words=self.ctx.words,
                intent=self.ctx.intent,
                user_turns=list(self.ctx.user_turns),
                exclude_tools=WORKER_EXCLUDED,
            )
            return await kernel.run(request, self._worker_emit(index), sub)

    async def run(self) -> str | None:
        subtasks = await self.split()
        if len(subtasks) < 2:
            self.record.notes.append("supervisor: the request did not split; running it as one task")
            return None
        self.record.plan = Plan(kind="tools", steps=subtasks)
        self.emit(self.record.plan.made())
        workers = max(1, self.deps.settings.supervisor.max_workers)
        gate = asyncio.Semaphore(workers)
        self.results = list(
            await asyncio.gather(*(self._worker(i, t, gate) for i, t in enumerate(subtasks, 1)))
        )
        self.record.notes.append(f"supervisor: {len(subtasks)} subtasks, up to {workers} workers in parallel")
        parts = [
            f"[worker {i} answer to: {t}: data]\n{r.answer or '(no answer: ' + r.stop_reason + ')'}"
            for i, (t, r) in enumerate(zip(subtasks, self.results, strict=True), 1)
        ]
        self.emit(StepStarted(len(subtasks) + 1, "Merge the workers' answers"))
        messages = [
            Message("system", prompts.SUPERVISOR_MERGE),
            Message("user", self.ctx.task),
            Message("user", "\n\n".join(parts)),
        ]
        return await Executor(self.deps, self.emit, self.record).answer(messages)
