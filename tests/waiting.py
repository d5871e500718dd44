"""Waiting for an event instead of sleeping: poll a condition until it holds, with a generous deadline.

    await until(lambda: client.rec.edits, what="the applyEdit")
    until_sync(lambda: not alive(pid), what="the worker to die")

A test waits for something positive to happen (a notification, a file, a log line, a later request's
answer), never for a fixed time: a fixed sleep is too short on a loaded machine and a "nothing happened
during the sleep" check then passes vacuously. The deadline only bounds a hang; it is not part of the check.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

#: generous: the deadline only stops a test that would otherwise hang
TIMEOUT = 30.0
INTERVAL = 0.05


@overload
async def until(predicate: Callable[[], Awaitable[T]], within: float = ..., *, what: str = ...,
                interval: float = ...) -> T: ...


@overload
async def until(predicate: Callable[[], T], within: float = ..., *, what: str = ...,
                interval: float = ...) -> T: ...


async def until(predicate: Callable[[], Any], within: float = TIMEOUT, *,
                what: str = "the condition", interval: float = INTERVAL) -> Any:
    """The first truthy value of ``predicate()`` (a coroutine function is awaited); AssertionError naming
    ``what`` when it is still falsy after ``within`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        await asyncio.sleep(interval)


def until_sync(predicate: Callable[[], T], within: float = TIMEOUT, *,
               what: str = "the condition", interval: float = INTERVAL) -> T:
    """:func:`until` for a test without an event loop."""
    deadline = time.monotonic() + within
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        time.sleep(interval)


LATER_RUN = "a later run, for the order"
LATER_TOKEN = "later-run-token"


def script_later_run(model: Any, *, words: int = 10, token_delay: float = 0.05) -> None:
    """Script the reply :func:`later_run` gets: ``words`` tokens, one each ``token_delay`` seconds."""
    import json

    from cortex_lsp.agent.prompts import ROLE_PLANNER
    from tests.scripted_model import Reply

    def answer(body: dict[str, Any]) -> bool:  # not the plan (lsp_session scripts a direct one)
        return ROLE_PLANNER not in json.dumps(body.get("messages", ""))

    model.on(Reply(content="later " * words, token_delay=token_delay), contains=LATER_RUN, when=answer,
             times=None, first=True)


async def later_run(client: Any, within: float = 60) -> dict[str, Any]:
    """Ask once more and wait for the answer (on its own progress token, LATER_TOKEN): the positive event
    a "nothing more came after the end" check waits for instead of a quiet period. The server sends in
    order and this run streams at the scripted pace (:func:`script_later_run`) after the first has ended,
    so whatever a leftover of the first run (a flush timer, a stream still read) would send has arrived by
    the time this run has answered."""
    from tests.lsp_harness import execute

    client.progress_reports.setdefault(LATER_TOKEN, [])
    result: dict[str, Any] = await asyncio.wait_for(
        execute(client, "cortex.ask", {"message": LATER_RUN}, token=LATER_TOKEN), timeout=within)
    return result
