"""How a run that ended without an answer is noted in the session (an ``error`` event, never a turn)."""

from __future__ import annotations

import asyncio


def failure_note(exc: BaseException) -> str:
    """The session's note for a run stopped by ``exc`` (a cancel, or an unexpected error)."""
    if isinstance(exc, asyncio.CancelledError):
        return "The run was cancelled before it answered."
    return f"The run stopped with an internal error ({exc.__class__.__name__})."
