"""The LSP lifecycle over the real server (raw frames over stdio): before ``initialize`` every request is
answered ServerNotInitialized (-32002) with no side effect and notifications are dropped; after ``shutdown``
requests are answered InvalidRequest (-32600) at once and ``exit`` still ends the process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.lsp_harness import ask, execute, lsp_session, server_env
from tests.raw_server import RawServer
from tests.scripted_model import ScriptedModelServer
from tests.waiting import until_sync

#: every command of DESIGN.md with arguments that would do its work (reset really confirms)
COMMANDS: dict[str, dict[str, Any]] = {
    "cortex.ask": {"message": "hello"},
    "cortex.explain": {"uri": "file:///nowhere/x.py"},
    "cortex.run": {"uri": "file:///nowhere/x.py"},
    "cortex.session.new": {},
    "cortex.memory.search": {"query": "capital"},
    "cortex.memory.sessions": {},
    "cortex.memory.forget": {"id": "fact-1"},
    "cortex.memory.reset": {"confirm": True},
    "cortex.doctor": {},
}


def _send_every_command(server: RawServer) -> dict[str, dict[str, Any]]:
    return {command: server.answer(server.request("workspace/executeCommand",
                                                  {"command": command, "arguments": [argument]}))
            for command, argument in COMMANDS.items()}


def _gate_lines(log: Path) -> set[str]:
    return {line.split("WARNING cortex.server ", 1)[1].strip()
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
            if "WARNING cortex.server refused " in line}


def _all_refused(replies: dict[str, dict[str, Any]]) -> None:
    for command, reply in replies.items():
        assert "result" not in reply, (command, reply)
        assert reply["error"]["code"] == -32002, (command, reply)


async def test_commands_before_initialize_are_refused_and_memory_is_intact(model: ScriptedModelServer,
                                                                            tmp_path: Path) -> None:
    async with lsp_session(model, tmp_path) as client:  # a first session stores a turn
        first = await ask(client, "What is the capital of Japan?")
        sessions = await execute(client, "cortex.memory.sessions")
    assert any(s["id"] == first["session_id"] for s in sessions["sessions"]), sessions
    server = RawServer(server_env(model, tmp_path / "data"), tmp_path)
    try:
        replies = _send_every_command(server)
        # notifications before initialize are dropped: no handler runs (pygls showed each one's failure as
        # "Error in server"), the bad setting one carries is never read
        doc = (tmp_path / "ws" / "x.py").as_uri()
        server.send({"method": "workspace/didChangeConfiguration",
                     "params": {"settings": {"cortex": {"max_agent_steps": "lots"}}}})
        server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": doc, "languageId": "python", "version": 1, "text": "x = 1\n"}}})
        server.send({"method": "workspace/didChangeWorkspaceFolders", "params": {"event": {
            "added": [{"uri": tmp_path.as_uri(), "name": "all"}], "removed": []}}})
        server.send({"method": "$/cancelRequest", "params": {"id": 1}})
        reply = server.initialize(tmp_path / "ws")
        assert "capabilities" in reply["result"], reply
        before = server.seen[: server.seen.index(reply)]
        assert not [m for m in before if m.get("method") == "window/showMessage"], before
        again = server.answer(server.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(),
                                                            "capabilities": {}}))
        assert again["error"]["code"] == -32600, again  # the workspace is not rebuilt
        after = server.answer(server.request("workspace/executeCommand",
                                             {"command": "cortex.memory.sessions", "arguments": [{}]}))
        assert any(s["id"] == first["session_id"] for s in after["result"]["sessions"]), after
        shown = [m for m in server.seen if m.get("method") in ("window/showMessage", "window/logMessage")]
        assert not any("max_agent_steps" in json.dumps(m) for m in shown), shown
        _all_refused(replies)
    finally:
        assert server.close() == 0


def test_commands_before_initialize_start_no_child_process(tmp_path: Path) -> None:
    """Each command is stopped at the gate (its log line names the request) before any handler is
    dispatched: with that line seen, nothing of the command can still start later, so the process tree
    and the data folder are checked at once (no waiting for a child that might come)."""
    # ``auto`` with no Ollama answering: a doctor or a run would start the embedded llama.cpp server
    (tmp_path / "ws").mkdir()
    env = server_env(None, tmp_path / "data", CORTEX_MODEL_BACKEND="auto")
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        server = RawServer(env, tmp_path, stderr=stderr)
        try:
            ids = [server.request("workspace/executeCommand", {"command": command, "arguments": [argument]})
                   for command, argument in COMMANDS.items()]
            replies = {command: server.answer(msg_id) for command, msg_id in zip(COMMANDS, ids, strict=True)}
            _all_refused(replies)
            wanted = {f"refused workspace/executeCommand before initialize (request {i})" for i in ids}
            until_sync(lambda: wanted <= _gate_lines(log), within=60,
                       what="the gate's log line for each refused command")
            assert server.children() == []
            assert not (tmp_path / "data").exists(), "a refused command opened the data folder (memory, settings)"
        finally:
            server.proc.kill()
            server.proc.wait()


@pytest.mark.parametrize("command", ["cortex.ask", "cortex.run", "cortex.memory.sessions"])
def test_requests_after_shutdown_are_refused_at_once_and_exit_ends(tmp_path: Path, command: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "x.py").write_text("print(1)\n", encoding="utf-8")
    server = RawServer(server_env(None, tmp_path / "data"), tmp_path)
    try:
        assert "result" in server.initialize(tmp_path / "ws")
        assert server.answer(server.request("shutdown"), timeout=30).get("result", "missing") is None
        argument = {"message": "hi"} if command == "cortex.ask" else (
            {"uri": (tmp_path / "ws" / "x.py").as_uri()} if command == "cortex.run" else {})
        reply = server.answer(server.request("workspace/executeCommand",
                                             {"command": command, "arguments": [argument]}), timeout=20)
        assert reply["error"]["code"] == -32600, reply
        assert server.answer(server.request("shutdown"), timeout=20)["error"]["code"] == -32600
        server.send({"method": "exit"})
        assert server.proc.wait(timeout=30) == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
