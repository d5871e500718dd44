"""Waiting for the user is not tool time.

The registry runs every tool under ``tool_timeout_seconds``. A write, though, waits for the user to
review it in the editor (a diff with Accept/Reject), and a careful review must not be cut off by that
limit. The registry publishes the running tool's :class:`asyncio.Timeout` here; code that waits for the
user wraps just that wait in :func:`waiting_for_user`, which pauses the limit (the deadline is pushed
back by the time the user took). Cancel still works: cancelling the run cancels the wait.

The run's own wall-clock budget (``max_run_seconds``) excludes the same waits: a run holds a
:class:`UserClock` (:func:`run_clock`), every :func:`waiting_for_user` adds its time to it, and the
run's deadline moves back by what the clock gained since the run began.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_limits: ContextVar[tuple[asyncio.Timeout, ...]] = ContextVar("cortex_time_limits", default=())


@dataclass
class UserClock:
    """Seconds (``time.monotonic``) a run has spent waiting for the user; overlapping waits count once."""

    waited: float = 0.0
    _open: int = 0
    _since: float = 0.0

    def total(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return self.waited + (now - self._since if self._open else 0.0)

    def begin(self) -> None:
        if self._open == 0:
            self._since = time.monotonic()
        self._open += 1

    def end(self) -> None:
        self._open -= 1
        if self._open == 0:
            self.waited += time.monotonic() - self._since


_clock: ContextVar[UserClock | None] = ContextVar("cortex_user_clock", default=None)


def run_clock() -> UserClock:
    """The current task's user-wait clock (made on first use; tasks started later share it)."""
    clock = _clock.get()
    if clock is None:
        clock = UserClock()
        _clock.set(clock)
    return clock


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
    """Pause every registered time limit while the user decides, and count the wait on the run's clock
    (no-op outside a run)."""
    loop = asyncio.get_running_loop()
    clock = _clock.get()
    paused: list[tuple[asyncio.Timeout, float]] = []
    for timeout in _limits.get():
        deadline = timeout.when()
        if deadline is None or timeout.expired():
            continue
        paused.append((timeout, max(deadline - loop.time(), 0.5)))
        timeout.reschedule(None)
    if clock is not None:
        clock.begin()
    try:
        yield
    finally:
        if clock is not None:
            clock.end()
        for timeout, left in paused:
            if not timeout.expired():
                timeout.reschedule(loop.time() + left)

