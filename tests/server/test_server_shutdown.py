"""Shutdown while a command is still running (a long answer streaming): the shutdown request answers
without an error and the server exits cleanly (pygls used to fail iterating its request table)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest
from lsprotocol import types

from tests.lsp_harness import EXIT_WAIT_SECONDS, lsp_session, server_env
from tests.raw_server import RawServer
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
        server = client._server
        assert server is not None
        exit_code = await asyncio.wait_for(server.wait(), timeout=EXIT_WAIT_SECONDS)  # it ends on exit
    assert exit_code == 0, "a clean exit after shutdown"


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


def _stuck_server(tmp_path: Path, grace: float) -> RawServer:
    server = RawServer(server_env(None, tmp_path / "data"), tmp_path, argv=("-c", STUCK_DRIVER, str(grace)))
    server.initialize(tmp_path)
    reply = server.answer(server.request("workspace/executeCommand", {"command": "test.stuck", "arguments": []}))
    assert reply.get("result") == "stuck"
    return server


def _exits_within(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


def _kill(*servers: RawServer) -> None:
    for server in servers:
        server.proc.kill()
        server.proc.wait()


@pytest.mark.parametrize("how", ["shutdown and exit", "stdin closed"])
def test_the_process_ends_after_the_connection_even_with_a_stuck_thread(tmp_path: Path, how: str) -> None:
    control = _stuck_server(tmp_path, grace=3600)  # the watchdog out of reach: what a stuck thread does alone
    server = _stuck_server(tmp_path, grace=1)
    try:
        for raw in (control, server):
            assert raw.proc.stdin is not None
            if how == "shutdown and exit":
                assert "error" not in raw.answer(raw.request("shutdown"))
                raw.send({"method": "exit"})
            else:  # the editor went away without a word
                raw.proc.stdin.close()
        assert _exits_within(server.proc, 60) == (0 if how == "shutdown and exit" else 1)
        if how == "shutdown and exit":
            # after a completed shutdown a thread still running is an abandoned one: the short grace
            # (SHUT_DOWN_GRACE_SECONDS) applies whatever the connection's grace is
            assert _exits_within(control.proc, 60) == 0
        else:
            assert _exits_within(control.proc, 3) is None, "control: without the watchdog a stuck thread keeps it alive"
    finally:
        _kill(control, server)


# -- exit in the middle of a run, and the exit code -----------------------------------------------------

def _server(model: ScriptedModelServer, tmp_path: Path, stderr: IO[bytes] | int) -> RawServer:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    server = RawServer(server_env(model, tmp_path / "data"), tmp_path, stderr=stderr)
    server.initialize(ws, capabilities={"window": {"workDoneProgress": True}})
    return server


def _is_token(message: dict[str, Any]) -> bool:
    return message.get("method") == "cortex/event" and (message.get("params") or {}).get("type") == "token"


def test_exit_without_shutdown_while_a_run_streams_ends_quietly_with_code_1(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    """Exit mid-run: the cancelled run's last notes were written to the closed stdout, each failure was
    reported to the client by another failing write: 19–48 MB of tracebacks, and the process lived on."""
    model.on(Reply(content="word " * 2000, token_delay=0.02), times=None)
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        server = _server(model, tmp_path, stderr)
        try:
            server.request("workspace/executeCommand", {"command": "cortex.ask",
                                                        "arguments": [{"message": "go on and on"}]})
            assert server.wait_for(_is_token) is not None, "no token streamed"
            server.send({"method": "exit"})
            code = _exits_within(server.proc, 60)
        finally:
            _kill(server)
    assert code == 1, "exit without shutdown is exit code 1 (LSP)"
    assert log.stat().st_size < 100_000, log.read_text(errors="replace")[-3000:]


def test_shutdown_then_exit_is_exit_code_0(model: ScriptedModelServer, tmp_path: Path) -> None:
    server = _server(model, tmp_path, subprocess.DEVNULL)
    try:
        assert "error" not in server.answer(server.request("shutdown"))
        server.send({"method": "exit"})
        assert _exits_within(server.proc, 60) == 0
    finally:
        _kill(server)


# -- shutdown at any moment of an ask: nothing uses the store after it closed ---------------------------

@pytest.mark.parametrize("after_tokens", [0, 3])
async def test_shutdown_right_after_an_ask_cancels_it_without_an_internal_error(
        model: ScriptedModelServer, tmp_path: Path, after_tokens: int) -> None:
    """The ask arrives and shutdown follows at once (before its run opened memory), or after a few
    tokens: the run ends cancelled (or the request answers RequestCancelled), never with "Internal error"
    (the store was closed under a run that had not started yet: "Cannot operate on a closed database")."""
    model.on(Reply(content="word " * 200, token_delay=0.05), times=None)
    async with lsp_session(model, tmp_path) as client:
        running = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": "go on and on"}]),
        ))
        for _ in range(1200):
            if sum(e["type"] == "token" for e in client.rec.all_events) >= after_tokens:
                break
            await asyncio.sleep(0.05)
        reply = await asyncio.wait_for(client.protocol.send_request_async(types.SHUTDOWN, None), timeout=30)
        assert reply is None
        try:
            result: Any = await asyncio.wait_for(running, timeout=30)
        except Exception as exc:  # answered RequestCancelled before its run started
            result = exc
        client.protocol.notify(types.EXIT, None)
        errors = [e["data"].get("message", "") for e in client.rec.all_events if e["type"] == "error"]
    assert not any("Internal error" in m for m in errors), errors
    if isinstance(result, Exception):
        assert "cancel" in str(result).lower(), result
    else:
        assert getattr(result, "stop_reason", None) == "cancelled" or (
            isinstance(result, dict) and result.get("stop_reason") == "cancelled"), result
