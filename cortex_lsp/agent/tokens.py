"""The answer's text on its way out: a token sink, so a streamed token costs no object of ours.

A run's ``emit`` takes :class:`~cortex_lsp.ports.AgentEvent` s. For the answer's tokens (hundreds to
tens of thousands a reply) the host may offer more: an ``emit`` that is also a :class:`TokenSink` takes
each token's text as it is (``write_token``: appended to a buffer its coalescer drains) and is told when the
answer is complete (``flush_tokens``: the last piece goes out now, not at the next tick). Any other
``emit`` (a test's list, a worker's wrapper) gets one ``token`` event per piece, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from cortex_lsp.agent.deps import Emit
from cortex_lsp.ports import AnswerToken


@runtime_checkable
class TokenSink(Protocol):
    def write_token(self, text: str) -> None:
        """One piece of the answer (kept, in order, until the next coalesced report)."""

    def flush_tokens(self) -> None:
        """The answer is complete (or paused): send what is buffered now."""


def token_writer(emit: Emit) -> Callable[[str], None]:
    """A one-argument callable that streams one piece of answer text through ``emit``."""
    if isinstance(emit, TokenSink):
        return emit.write_token

    def as_event(text: str) -> None:
        emit(AnswerToken(text))

    return as_event


def flush_tokens(emit: Emit) -> None:
    """Tell a token sink the answer (or this part of it) is complete; nothing for a plain ``emit``."""
    if isinstance(emit, TokenSink):
        emit.flush_tokens()
