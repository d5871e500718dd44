"""Malformed input to ``cortex-lsp acp``, as raw NDJSON frames: bad JSON, frames that are not JSON-RPC
objects, wrong types, calls before ``initialize``, unknown sessions, an oversized message. Each gets a
JSON-RPC error (naming the problem), nothing runs, and the agent keeps answering."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from tests.acp.acp_harness import direct_plans
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer

WAIT = 60.0


class RawAcp:
    """``python -m cortex_lsp acp`` driven by raw lines; a thread reads what it sends."""

    def __init__(self, tmp_path: Path, model: ScriptedModelServer | None = None) -> None:
        data = tmp_path / "data"
        data.mkdir(exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "cortex_lsp", "acp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=server_env(model, data), cwd=Path.cwd())
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, pipe: IO[bytes]) -> None:
        for line in pipe:
            if line.strip():
                self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.raw(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    def next(self) -> dict[str, Any]:
        message = self.inbox.get(timeout=WAIT)
        assert message is not None, "the agent closed its output"
        return message

    def reply(self, msg_id: Any) -> dict[str, Any]:
        while True:
            message = self.next()
            if "method" not in message and message.get("id") == msg_id:
                return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=WAIT)


def test_malformed_frames_get_errors_and_the_agent_stays_alive(tmp_path: Path) -> None:
    agent = RawAcp(tmp_path)
    try:
        # before initialize: refused, nothing runs
        agent.send({"id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}})
        early = agent.reply(1)
        assert early["error"]["code"] == -32600 and "initialize" in early["error"]["message"]
        # bad JSON, and frames that are not JSON-RPC objects
        agent.raw(b'{"jsonrpc": "2.0", "id": 2, "method": \n')
        assert agent.next()["error"]["code"] == -32700
        for frame in (b"[1, 2, 3]\n", b"42\n", b'"text"\n', b'{"jsonrpc": "2.0", "id": 3}\n'):
            agent.raw(frame)
            answer = agent.next()
            assert answer["error"]["code"] == -32600, frame
        agent.send({"id": 4, "method": "initialize", "params": {"protocolVersion": 1}})
        init = agent.reply(4)
        assert init["result"]["protocolVersion"] == 1
        assert init["result"]["agentCapabilities"]["loadSession"] is True
        # wrong types: InvalidParams, naming the field
        agent.send({"id": 5, "method": "session/new", "params": {"cwd": 7, "mcpServers": []}})
        wrong = agent.reply(5)
        assert wrong["error"]["code"] == -32602 and "cwd" in json.dumps(wrong["error"])
        agent.send({"id": 6, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}})
        assert "absolute" in json.dumps(agent.reply(6)["error"])
        agent.send({"id": 7, "method": "session/new", "params": ["not", "an", "object"]})
        assert agent.reply(7)["error"]["code"] == -32602
        agent.send({"id": [1], "method": "initialize", "params": {}})
        assert agent.next()["error"]["code"] == -32600
        agent.send({"id": 8, "method": 12})
        assert agent.reply(8)["error"]["code"] == -32600
        agent.send({"id": 9, "method": "no/such_method", "params": {}})
        assert agent.reply(9)["error"]["code"] == -32601
        agent.send({"id": 10, "method": "session/prompt",
                    "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}})
        assert "sessionId" in json.dumps(agent.reply(10)["error"])
        # a response nobody asked for, with an id no request has: ignored
        agent.send({"id": {"odd": True}, "result": None})
        assert agent.next()["error"]["code"] == -32600
        # still alive: a real session answers, and an oversized message is refused by size
        root = tmp_path / "ws"
        root.mkdir()
        agent.send({"id": 11, "method": "session/new", "params": {"cwd": str(root), "mcpServers": [
            {"name": "files", "command": "/bin/true", "args": [], "env": []}]}})
        session = agent.reply(11)["result"]["sessionId"]
        agent.send({"id": 12, "method": "session/prompt", "params": {"sessionId": session, "prompt": [
            {"type": "text", "text": "x" * 9000}]}})
        big = agent.reply(12)
        assert big["error"]["code"] == -32602 and "8192" in json.dumps(big["error"])
        agent.send({"id": 13, "method": "session/prompt", "params": {"sessionId": session, "prompt": [
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}})
        assert "image" in json.dumps(agent.reply(13)["error"])
        agent.send({"id": 14, "method": "session/list", "params": {}})
        listed = agent.reply(14)["result"]["sessions"]
        assert session in [s["sessionId"] for s in listed]
    finally:
        code = agent.close()
    assert code == 0


def _notes_until_commands(agent: RawAcp, session: str) -> list[str]:
    """The messages sent after session/new, up to its available_commands_update."""
    texts: list[str] = []
    while True:
        message = agent.next()
        assert message["params"]["sessionId"] == session
        update = message["params"]["update"]
        if update.get("sessionUpdate") == "available_commands_update":
            return texts
        texts.append(update["content"]["text"])


def test_mcp_servers_and_refused_roots_are_reported_in_one_message(tmp_path: Path) -> None:
    agent = RawAcp(tmp_path)
    try:
        agent.send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        agent.reply(1)
        root = tmp_path / "ws"
        root.mkdir()
        servers = [{"name": "files", "command": "/bin/true", "args": [], "env": []},
                   {"type": "http", "name": "search", "url": "http://127.0.0.1:9/mcp", "headers": []}]
        agent.send({"id": 2, "method": "session/new", "params": {"cwd": str(root), "mcpServers": servers}})
        session = agent.reply(2)["result"]["sessionId"]
        mcp = [t for t in _notes_until_commands(agent, session) if "MCP" in t]
        assert len(mcp) == 1 and "files" in mcp[0] and "search" in mcp[0]

        agent.send({"id": 3, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
        session = agent.reply(3)["result"]["sessionId"]
        said = "".join(_notes_until_commands(agent, session))
        assert "will not use / as the session's folder" in said and "whole file system" in said
    finally:
        agent.close()


def test_cancel_request_of_a_prompt_stops_its_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    """``$/cancel_request`` naming a ``session/prompt`` in flight stops it like ``session/cancel``."""
    direct_plans(model)
    model.on(Reply(content="word " * 400, token_delay=0.05), times=None)
    agent = RawAcp(tmp_path, model)
    try:
        agent.send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        agent.reply(1)
        root = tmp_path / "ws"
        root.mkdir()
        agent.send({"id": 2, "method": "session/new", "params": {"cwd": str(root), "mcpServers": []}})
        session = agent.reply(2)["result"]["sessionId"]
        agent.send({"id": "prompt-1", "method": "session/prompt", "params": {
            "sessionId": session, "prompt": [{"type": "text", "text": "tell me a long story"}]}})
        while True:  # until the answer streams
            update = agent.next().get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "agent_message_chunk" and "word" in update["content"]["text"]:
                break
        agent.send({"method": "$/cancel_request", "params": {"requestId": "prompt-1"}})
        answer = agent.reply("prompt-1")
        assert answer["result"]["stopReason"] == "cancelled"
    finally:
        agent.close()


def test_stdio_that_is_not_a_pipe_works(tmp_path: Path) -> None:
    """A client (or a script) that gives ``acp`` a file for stdin and stdout: it answers what the file
    holds and ends at its end; with ``/dev/null`` for stdin it ends at once, with exit code 0."""
    data = tmp_path / "data"
    data.mkdir()
    requests = tmp_path / "in.ndjson"
    requests.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"protocolVersion": 1}}) + "\nnot json\n", encoding="utf-8")
    answers = tmp_path / "out.ndjson"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "cortex_lsp", "acp"], stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, env=server_env(None, data), timeout=WAIT)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    replies = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    (initialized,) = [r for r in replies if r.get("id") == 1]
    assert initialized["result"]["agentInfo"]["name"] == "cortex-lsp"
    assert [r["error"]["code"] for r in replies if r.get("id") is None] == [-32700]
    nothing = subprocess.run([sys.executable, "-m", "cortex_lsp", "acp"], stdin=subprocess.DEVNULL,
                             capture_output=True, env=server_env(None, data), timeout=WAIT)
    assert nothing.returncode == 0 and nothing.stdout == b"" and b"Traceback" not in nothing.stderr
