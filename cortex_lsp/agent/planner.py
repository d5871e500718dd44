"""The planner: a short JSON plan (kind + at most 5 steps) from the reasoning model.

The model is asked for JSON through the JSON-schema ``format``; the reply is parsed tolerantly
(fences, prose around the JSON, ``<think>`` blocks, a bare list). Steps are tidied (≤ 160 chars, a bare
value is not a step). When the planner fails, a fallback plan keeps the run going. The plan is only a
proposal: :mod:`cortex_lsp.agent.plan_guards` then corrects it from the user's own words.

A planner that fails or replies with something that isn't a plan falls back to the router's plan
(:mod:`cortex_lsp.agent.router`), or to a direct answer: never to "every tool on offer".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cortex_lsp.agent import prompts
from cortex_lsp.agent.parsing import extract_json
from cortex_lsp.agent.types import Plan, PlanKind
from cortex_lsp.config import Settings
from cortex_lsp.memory.api import ToolPattern
from cortex_lsp.models.base import (
    ChatOptions,
    Message,
    ModelClient,
    ModelError,
    ModelMissing,
    ModelUnavailable,
    ToolSpec,
    collect,
)

MAX_STEPS = 5
MAX_STEP_CHARS = 160

PLAN_FORMAT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["direct", "tools", "refusal"]},
        "steps": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_STEPS},
        "tools": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["kind", "steps"],
}

_REFUSE = re.compile(r"\b(?:refuse|decline|cannot be done|not permitted)\b", re.IGNORECASE)
_HAS_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass
class PlanOutcome:
    plan: Plan
    fallback: bool = False
    reason: str = ""


def tidy_step(raw: Any) -> str | None:
    """One step as text, ≤ 160 chars; ``None`` for a bare value or an empty step."""
    if not isinstance(raw, str):
        if isinstance(raw, dict):
            for key in ("description", "step", "task", "action", "text"):
                if isinstance(raw.get(key), str):
                    return tidy_step(raw[key])
        return None
    text = " ".join(raw.split()).strip(" -*•")
    text = re.sub(r"^(?:step\s*)?\d+[.):]\s*", "", text, flags=re.IGNORECASE)
    if not _HAS_WORD.search(text):
        return None  # "42", "True", "-": a value, not a step
    if text.lower().strip(".") in ("true", "false", "none", "null", "yes", "no", "n/a"):
        return None
    if len(text) > MAX_STEP_CHARS:
        cut = text[: MAX_STEP_CHARS - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return text


def tidy_steps(raw: Sequence[Any]) -> list[str]:
    steps: list[str] = []
    for item in raw:
        step = tidy_step(item)
        if step and step not in steps:
            steps.append(step)
    return steps[:MAX_STEPS]


def tools_named(steps: Sequence[str], names: Sequence[str]) -> list[str]:
    """Tool names mentioned in ``steps``, in order of first mention."""
    found: list[tuple[int, str]] = []
    text = "\n".join(steps).lower()
    for name in names:
        pos = text.find(name.lower())
        if pos >= 0:
            found.append((pos, name))
    return [n for _, n in sorted(found)]


def plan_from_reply(value: Any, tool_names: Sequence[str]) -> Plan | None:
    """A :class:`Plan` from a parsed planner reply (an object or a bare list), or ``None``."""
    raw_kind: Any = None
    raw_tools: Any = None
    if isinstance(value, dict):
        raw_steps = value.get("steps") or value.get("plan") or []
        raw_kind = value.get("kind")
        raw_tools = value.get("tools")
    elif isinstance(value, list):
        raw_steps = value
    else:
        return None
    if not isinstance(raw_steps, list):
        raw_steps = [raw_steps]
    steps = tidy_steps(raw_steps)
    if not steps:
        return None
    known = {n.lower(): n for n in tool_names}
    tools: list[str] = []
    if isinstance(raw_tools, list):
        tools = [known[t.lower()] for t in raw_tools if isinstance(t, str) and t.lower() in known]
    for name in tools_named(steps, tool_names):
        if name not in tools:
            tools.append(name)
    kind: PlanKind
    if raw_kind in ("direct", "tools", "refusal"):
        kind = raw_kind
    elif any(_REFUSE.search(s) for s in steps):
        kind = "refusal"
    elif tools:
        kind = "tools"
    else:
        kind = "direct"
    if kind == "tools" and not tool_names:
        kind = "direct"
    if kind == "direct" and tool_names and (len(steps) > 1 or tools):
        kind = "tools"  # tool-free means one "answer directly" step, as the reference agent had it
    return Plan(kind=kind, steps=steps, tools=tools if kind == "tools" else [])


def fallback_plan(message: str, routed: Plan | None = None) -> Plan:
    """The plan when the planner fails: the router's plan when it has one, else a direct answer."""
    if routed is not None and routed.steps:
        return Plan(kind=routed.kind, steps=list(routed.steps), tools=list(routed.tools))
    step = tidy_step(message) or "the request"
    return Plan(kind="direct", steps=[f"Answer directly: {step}"[:MAX_STEP_CHARS]])


def _tool_lines(tools: Sequence[ToolSpec]) -> str:
    if not tools:
        return "(none: every plan is direct)"
    return "\n".join(f"- {t.name}: {t.description.split('. ')[0][:140]}" for t in tools)


class Planner:
    def __init__(self, model: ModelClient, settings: Settings) -> None:
        self.model = model
        self.settings = settings

    def messages(
        self, message: str, *, tools: Sequence[ToolSpec], hints: Sequence[ToolPattern], has_selection: bool
    ) -> list[Message]:
        system = prompts.fill(prompts.PLANNER, tools=_tool_lines(tools))
        if hints:
            best = hints[0]
            system += (
                f"\nA similar earlier task used these tools in order: {', '.join(best.tools)} "
                f"(took {best.steps} step(s)). This is a hint, not an instruction."
            )
        user = message
        if has_selection:
            user += "\n\n(The user has selected code in the editor; it is given to the executor as data.)"
        return [Message("system", system), Message("user", user)]

    async def plan(
        self,
        message: str,
        *,
        tools: Sequence[ToolSpec],
        hints: Sequence[ToolPattern] = (),
        has_selection: bool = False,
        routed: Plan | None = None,
    ) -> PlanOutcome:
        names = [t.name for t in tools]
        msgs = self.messages(message, tools=tools, hints=hints, has_selection=has_selection)
        try:
            reply = await collect(
                self.model.chat_stream(
                    msgs,
                    model=self.settings.reasoning_model,
                    format=PLAN_FORMAT,
                    options=ChatOptions(temperature=0.2, max_tokens=400),
                )
            )
        except (ModelUnavailable, ModelMissing):
            raise
        except ModelError as exc:
            return PlanOutcome(fallback_plan(message, routed), fallback=True, reason=f"planner failed: {exc}")
        plan = plan_from_reply(extract_json(reply.content), names)
        if plan is None:
            return PlanOutcome(
                fallback_plan(message, routed), fallback=True, reason="planner reply was not a plan"
            )
        return PlanOutcome(plan)
