"""How a run ends when it cannot simply answer: the refusal, the best-effort answer at a budget, the save step.

Plain functions of the run's context, tool session and executor, called by
:class:`~cortex_lsp.agent.kernel.AgentKernel`. The refusal and the best-effort answer stream what they
answer through the executor and never raise a model error: a model that fails or runs out of time costs
the wording, not the answer.
"""

from __future__ import annotations

import asyncio

from cortex_lsp.agent import prompts
from cortex_lsp.agent.context import RunContext, executor_messages
from cortex_lsp.agent.deps import Emit
from cortex_lsp.agent.executor import Executor, ToolSession
from cortex_lsp.agent.plan_guards import GuardedPlan, asks_to_save
from cortex_lsp.agent.types import StopReason
from cortex_lsp.models.base import Message, ModelError
from cortex_lsp.ports import StepStarted


async def refusal_answer(ctx: RunContext, guarded: GuardedPlan, executor: Executor, emit: Emit) -> str:
    """The run's answer to a refused plan: the model says why in its words, or one line says it for it."""
    reason = guarded.refusal_reason or "it is not something Cortex can do"
    emit(StepStarted(1, guarded.plan.steps[0]))
    messages = [
        Message("system", prompts.fill(prompts.REFUSAL, reason=reason)),
        Message("user", ctx.task),
    ]
    try:
        async with asyncio.timeout(max(ctx.remaining(), 0.01)):
            answer = await executor.answer(messages)
    except (TimeoutError, ModelError):
        executor.record.answer_parts.clear()
        answer = ""
    if not answer.strip():
        answer = f"I can't do that: {reason}"
        executor.stream_text(answer)
    return answer


async def best_effort_answer(ctx: RunContext, session: ToolSession, executor: Executor, why: StopReason) -> str:
    """The best-effort answer from what the run has, inside the reserve; never raises a model error."""
    reason = {
        "step_budget": "the step budget is used up",
        "time_budget": "the time budget is used up",
    }.get(why, "the run could not make progress")
    findings = []
    for call in session.history:
        if call.result.success and not call.repeated:
            findings.append(call.result.text_for_model(1500))
    messages = [
        Message("system", prompts.fill(prompts.FINALIZE, why=reason)),
        Message("user", ctx.task),
        Message("user", "[tool results so far: data]\n" + ("\n\n".join(findings) or "(none)")),
    ]
    before = len(executor.record.answer_parts)
    try:
        async with asyncio.timeout(max(ctx.remaining(), 0.5)):
            answer = await executor.answer(messages)
        if answer.strip():
            return answer
    except (TimeoutError, ModelError):
        del executor.record.answer_parts[before:]
    summary = f"I had to stop before finishing ({reason})."
    if findings:
        summary += " What I found so far:\n" + "\n".join(f"- {f[:300]}" for f in findings[:5])
    executor.stream_text(summary)
    return summary


async def save_if_asked(ctx: RunContext, session: ToolSession, executor: Executor, answer: str) -> None:
    """After LATS or the supervisor: one executor step that may save the answer, if the user asked."""
    if (
        "write_file" not in session.offered
        or not asks_to_save(ctx.intent)
        or session.succeeded("write_file")
        or ctx.loop_remaining() <= 0
    ):
        return
    messages = executor_messages(ctx, prompts.EXECUTOR, ["Save the answer to the file the user named"])
    messages += [
        Message("assistant", answer),
        Message("user", prompts.fill(prompts.NUDGE_TOOL, tool="write_file")),
    ]
    try:
        async with asyncio.timeout(max(ctx.loop_remaining(), 0.01)):
            await executor.step(messages, session, tools=session.specs(["write_file"]))
    except TimeoutError:
        executor.record.notes.append("the save step ran out of time")
