"""The lifecycle gate's table (cortex_lsp/server/lifecycle.py): what passes, what is answered, what is dropped."""

from __future__ import annotations

import pytest

from cortex_lsp.server.lifecycle import check

#: (method, is_request, initialized, shut_down) -> expected error code, 0 = dropped, None = passes
CASES: list[tuple[str, bool, bool, bool, int | None]] = [
    ("initialize", True, False, False, None),
    ("exit", False, False, False, None),
    ("workspace/executeCommand", True, False, False, -32002),
    ("shutdown", True, False, False, -32002),
    ("textDocument/codeAction", True, False, False, -32002),
    ("initialized", False, False, False, 0),
    ("textDocument/didOpen", False, False, False, 0),
    ("$/cancelRequest", False, False, False, 0),
    ("initialize", False, False, False, 0),  # initialize sent as a notification: nothing to answer
    ("workspace/executeCommand", True, True, False, None),
    ("initialized", False, True, False, None),
    ("shutdown", True, True, False, None),
    ("initialize", True, True, False, -32600),
    ("workspace/executeCommand", True, True, True, -32600),
    ("shutdown", True, True, True, -32600),
    ("textDocument/didChange", False, True, True, 0),
    ("exit", False, True, True, None),
]


@pytest.mark.parametrize(("method", "is_request", "initialized", "shut_down", "expected"), CASES)
def test_gate(method: str, is_request: bool, initialized: bool, shut_down: bool, expected: int | None) -> None:
    refusal = check(method, is_request=is_request, initialized=initialized, shut_down=shut_down)
    if expected is None:
        assert refusal is None
        return
    assert refusal is not None and (method in refusal.reason or "initialize" in refusal.reason)
    if expected == 0:
        assert refusal.error is None
    else:
        assert refusal.error is not None and refusal.error.to_response_error().code == expected
