"""How a run gets its plan: the router's route, the plan a route makes, and the model planner.

The router decides first (:mod:`cortex_lsp.agent.router`); the model planner runs only for a full
profile when the route is not a plain direct answer, and a planner that fails falls back to the
route's plan, never to every tool on offer.
"""

from __future__ import annotations

import asyncio

from cortex_lsp.agent.context import RunContext
from cortex_lsp.agent.deps import AgentDeps
from cortex_lsp.agent.meaning import Meaning
from cortex_lsp.agent.meaning_route import Exists, combine
from cortex_lsp.agent.plan_guards import READ_TOOLS
from cortex_lsp.agent.planner import Planner, PlanOutcome, fallback_plan
from cortex_lsp.agent.profile import ModelProfile
from cortex_lsp.agent.router import IntentLike, Route, read_intent, route
from cortex_lsp.agent.types import Plan

#: the planner gets at most this share of the run: a slow planner must leave time to answer
PLANNER_SHARE = 0.4
#: tools a small model may pick the arguments of itself (one call, under constrained tool choice)
SMALL_CHOICE_TOOLS = READ_TOOLS | {"calculator", "current_time"}


def route_for(ctx: RunContext, available: list[str], *, words_override: str | None = None,
              meaning: Meaning | None = None, exists: Exists | None = None) -> Route:
    """The route of this run; a worker's subtask is model text, so it routes on the user's words.
    "Try again" routes the user's previous request again. ``meaning`` (the classifier's reading of
    the request as typed) picks the route where the word tables find no call."""
    selection = ctx.request.selection.text if ctx.request.selection else None
    source = words_override if words_override is not None else ctx.request.message
    intent: IntentLike = ctx.intent  # the run's reading of the request (a worker's: of its words)
    if words_override is None and ctx.intent.cues.again and len(ctx.user_turns) > 1:
        source = ctx.user_turns[-2]
        meaning = None  # it read "try again", not the request routed again
        intent = read_intent(source, selection=selection)  # the earlier turn, read on its own
    ruled = route(intent, message=source, available=available, code_at_hand=ctx.code_at_hand)
    return combine(ruled, meaning, intent, message=source, available=available, exists=exists)


def routed_plan(decided: Route, profile: ModelProfile) -> tuple[Plan, list[str]]:
    """The route's plan and the tools it may use. A small model's undecided route gets at most one
    read-only tool (called under constrained tool choice), else a direct answer."""
    if decided.kind == "undecided" and profile.small:
        if len(decided.tools) != 1 or decided.tools[0] not in SMALL_CHOICE_TOOLS:
            return Plan(kind="direct", steps=["Answer directly"]), []
    plan = decided.plan()
    return plan, list(plan.tools) if plan.kind == "tools" else []


async def model_plan(deps: AgentDeps, ctx: RunContext, decided: Route, available: list[str]) -> PlanOutcome:
    """The model planner (full profile), with procedural hints, inside its share of the run."""
    settings = deps.settings
    hints = []
    if settings.procedural_memory_enabled and available:
        hints = await deps.memory.tool_hints(ctx.task, min_relevance=settings.procedural_min_relevance)
        hints = [h for h in hints if h.tools]
    if hints:
        ctx.hinted = True
        ctx.hint_text = f"A similar earlier task used these tools in order: {', '.join(hints[0].tools)}. A hint only."
    routed = decided.plan() if decided.kind == "tools" else None
    try:
        budget = min(ctx.loop_remaining(), settings.max_run_seconds * PLANNER_SHARE)
        async with asyncio.timeout(max(budget, 0.01)):
            return await Planner(deps.model, settings).plan(
                ctx.task,
                tools=deps.tools.specs(available),
                hints=hints,
                has_selection=ctx.request.selection is not None,
                routed=routed,
            )
    except TimeoutError:
        return PlanOutcome(fallback_plan(ctx.task, routed), fallback=True, reason="the planner ran out of time")
