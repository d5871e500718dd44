"""The agent kernel: context → runnability → plan → plan guards → execute → reflect → recover → answer.

Knows nothing of LSP. ``await AgentKernel(deps).run(request, emit, record)`` runs one request,
emitting :class:`~cortex_lsp.ports.AgentEvent` s and filling ``record`` as it goes (plan, tool calls,
edits, answer), so a cancelled run still reports honestly. Cancellation is the host cancelling the
task: ``CancelledError`` is never swallowed here.

Budgets: at most ``max_agent_steps`` ReAct steps and ``max_run_seconds`` (a small reserve of it is
kept for the best-effort answer). A run that stalls (2 steps without progress) with time left is
handed to LATS; ``orchestration`` ``lats`` and ``supervisor`` choose those strategies from the start.
How a run ends without a plain answer (refusal, best-effort answer, the save step) is in
:mod:`~cortex_lsp.agent.endings`.
"""

from __future__ import annotations

import asyncio
import logging
import time

from cortex_lsp import telemetry
from cortex_lsp.agent import prompts
from cortex_lsp.agent.choosing import model_plan, route_for, routed_plan
from cortex_lsp.agent.context import RunContext, build_context, direct_messages, executor_messages, request_intent
from cortex_lsp.agent.deps import AgentDeps, Emit
from cortex_lsp.agent.endings import best_effort_answer, refusal_answer, save_if_asked
from cortex_lsp.agent.executor import Executor, ToolSession
from cortex_lsp.agent.failure import failure_note
from cortex_lsp.agent.ledger import with_ledger
from cortex_lsp.agent.meaning import Meaning
from cortex_lsp.agent.plan_guards import (
    READ_TOOLS,
    GuardedPlan,
    apply_plan_guards,
    intended_tools,
)
from cortex_lsp.agent.planner import PlanOutcome
from cortex_lsp.agent.profile import detect_profile, known_profile
from cortex_lsp.agent.recovery import Recovery
from cortex_lsp.agent.reflector import STALL_LIMIT, Reflector
from cortex_lsp.agent.routed import small_direct_messages
from cortex_lsp.agent.router import Route
from cortex_lsp.agent.runnability import FOLDER_ROOTS, cannot_run_reply
from cortex_lsp.agent.supervisor import Supervisor
from cortex_lsp.agent.tokens import flush_tokens, token_writer
from cortex_lsp.agent.types import AgentRequest, AgentResult, Plan, RunRecord, StopReason
from cortex_lsp.intent.intent import Intent
from cortex_lsp.intent.provenance import request_text
from cortex_lsp.memory.api import RecallNotReady
from cortex_lsp.memory.procedural import material_steers
from cortex_lsp.models.base import Message, ModelError, ModelMissing, ModelUnavailable
from cortex_lsp.ports import AnswerToken, ErrorReported, StepStarted
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.user_wait import tool_time_limit

CANNOT_RUN_STEP = "Explain why this code can't run in the sandbox"


log = logging.getLogger("cortex.agent")

#: a small model's direct answer: short (it rambles, and every token costs time on a laptop)
DIRECT_MAX_TOKENS = 320
#: and greedy: sampling makes a 135M model's facts and readings worse
SMALL_TEMPERATURE = 0.0
CUT_OFF_ANSWER = "I had to stop before finishing (the time budget is used up)."
#: the classifier's limit: one embedding once warm; the first ask of a new server may wait for the
#: warm-up to finish loading it, else the word tables route alone
MEANING_SECONDS = 2.0


class AgentKernel:
    """One run. ``allow_lats``/``persist``/``words``/``intent`` exist for LATS simulations and supervisor
    workers: a worker acts on the user's words and their reading (``intent``) from the run that started it."""

    def __init__(
        self,
        deps: AgentDeps,
        *,
        allow_lats: bool = True,
        persist: bool = True,
        words: str | None = None,
        intent: Intent | None = None,
        user_turns: list[str] | None = None,
        exclude_tools: frozenset[str] = frozenset(),
    ) -> None:
        self.deps = deps
        self.allow_lats = allow_lats
        self.persist = persist
        self.words_override = words
        self.intent_override = intent
        self.turns_override = user_turns
        self.exclude_tools = exclude_tools
        self._emit: Emit | None = None

    # -- entry point -------------------------------------------------------------------------------
    async def run(self, request: AgentRequest, emit: Emit, record: RunRecord) -> AgentResult:
        deps = self.deps
        record.backend = record.backend or deps.model.backend
        record.model = record.model or deps.settings.ollama_model
        self._emit = emit
        # the open folders, for every runnability check of this run (its modules can be imported)
        folders = FOLDER_ROOTS.set(tuple(deps.workspace.roots))
        try:
            return await self._run(request, emit, record)
        except (ModelUnavailable, ModelMissing) as exc:
            emit(ErrorReported(exc.user_message()))
            await self._record_error(request, exc.user_message())
            return record.result("model_unavailable", answer=exc.user_message())
        except ModelError as exc:
            emit(ErrorReported(exc.user_message()))
            await self._record_error(request, exc.user_message())
            return record.result("error", answer=exc.user_message())
        except (asyncio.CancelledError, Exception) as exc:  # cancelled or crashed: the ask is not kept either
            await self._record_error(request, failure_note(exc))
            raise
        finally:
            FOLDER_ROOTS.reset(folders)

    async def _facts(self, message: str, record: RunRecord) -> list[str]:
        """Related facts; a memory fault costs the facts, never the run. Facts that can't be recalled yet
        (the store is still starting) are skipped visibly: the run's notes say so."""
        try:
            return await self.deps.memory.related_facts(
                message, min_relevance=self.deps.settings.semantic_min_relevance
            )
        except RecallNotReady as exc:
            record.notes.append(str(exc))
            return []
        except Exception as exc:  # incl. a missing embedding model: chat still works without facts
            log.warning("facts unavailable: %s", exc)
            return []

    async def _reads(self, request: AgentRequest, record: RunRecord) -> tuple[list[Message], list[str], float]:
        """History and related facts (SQLite, and an embedding + vector query), side by side; and when
        they were done (monotonic)."""
        settings = self.deps.settings
        history, facts = await asyncio.gather(
            self.deps.memory.history(request.session_id, settings.history_turns),
            self._facts(request.message, record),
        )
        return history, facts, time.monotonic()

    async def _meaning(self, request: AgentRequest, intent: Intent, record: RunRecord) -> tuple[Meaning | None, float]:
        """The classifier's reading of the user's own words (a small model's router uses it), and when
        it was done; a fault or a slow classifier costs the reading, never the run. Not asked for a model
        known to be full-sized (its reading would go unused)."""
        classifier = self.deps.meaning
        known = known_profile(self.deps.settings, backend=record.backend, name=record.model)
        if classifier is None or self.words_override is not None or request.mode == "explain" \
                or (known is not None and not known.small):
            return None, 0.0
        try:
            async with asyncio.timeout(MEANING_SECONDS):
                roots = self.deps.workspace.roots
                # the message as typed: meaning only picks among read-only routes, and a cut clause
                # ("tell me which URL paths register() returns") still says what the request is about
                # names written as code come from the user's own words only (pasted material names nothing)
                meaning = await classifier.classify(request.message, roots[0] if roots else None,
                                                    own_words=intent.words)
        except Exception as exc:  # incl. a time-out: the word tables still route
            log.warning("meaning unavailable: %s", exc or exc.__class__.__name__)
            return None, time.monotonic()
        return meaning, time.monotonic()

    def _exists(self, name: str) -> bool:
        """Is there a file or folder ``name`` in an open folder (a stat each; no guard needed to look)?"""
        for root in self.deps.workspace.roots:
            try:
                if (root / name).exists():
                    return True
            except (OSError, ValueError):
                continue
        return False

    async def _record_error(self, request: AgentRequest, message: str) -> None:
        # An infrastructure error is never stored as an assistant turn (it would be replayed as an answer).
        if not self.persist:
            return
        record_error = getattr(self.deps.memory, "record_error", None)
        if record_error is not None:
            try:
                await record_error(request.session_id, message, ask=request.stored_text)
            except Exception:
                pass

    async def _run(self, request: AgentRequest, emit: Emit, record: RunRecord) -> AgentResult:
        deps = self.deps
        settings = deps.settings
        if request.regenerate and self.persist:  # the answer being regenerated is not history for its rerun
            await deps.memory.drop_last_exchange(request.session_id)
        # the run's one reading of its request (a worker's: the reading of the run that started it)
        intent = self.intent_override or request_intent(request, words_override=self.words_override)
        # Independent reads (SQLite, and an embedding + Chroma query) and the request's meaning: side by side.
        (history, facts, read_at), (meaning, meant_at) = await asyncio.gather(
            self._reads(request, record), self._meaning(request, intent, record))
        # what routing by meaning added to this ask: the time it ran on after the memory reads were done
        meaning_added = max(0.0, meant_at - read_at)
        ctx = build_context(
            request, settings, history, facts, record,
            words_override=self.words_override, turns_override=self.turns_override, intent=intent,
        )
        if self.persist:
            await deps.memory.store_turn(request.session_id, "user", request.stored_text)

        if request.mode == "explain":
            from cortex_lsp.agent.explain import run_explain

            answer = await run_explain(deps, ctx, emit, record)
            return await self._finish(ctx, record, "answered", answer, tools_used=[], steered=False)

        canned = await self._cannot_run(ctx)
        if canned is not None:
            record.plan = Plan(kind="direct", steps=[CANNOT_RUN_STEP])
            emit(record.plan.made())
            record.answer_parts.append(canned)
            emit(AnswerToken(canned))
            return await self._finish(ctx, record, "answered", canned, tools_used=[], steered=False)

        available = [n for n in deps.tools.names() if n not in self.exclude_tools]
        profile = await detect_profile(settings, deps.model, backend=record.backend, name=record.model)
        if profile.small:
            record.notes.append(profile.describe())
        if meaning is not None and profile.small:
            record.notes.append(f"{meaning.describe()}; it added {meaning_added * 1000:.1f} ms to the ask")
        route = route_for(ctx, available, words_override=self.words_override,
                          meaning=meaning if profile.small else None, exists=self._exists)
        telemetry.set_route(route.kind)
        if route.kind == "direct" or profile.small:
            # the router decided (a small model never plans): no planner call, only the route's tools
            with telemetry.span("agent.plan", {"cortex.plan.source": "router"}):
                plan, available = routed_plan(route, profile)
            outcome = PlanOutcome(plan)
        else:
            with telemetry.span("agent.plan", {"cortex.plan.source": "model"}):
                outcome = await model_plan(deps, ctx, route, available)
            if outcome.fallback:
                available = [t for t in available if t in outcome.plan.tools]
        if outcome.fallback:
            record.notes.append(outcome.reason)
        guarded = apply_plan_guards(
            outcome.plan,
            ctx.intent,
            available,
            has_code=bool(ctx.code_at_hand),
            earlier_user_urls=ctx.earlier_urls(),
            run_meant=route.run_meant,
        )
        record.notes.extend(guarded.notes)
        record.plan = guarded.plan
        telemetry.note_run({"cortex.plan.kind": guarded.plan.kind, "cortex.plan.steps": len(guarded.plan.steps)})
        emit(record.plan.made())

        executor = Executor(deps, emit, record)
        small_tokens = DIRECT_MAX_TOKENS if profile.small else None
        if guarded.plan.kind == "refusal":
            answer = await refusal_answer(ctx, guarded, executor, emit)
            return await self._finish(ctx, record, "refused", answer, tools_used=[], steered=False)
        if guarded.tool_free and request.orchestration != "lats":
            if request.orchestration == "supervisor":
                return await self._supervise(ctx, guarded, emit, record)
            emit(StepStarted(1, guarded.plan.steps[0]))
            try:
                async with asyncio.timeout(max(ctx.remaining(), 0.01)):
                    answer = await executor.answer(
                        small_direct_messages(ctx) if profile.small else direct_messages(ctx),
                        max_tokens=small_tokens,
                        temperature=SMALL_TEMPERATURE if profile.small else 0.3,
                    )
            except TimeoutError:
                record.notes.append("the answer was cut off at the time budget")
                partial = record.answer.strip() and record.answer
                return await self._finish(
                    ctx, record, "time_budget", partial or CUT_OFF_ANSWER, tools_used=[], steered=True
                )
            return await self._finish(ctx, record, "answered", answer, tools_used=[], steered=False)
        if profile.small:
            return await self._routed(ctx, route, guarded, executor, emit, record)
        if request.orchestration == "supervisor":
            return await self._supervise(ctx, guarded, emit, record)
        session = self._session(ctx, guarded, emit, record)
        if request.orchestration == "lats":
            return await self._lats(ctx, guarded, session, executor, emit, record, messages=None)
        return await self._react(ctx, guarded, session, executor, emit, record)

    # -- routing and planning ----------------------------------------------------------------------
    async def _routed(
        self, ctx: RunContext, route: Route, guarded: GuardedPlan, executor: Executor, emit: Emit,
        record: RunRecord,
    ) -> AgentResult:
        from cortex_lsp.agent.routed import RoutedRun

        session = self._session(ctx, guarded, emit, record)
        outcome = await RoutedRun(ctx, route, session, executor, emit).run()
        return await self._finish(ctx, record, outcome.stop, outcome.answer, tools_used=session.used(),
                                  steered=False)

    # -- pieces ------------------------------------------------------------------------------------
    async def _cannot_run(self, ctx: RunContext) -> str | None:
        if not ctx.code_at_hand or not ctx.intent.cues.run:
            return None
        # off the event loop: it reads the folder modules the code imports
        return await asyncio.to_thread(cannot_run_reply, ctx.code_at_hand, list(self.deps.workspace.roots))

    def _session(self, ctx: RunContext, guarded: GuardedPlan, emit: Emit, record: RunRecord) -> ToolSession:
        context = ToolContext(
            workspace=self.deps.workspace,
            settings=self.deps.settings,
            edits=self.deps.edits,
            user_words=ctx.words,
            intent=ctx.intent,
            # the URL rule reads only the user's own words of each turn (pasted material is data)
            user_turns=[request_text(t) for t in ctx.user_turns[:-1]] + [ctx.words],
            run_id=ctx.request.run_id,
        )
        return ToolSession(self.deps, emit, record, context, guarded.offered)

    async def _react(
        self,
        ctx: RunContext,
        guarded: GuardedPlan,
        session: ToolSession,
        executor: Executor,
        emit: Emit,
        record: RunRecord,
    ) -> AgentResult:
        settings = self.deps.settings
        messages = executor_messages(ctx, prompts.EXECUTOR, guarded.plan.steps)
        reflector = Reflector(self.deps.model, settings)
        recovery = Recovery(intent=ctx.intent, offered=guarded.offered, required=guarded.required)
        no_progress = 0
        steps = 0
        stop: StopReason | None = None
        while stop is None:
            if steps >= settings.max_agent_steps:
                stop = "step_budget"
                break
            remaining = ctx.loop_remaining()
            if remaining <= 0:
                stop = "time_budget"
                break
            steps += 1
            plan_steps = guarded.plan.steps
            emit(StepStarted(steps, plan_steps[min(steps, len(plan_steps)) - 1]))
            try:
                async with asyncio.timeout(remaining) as step_limit:
                    with tool_time_limit(step_limit):  # paused while the user reviews a write
                        step = await executor.step(messages, session)
            except TimeoutError:
                stop = "time_budget"
                break
            if step.calls:
                messages.extend(executor.step_messages(step))
                refusal = await self._user_code_refused(ctx, step)
                if refusal is not None:
                    executor.stream_text(refusal)
                    return await self._finish(
                        ctx, record, "refused", refusal, tools_used=session.used(), steered=False
                    )
                if step.clean and not step.dropped:
                    no_progress = 0
                    continue
                try:
                    async with asyncio.timeout(max(ctx.loop_remaining(), 0.01)):
                        progress = await reflector.evaluate(ctx.task, step)
                except TimeoutError:
                    stop = "time_budget"
                    break
                no_progress = 0 if progress else no_progress + 1
                if no_progress >= STALL_LIMIT:
                    record.notes.append("stalled: 2 steps without progress")
                    return await self._stalled(ctx, guarded, session, executor, emit, record, messages)
                continue
            action = recovery.check(step.content, session)
            if action is not None:
                record.notes.append(f"recovery: {action.kind}")
                messages.append(Message("assistant", step.content))
                if action.kind == "run_code" and action.code:
                    result = await session.call("python_exec", {"code": action.code})
                    messages.append(Message("user", f"{action.message}\n{result.message().content}"))
                else:
                    messages.append(Message("user", action.message))
                continue
            if not step.content.strip():
                no_progress += 1
                if no_progress >= STALL_LIMIT:
                    record.notes.append("stalled: the model gave no answer")
                    return await self._stalled(ctx, guarded, session, executor, emit, record, messages)
                messages.append(Message("user", "Give your final answer now."))
                continue
            executor.stream_text(step.content, step.chunks)
            return await self._finish(
                ctx,
                record,
                "answered",
                step.content,
                tools_used=session.used(),
                steered=self._steered(ctx, session, guarded),
            )
        answer = await best_effort_answer(ctx, session, executor, stop)
        return await self._finish(ctx, record, stop, answer, tools_used=session.used(), steered=True)

    async def _user_code_refused(self, ctx: RunContext, step: object) -> str | None:
        """The sandbox refused code the user supplied: end the run with the reason (no retry loop)."""
        from cortex_lsp.agent.executor import StepOutcome

        assert isinstance(step, StepOutcome)
        for call in step.calls:
            if call.name != "python_exec" or call.result.success or not call.result.refused:
                continue
            code = str(call.arguments.get("code", "")).strip()
            user_code = (ctx.code_at_hand or "").strip()
            if code and user_code and (code in user_code or user_code in code):
                # off the event loop: it reads the folder modules the code imports
                reply = await asyncio.to_thread(cannot_run_reply, code, list(self.deps.workspace.roots))
                return reply or f"The sandbox refused to run your code: {call.result.error}"
        return None

    def _steered(self, ctx: RunContext, session: ToolSession, guarded: GuardedPlan) -> bool:
        """Was a tool chosen after reading outside text, without the user's words asking for it?
        (Or did the request carry a selection or pasted material naming a tool or an action?)"""
        request = ctx.request
        if material_steers(request.message, selection=request.selection.text if request.selection else None,
                           diagnostic=request.diagnostic, tools=session.used()):
            return True
        intent = intended_tools(ctx.intent, guarded.offered)
        read_seen = False
        for call in session.history:
            if call.blocked or call.repeated:
                continue
            if read_seen and call.name not in intent:
                return True
            if call.name in READ_TOOLS and call.result.success:
                read_seen = True
        return False

    async def _stalled(
        self,
        ctx: RunContext,
        guarded: GuardedPlan,
        session: ToolSession,
        executor: Executor,
        emit: Emit,
        record: RunRecord,
        messages: list[Message],
    ) -> AgentResult:
        lats = self.deps.settings.lats
        if self.allow_lats and lats.escalate_on_stall and ctx.lats_worthwhile():
            record.notes.append("escalated to LATS")
            return await self._lats(ctx, guarded, session, executor, emit, record, messages=messages)
        answer = await best_effort_answer(ctx, session, executor, "step_budget")
        return await self._finish(ctx, record, "step_budget", answer, tools_used=session.used(), steered=True)

    async def _lats(
        self,
        ctx: RunContext,
        guarded: GuardedPlan,
        session: ToolSession,
        executor: Executor,
        emit: Emit,
        record: RunRecord,
        messages: list[Message] | None,
    ) -> AgentResult:
        from cortex_lsp.agent.lats import LatsSearch

        settings = self.deps.settings
        limit = min(settings.lats.escalation_timeout_seconds, max(ctx.loop_remaining(), 0.01))
        search = LatsSearch(self.deps, ctx, session, emit, prior=messages)
        try:
            async with asyncio.timeout(limit):
                with telemetry.span("agent.lats"):
                    answer = await search.run(guarded)
        except TimeoutError:
            answer = search.best_answer()
            record.notes.append("LATS stopped at its time limit")
        if not answer:
            stop: StopReason = "time_budget" if ctx.loop_remaining() <= 0 else "step_budget"
            answer = await best_effort_answer(ctx, session, executor, stop)
            return await self._finish(ctx, record, stop, answer, tools_used=session.used(), steered=True)
        await save_if_asked(ctx, session, executor, answer)
        executor.stream_text(answer)
        return await self._finish(ctx, record, "answered", answer, tools_used=session.used(), steered=True)

    async def _supervise(
        self, ctx: RunContext, guarded: GuardedPlan, emit: Emit, record: RunRecord
    ) -> AgentResult:
        session = self._session(ctx, guarded, emit, record)
        executor = Executor(self.deps, emit, record)
        with telemetry.span("agent.supervisor"):
            answer = await Supervisor(self.deps, ctx, emit, record, AgentKernel).run()
        if answer is None:
            return await self._react(ctx, guarded, session, executor, emit, record)
        await save_if_asked(ctx, session, executor, answer)
        return await self._finish(ctx, record, "answered", answer, tools_used=[], steered=True)

    async def _finish(
        self,
        ctx: RunContext,
        record: RunRecord,
        stop: StopReason,
        answer: str,
        *,
        tools_used: list[str],
        steered: bool,
    ) -> AgentResult:
        deps = self.deps
        # the model's answer as it wrote it, then the facts of the run's writes (streamed too)
        full = with_ledger(answer, record, deps.workspace.roots)
        if full != answer and self._emit is not None and full.startswith(answer.rstrip()):
            token_writer(self._emit)(full[len(answer.rstrip()):])
            flush_tokens(self._emit)
        answer = full
        if self.persist and answer.strip():
            await deps.memory.store_turn(ctx.request.session_id, "assistant", answer)
            deps.memory.schedule_consolidation(ctx.request.session_id, ctx.request.message)
        if (
            self.persist
            and stop == "answered"
            and tools_used
            and not ctx.hinted
            and not steered
            and deps.settings.procedural_memory_enabled
        ):
            steps = max(1, len(tools_used))
            await deps.memory.record_tool_pattern(ctx.words or ctx.task, tools_used, steps,
                                                  hinted=ctx.hinted, steered=steered)
        record.notes.extend(n for n in ctx.notes if n not in record.notes)
        result = record.result(stop, answer=answer)
        result.elapsed_ms = round((time.monotonic() - record.started) * 1000, 1)
        return result
