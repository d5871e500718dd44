"""Deeply nested frames: no frame ends the server.

A 2.4 KB message with 1,200 nested ``[`` used to end the process (``RecursionError`` out of ``json.loads``).
Now a body nested deeper than ``MAX_DEPTH`` is refused unread — a request answers ``ParseError`` with its
id, a notification is logged — and the next request on the same real server over stdio still answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from cortex_lsp.server.transport import MAX_DEPTH, too_deep
from tests.fuzz.test_fuzz_frames import RawServer, _frame
from tests.lsp_harness import server_env

DEPTHS = (300, 1200, 100_000)
OPENERS = ("[", "{")
# numbers no position can hold: each answers an error with the request's id, and the server goes on
HOSTILE_NUMBERS = [("huge_int", "9" * 6000), ("overflow_float", "1e999"), ("negative", "-5")]


def _nested(depth: int, opener: str) -> str:
    if opener == "[":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def _body(depth: int, opener: str, msg_id: int | None) -> bytes:
    head = '{"jsonrpc":"2.0",' + (f'"id":{msg_id},' if msg_id is not None else "")
    return (head + '"method":"workspace/executeCommand","params":{"command":"cortex.session.new","arguments":['
            + _nested(depth, opener) + "]}}").encode()


def _raw(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("opener", OPENERS)
def test_depth_check_matches_json_nesting(opener: str) -> None:
    for depth in (1, 10, MAX_DEPTH - 4, MAX_DEPTH - 3):  # the body's own object, params, arguments add 3
        body = _body(depth, opener, 1)
        assert not too_deep(body), depth
        json.loads(body)
    for depth in (MAX_DEPTH - 2, 1200, 100_000):
        assert too_deep(_body(depth, opener, 1)), depth
    brackets_in_strings = json.dumps({"jsonrpc": "2.0", "method": "m", "params": {"t": "[" * 5000 + "{" * 5000}})
    assert not too_deep(brackets_in_strings.encode()), "brackets inside strings are text, not nesting"
    many_shallow = json.dumps({"jsonrpc": "2.0", "method": "m", "params": [[1]] * 5000})
    assert not too_deep(many_shallow.encode()), "many brackets, shallow"
    assert too_deep(b"[" * 100_000), "unbalanced open brackets are refused too"


async def test_real_server_survives_deep_frames(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cortex_lsp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=server_env(None, tmp_path / "data"), cwd=os.getcwd())
    server = RawServer(proc)
    answers: list[dict[str, Any]] = []
    try:
        await server.send(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                  "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))
        assert "result" in await server.response(0)
        await server.send(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        n = 0
        for depth in DEPTHS:
            for opener in OPENERS:
                for as_request in (True, False):
                    n += 1
                    bad_id = 1000 + n
                    await server.send(_raw(_body(depth, opener, bad_id if as_request else None)))
                    if as_request:
                        error = await server.response(bad_id, within=30)
                        assert error["error"]["code"] == -32700, (depth, opener, error)
                    probe = {"jsonrpc": "2.0", "id": n, "method": "workspace/executeCommand",
                             "params": {"command": "cortex.session.new", "arguments": []}}
                    await server.send(_frame(probe))
                    reply = await server.response(n, within=30)
                    assert "result" in reply, (depth, opener, as_request, reply)
                    answers.append(reply)
                    assert proc.returncode is None
        for name, value in HOSTILE_NUMBERS:
            n += 1
            body = ('{"jsonrpc":"2.0","id":' + str(n) + ',"method":"textDocument/codeAction","params":{"textDocument":'
                    '{"uri":"untitled:x"},"range":{"start":{"line":' + value + ',"character":0},'
                    '"end":{"line":0,"character":0}},"context":{"diagnostics":[]}}}').encode()
            await server.send(_raw(body))
            error = await server.response(n, within=30)
            assert error.get("error", {}).get("code") in (-32700, -32600, -32602), (name, error)
            n += 1
            await server.send(_frame({"jsonrpc": "2.0", "id": n, "method": "workspace/executeCommand",
                                      "params": {"command": "cortex.session.new", "arguments": []}}))
            assert "result" in await server.response(n, within=30), name
        await server.send(_frame({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}))
        await server.response("bye")
        await server.send(_frame({"jsonrpc": "2.0", "method": "exit"}))
        code = await asyncio.wait_for(proc.wait(), timeout=15)
        assert proc.stderr is not None
        stderr = (await proc.stderr.read()).decode(errors="replace")
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert code == 0
    assert len(answers) == len(DEPTHS) * len(OPENERS) * 2
    assert "RecursionError" not in stderr
    assert stderr.count("nested deeper than") == len(answers), stderr[-2000:]
