"""The LSP lifecycle over the real server (raw frames over stdio): before ``initialize`` every request is
answered ServerNotInitialized (-32002) with no side effect and notifications are dropped; after ``shutdown``
requests are answered InvalidRequest (-32600) at once and ``exit`` still ends the process.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests.lsp_harness import ask, execute, lsp_session, server_env
from tests.scripted_model import ScriptedModelServer

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
WAIT = 60.0


class RawServer:
    """The real server (``python -m cortex_lsp``) driven by raw frames; a thread reads what it sends."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "cortex_lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._next_id = 100
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, pipe: IO[bytes]) -> None:
        while True:
            length = None
            while (line := pipe.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(pipe.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def answer(self, msg_id: int, timeout: float = WAIT) -> dict[str, Any]:
        """The response to ``msg_id``; requests from the server are answered null on the way."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            assert message is not None, "the server closed its stdout"
            self.seen.append(message)
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif message.get("id") == msg_id:
                return message
        raise AssertionError(f"no answer to request {msg_id} within {timeout:g} s")

    def initialize(self, root: Path) -> dict[str, Any]:
        reply = self.answer(self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]}))
        self.send({"method": "initialized", "params": {}})
        return reply

    def children(self) -> list[int]:
        found: list[int] = []
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            with open(task / "children", encoding="ascii") as handle:
                found += [int(pid) for pid in handle.read().split()]
        return found

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.answer(self.request("shutdown"), timeout=30)
                self.send({"method": "exit"})
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def _send_every_command(server: RawServer) -> dict[str, dict[str, Any]]:
    return {command: server.answer(server.request("workspace/executeCommand",
                                                  {"command": command, "arguments": [argument]}))
            for command, argument in COMMANDS.items()}


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
    # ``auto`` with no Ollama answering: a doctor or a run would start the embedded llama.cpp server
    (tmp_path / "ws").mkdir()
    env = server_env(None, tmp_path / "data", CORTEX_MODEL_BACKEND="auto")
    server = RawServer(env, tmp_path)
    try:
        replies = _send_every_command(server)
        time.sleep(1.0)  # a child started by a refused command would be running now
        assert server.children() == []
        _all_refused(replies)
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
