"""The LSP lifecycle gate: which messages the server may act on before ``initialize`` and after ``shutdown``.

One decision, taken for every message before any handler runs (``CortexProtocol.handle_message``):

- before ``initialize``: a request is answered ``ServerNotInitialized`` (-32002); a notification is
  dropped; ``exit`` alone is processed. Nothing of a refused message runs (no command, no store opened,
  no model server started).
- a second ``initialize`` is answered ``InvalidRequest`` (-32600): the workspace is not built again.
- after ``shutdown``: a request is answered ``InvalidRequest`` (-32600) at once (pygls left it unanswered);
  a notification is dropped; ``exit`` alone is processed.

Responses (to requests the server sent) are not gated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcServerNotInitialized


@dataclass(frozen=True)
class Refusal:
    """A message the gate stops: ``error`` is answered when the message is a request (``msg_id`` set)."""

    reason: str
    error: JsonRpcException | None  # None: a notification, dropped


def check(method: str, *, is_request: bool, initialized: bool, shut_down: bool) -> Refusal | None:
    """None when the message may be handled; otherwise what to answer (requests) or why it is dropped."""
    if method == types.EXIT:
        return None
    if shut_down:
        reason = f"{method} after shutdown"
        error: JsonRpcException = JsonRpcInvalidRequest(f"The server is shutting down: {method} is not processed.")
        return Refusal(reason, error if is_request else None)
    if not initialized:
        if method == types.INITIALIZE and is_request:
            return None
        reason = f"{method} before initialize"
        error = JsonRpcServerNotInitialized(f"The server is not initialized: send initialize before {method}.")
        return Refusal(reason, error if is_request else None)
    if method == types.INITIALIZE:
        reason = "a second initialize"
        return Refusal(reason, JsonRpcInvalidRequest("The server is already initialized.") if is_request else None)
    return None


def message_kind(message: Any) -> tuple[str | None, bool]:
    """The method of a request or notification (None for a response) and whether it is a request."""
    method = getattr(message, "method", None)
    if not isinstance(method, str):
        return None, False
    return method, getattr(message, "id", None) is not None
