"""The plan guards called with the user's words, as the tables in the tests write them: each call reads
the words once (:func:`~cortex_lsp.intent.intent.parse_intent`) and passes the Intent, as a run does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cortex_lsp.agent import plan_guards
from cortex_lsp.agent.types import Plan
from cortex_lsp.intent.intent import parse_intent


def apply_plan_guards(plan: Plan, words: str, available: Sequence[str], **options: Any) -> plan_guards.GuardedPlan:
    return plan_guards.apply_plan_guards(plan, parse_intent(words), available, **options)


def python_allowed(words: str, has_code: bool) -> bool:
    return plan_guards.python_allowed(parse_intent(words), has_code)


def asks_to_save(words: str) -> bool:
    return plan_guards.asks_to_save(parse_intent(words))
