"""Waiting for the user is not tool time.

The registry runs every tool under ``tool_timeout_seconds``. A write, though, waits for the user to
review it in the editor (a diff with Accept/Reject), and a careful review must not be cut off by that
limit. The registry publishes the running tool's :class:`asyncio.Timeout` here; code that waits for the
user wraps just that wait in :func:`waiting_for_user`, which pauses the limit (the deadline is pushed
back by the time the user took). Cancel still works: cancelling the run cancels the wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_limits: ContextVar[tuple[asyncio.Timeout, ...]] = ContextVar("cortex_time_limits", default=())


@contextmanager
def tool_time_limit(timeout: asyncio.Timeout) -> Iterator[None]:
    """Register a time limit (the registry's per-tool one, the kernel's per-step one) as pausable."""
    token = _limits.set((*_limits.get(), timeout))
    try:
        yield
    finally:
        _limits.reset(token)


@contextmanager
def waiting_for_user() -> Iterator[None]:
    """Pause every registered time limit while the user decides (no-op outside a tool)."""
    loop = asyncio.get_running_loop()
    paused: list[tuple[asyncio.Timeout, float]] = []
    for timeout in _limits.get():
        deadline = timeout.when()
        if deadline is None or timeout.expired():
            continue
        paused.append((timeout, max(deadline - loop.time(), 0.5)))
        timeout.reschedule(None)
    try:
        yield
    finally:
        for timeout, left in paused:
            if not timeout.expired():
                timeout.reschedule(loop.time() + left)

