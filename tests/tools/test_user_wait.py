"""Waiting for the user is not run time: the run's deadline moves back by the review's length, once."""

from __future__ import annotations

import asyncio
import time

from cortex_lsp.agent.context import RunContext, build_context
from cortex_lsp.agent.types import AgentRequest, RunRecord
from cortex_lsp.config import Settings
from cortex_lsp.tools.user_wait import UserClock, run_clock, waiting_for_user


def _ctx(settings: Settings) -> RunContext:
    request = AgentRequest(message="hello", session_id="s")
    return build_context(request, settings, [], [], RunRecord(session_id="s"))


async def test_deadline_moves_back_by_the_user_wait() -> None:
    ctx = _ctx(Settings(max_run_seconds=30))
    before = ctx.deadline
    with waiting_for_user():
        await asyncio.sleep(0.2)
        during = ctx.deadline
    after = ctx.deadline
    assert during > before, "while the user reviews, the deadline keeps moving"
    assert after >= before + 0.2
    assert ctx.deadline == after, "after the wait the deadline is fixed again"


async def test_overlapping_waits_count_once_and_other_tasks_share_the_clock() -> None:
    ctx = _ctx(Settings(max_run_seconds=30))
    before = ctx.deadline

    async def review() -> None:
        with waiting_for_user():
            await asyncio.sleep(0.2)

    start = time.monotonic()
    await asyncio.gather(asyncio.create_task(review()), asyncio.create_task(review()))
    elapsed = time.monotonic() - start
    gained = ctx.deadline - before
    assert 0.2 <= gained <= elapsed, "two reviews at once count once, never more than the time that passed"


async def test_waits_before_a_run_are_not_its_own() -> None:
    clock = run_clock()
    with waiting_for_user():
        await asyncio.sleep(0.05)
    ctx = _ctx(Settings(max_run_seconds=30))
    assert ctx.user_clock is clock
    assert abs(ctx.deadline - (ctx.started + 30)) < 1e-6


def test_clock_outside_a_wait_is_still() -> None:
    clock = UserClock()
    clock.begin()
    clock.end()
    first = clock.total()
    time.sleep(0.01)
    assert clock.total() == first
