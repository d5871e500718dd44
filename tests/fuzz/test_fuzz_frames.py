"""Malformed frames: the framer alone (seeded random streams) and raw bytes on the real server's stdin.

Decision: the server resynchronises. After a malformed frame it logs one error
(``malformed frame``, on stderr and as ``window/logMessage``) and answers the next valid request; a
request whose JSON is valid but whose params are not gets an error with its id.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from cortex_lsp.server.transport import Frame, FrameError, Framer
from tests.lsp_harness import server_env

SEED = 1313
CASES = 400


def _frame(payload: dict[str, Any], *, content_type: bool = False) -> bytes:
    body = json.dumps(payload).encode()
    head = f"Content-Length: {len(body)}\r\n"
    if content_type:
        head += "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
    return head.encode() + b"\r\n" + body


# Malformed pieces that may sit between valid frames; none of them swallows the frame after it.
BAD_PIECES: list[tuple[str, bytes]] = [
    ("no_content_length", b'Content-Type: application/json\r\n\r\n{"jsonrpc":"2.0","id":"x","method":"shutdown"}'),
    ("bad_length_text", b"Content-Length: abc\r\n\r\n{}"),
    ("negative_length", b"Content-Length: -5\r\n\r\n{}"),
    ("huge_length", b"Content-Length: 99999999999\r\n\r\n"),
    ("over_limit_length", b"Content-Length: 70000000\r\n\r\n"),
    ("garbage_text", b"hello there, this is not LSP\n"),
    ("garbage_binary", bytes(range(0, 256, 7))),
    ("blank_lines", b"\r\n\r\n\n"),
    ("bad_header_line", b"Content-Length: 2\r\nthis is not a header\r\n\r\n{}"),
    ("json_without_header", b'{"jsonrpc":"2.0","id":99,"method":"shutdown"}'),
    ("header_no_blank_line", b"Content-Length: 2\r\n{}"),
    ("nul_bytes", b"\x00" * 40),
]


def _parse_all(stream: bytes, rng: random.Random) -> tuple[list[bytes], int]:
    framer, bodies, errors, i = Framer(), [], 0, 0
    while i < len(stream):
        step = rng.choice([1, 2, 3, 7, 64, 4096])
        for item in framer.feed(stream[i:i + step]):
            if isinstance(item, Frame):
                try:
                    json.loads(item.body)
                    bodies.append(item.body)
                except ValueError:
                    errors += 1
                    for again in framer.feed(b"") if framer.resync_from(item.body) else ():
                        if isinstance(again, Frame):
                            bodies.append(again.body)
            else:
                errors += 1
        i += step
    return bodies, errors


def test_framer_recovers_every_valid_frame_from_seeded_hostile_streams() -> None:
    rng = random.Random(SEED)
    total_bad = 0
    for case in range(CASES):
        good = [_frame({"jsonrpc": "2.0", "id": f"{case}-{n}", "method": "m", "params": {"n": n}},
                       content_type=rng.random() < 0.3) for n in range(rng.randint(1, 5))]
        parts: list[bytes] = []
        for frame in good:
            for _ in range(rng.randint(0, 2)):
                parts.append(rng.choice(BAD_PIECES)[1])
                total_bad += 1
            parts.append(frame)
        bodies, _ = _parse_all(b"".join(parts), rng)
        ids = [json.loads(b)["id"] for b in bodies if json.loads(b).get("method") == "m"]
        assert ids == [json.loads(f.split(b"\r\n\r\n", 1)[1])["id"] for f in good], case
    print(f"framer: {CASES} streams, {total_bad} malformed pieces, every valid frame recovered")


def test_framer_never_raises_on_random_bytes() -> None:
    rng = random.Random(SEED + 1)
    for _ in range(200):
        framer = Framer(max_body=4096)
        for _ in range(20):
            blob = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300)))
            if rng.random() < 0.3:
                blob += b"Content-Length: " + str(rng.randint(0, 5000)).encode() + b"\r\n\r\n"
            list(framer.feed(blob))
        framer.stalled()


def test_a_short_body_is_given_up_when_a_frame_waits_inside_it() -> None:
    framer = Framer()
    good = _frame({"jsonrpc": "2.0", "id": 1, "method": "m"})
    assert list(framer.feed(b"Content-Length: 500\r\n\r\n{}" + good)) == []  # swallowed into the body
    error = framer.stalled()
    assert isinstance(error, FrameError)
    out = list(framer.feed(b""))
    assert [json.loads(i.body)["id"] for i in out if isinstance(i, Frame)] == [1]


# -- the real server --------------------------------------------------------------------------------

class RawServer:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.buffer = b""

    async def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def response(self, msg_id: Any, within: float = 15) -> dict[str, Any]:
        """Read messages until the response to ``msg_id`` (server requests and notifications are skipped)."""
        assert self.proc.stdout is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            while b"\r\n\r\n" in self.buffer:
                head, rest = self.buffer.split(b"\r\n\r\n", 1)
                length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                if len(rest) < length:
                    break
                body, self.buffer = rest[:length], rest[length:]
                message = json.loads(body)
                if "method" in message and "id" in message:  # a server request: answer null
                    await self.send(_frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
                elif message.get("id") == msg_id and "method" not in message:
                    return message  # type: ignore[no-any-return]
            chunk = await asyncio.wait_for(self.proc.stdout.read(65536), timeout=max(deadline - loop.time(), 0.01))
            if not chunk:
                raise AssertionError("the server closed stdout")
            self.buffer += chunk


SERVER_PROBES: list[tuple[str, bytes]] = [
    *BAD_PIECES,
    ("body_not_json", b"Content-Length: 12\r\n\r\nnot json at!"),
    ("body_not_utf8", b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc"),
    ("json_array", b"Content-Length: 2\r\n\r\n[]"),
    ("json_no_jsonrpc", b'Content-Length: 14\r\n\r\n{"id":5,"x":1}'),
    ("length_one_too_long", b'Content-Length: 15\r\n\r\n{"id":6,"x":1}'),
    ("bad_params_request", _frame({"jsonrpc": "2.0", "id": "bad-params", "method": "textDocument/codeAction",
                                   "params": {"textDocument": 5}})),
    ("bad_response", _frame({"jsonrpc": "2.0", "id": "nobody-asked", "result": {"x": 1}})),
    ("unknown_method_notification", _frame({"jsonrpc": "2.0", "method": "$/nothing", "params": {}})),
    ("length_too_long", b"Content-Length: 400\r\n\r\n{}"),  # swallows the next frame until the stall
]


async def test_real_server_answers_the_next_request_after_each_malformed_frame(tmp_path: Path) -> None:
    env = server_env(None, tmp_path / "data")
    (tmp_path / "data").mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cortex_lsp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=os.getcwd())
    server = RawServer(proc)
    root = tmp_path / "ws"
    root.mkdir()
    answered = 0
    try:
        await server.send(_frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                  "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))
        assert "result" in await server.response(0)
        await server.send(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        for n, (name, bad) in enumerate(SERVER_PROBES, start=1):
            await server.send(bad)
            probe = {"jsonrpc": "2.0", "id": n, "method": "textDocument/codeAction",
                     "params": {"textDocument": {"uri": "untitled:x"},
                                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                "context": {"diagnostics": []}}}
            await server.send(_frame(probe))
            try:
                reply = await server.response(n, within=20)
            except TimeoutError:
                raise AssertionError(f"no answer after the malformed frame {name!r}") from None
            assert reply.get("result") == [], (name, reply)
            answered += 1
        await server.send(_frame({"jsonrpc": "2.0", "id": "bad-again", "method": "textDocument/codeAction",
                                  "params": {"textDocument": 5}}))
        error = await server.response("bad-again")
        assert error["error"]["code"] == -32602, "invalid params answered with the request's id"
        await server.send(_frame({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}))
        await server.response("bye")
        await server.send(_frame({"jsonrpc": "2.0", "method": "exit"}))
        await asyncio.wait_for(proc.wait(), timeout=15)
        assert proc.stderr is not None
        stderr = (await proc.stderr.read()).decode(errors="replace")
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert answered == len(SERVER_PROBES)
    assert stderr.count("malformed") >= len(BAD_PIECES) - 2, stderr[-2000:]
    print(f"real server: {len(SERVER_PROBES)} malformed-frame probes, each followed by an answered request")


@pytest.mark.parametrize("tail", [b"", b"Content-Length: 10\r\n\r\n{}"])
async def test_eof_mid_frame_exits_cleanly(tmp_path: Path, tail: bytes) -> None:
    (tmp_path / "data").mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cortex_lsp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=server_env(None, tmp_path / "data"))
    assert proc.stdin is not None
    proc.stdin.write(b"garbage\r\n" + tail)
    await proc.stdin.drain()
    proc.stdin.close()
    try:
        code = await asyncio.wait_for(proc.wait(), timeout=20)
    finally:
        if proc.returncode is None:
            proc.kill()
    assert code is not None


def test_stdin_from_a_regular_file_goes_through_the_same_framer(tmp_path: Path) -> None:
    import subprocess

    stream = tmp_path / "session.bin"
    stream.write_bytes(
        _frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        + b"junk between frames\r\n"
        + _frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}))
    (tmp_path / "data").mkdir()
    with stream.open("rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "cortex_lsp"], stdin=stdin, capture_output=True, timeout=60,
                              env=server_env(None, tmp_path / "data"))
    assert done.returncode == 0
    assert b'"id": 1' in done.stdout, "answered the request after the junk, then ended at EOF"
    assert b"malformed frame: garbage between frames" in done.stderr
