"""Shutdown while a command is still running (a long answer streaming): the shutdown request answers
without an error and the server exits cleanly (pygls used to fail iterating its request table)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest
from lsprotocol import types

from tests.lsp_harness import lsp_session, server_env
from tests.scripted_model import Reply, ScriptedModelServer


async def test_shutdown_with_a_run_in_flight_answers_cleanly(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="word " * 400, token_delay=0.05), times=None)
    async with lsp_session(model, tmp_path) as client:
        running = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": "go on and on"}]),
        ))
        for _ in range(600):
            if any(e["type"] == "token" for e in client.rec.all_events):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("no token streamed")
        reply = await asyncio.wait_for(client.protocol.send_request_async(types.SHUTDOWN, None), timeout=15)
        assert reply is None  # an error reply would raise here
        running.cancel()
        client.protocol.notify(types.EXIT, None)
        await asyncio.sleep(0.2)


# -- the process ends even when a worker thread never returns -------------------------------------------

STUCK_DRIVER = """
import asyncio, sys, threading
from cortex_lsp.server import build_server
from cortex_lsp.server.transport import serve_stdio

server = build_server()

@server.command("test.stuck")
async def stuck(ls, *args):
    # a call that never returns, in the default executor (asyncio.run waits for it at exit)
    asyncio.get_running_loop().run_in_executor(None, threading.Event().wait)
    return "stuck"

serve_stdio(server, exit_grace=float(sys.argv[1]))
"""


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    pipe.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    pipe.flush()


def _answer(pipe: IO[bytes], request_id: int) -> dict[str, Any]:
    while True:
        length = 0
        while (line := pipe.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            raise AssertionError("the server closed its output")
        message: dict[str, Any] = json.loads(pipe.read(length))
        if message.get("id") == request_id and "method" not in message:
            return message


def _stuck_server(tmp_path: Path, grace: float) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", STUCK_DRIVER, str(grace)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=server_env(None, tmp_path / "data"), cwd=tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    _send(proc.stdin, {"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    _answer(proc.stdout, 1)
    _send(proc.stdin, {"method": "initialized", "params": {}})
    _send(proc.stdin, {"id": 2, "method": "workspace/executeCommand",
                       "params": {"command": "test.stuck", "arguments": []}})
    assert _answer(proc.stdout, 2).get("result") == "stuck"
    return proc


def _exits_within(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


@pytest.mark.parametrize("how", ["shutdown and exit", "stdin closed"])
def test_the_process_ends_after_the_connection_even_with_a_stuck_thread(tmp_path: Path, how: str) -> None:
    control = _stuck_server(tmp_path, grace=3600)  # the watchdog out of reach: what a stuck thread does alone
    server = _stuck_server(tmp_path, grace=1)
    try:
        for proc in (control, server):
            assert proc.stdin is not None and proc.stdout is not None
            if how == "shutdown and exit":
                _send(proc.stdin, {"id": 3, "method": "shutdown"})
                assert "error" not in _answer(proc.stdout, 3)
                _send(proc.stdin, {"method": "exit"})
            else:  # the editor went away without a word
                proc.stdin.close()
        assert _exits_within(server, 60) == (0 if how == "shutdown and exit" else 1)
        assert _exits_within(control, 3) is None, "control: without the watchdog a stuck thread keeps it alive"
    finally:
        for proc in (control, server):
            proc.kill()
            proc.wait()


# -- exit in the middle of a run, and the exit code -----------------------------------------------------

def _server(model: ScriptedModelServer, tmp_path: Path, stderr: IO[bytes] | int) -> subprocess.Popen[bytes]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "cortex_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=stderr, env=server_env(model, tmp_path / "data"), cwd=tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    _send(proc.stdin, {"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": ws.as_uri(), "capabilities": {"window": {"workDoneProgress": True}}}})
    _answer(proc.stdout, 1)
    _send(proc.stdin, {"method": "initialized", "params": {}})
    return proc


def _streaming(pipe: IO[bytes]) -> None:
    """Read until the run has streamed a token (a cortex/event of type token)."""
    for _ in range(100_000):
        length = 0
        while (line := pipe.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            raise AssertionError("the server closed its output before streaming")
        message = json.loads(pipe.read(length))
        if message.get("method") == "cortex/event" and (message.get("params") or {}).get("type") == "token":
            return
    raise AssertionError("no token streamed")


def test_exit_without_shutdown_while_a_run_streams_ends_quietly_with_code_1(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    """Red team 4: the cancelled run's last notes were written to the closed stdout, each failure was
    reported to the client by another failing write: 19–48 MB of tracebacks, and the process lived on."""
    model.on(Reply(content="word " * 2000, token_delay=0.02), times=None)
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        proc = _server(model, tmp_path, stderr)
        try:
            assert proc.stdin is not None and proc.stdout is not None
            _send(proc.stdin, {"id": 2, "method": "workspace/executeCommand", "params": {
                "command": "cortex.ask", "arguments": [{"message": "go on and on"}]}})
            _streaming(proc.stdout)
            _send(proc.stdin, {"method": "exit"})
            code = _exits_within(proc, 60)
        finally:
            proc.kill()
            proc.wait()
    assert code == 1, "exit without shutdown is exit code 1 (LSP)"
    assert log.stat().st_size < 100_000, log.read_text(errors="replace")[-3000:]


def test_shutdown_then_exit_is_exit_code_0(model: ScriptedModelServer, tmp_path: Path) -> None:
    proc = _server(model, tmp_path, subprocess.DEVNULL)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        _send(proc.stdin, {"id": 3, "method": "shutdown"})
        assert "error" not in _answer(proc.stdout, 3)
        _send(proc.stdin, {"method": "exit"})
        assert _exits_within(proc, 60) == 0
    finally:
        proc.kill()
        proc.wait()
