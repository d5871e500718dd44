"""The official ACP TypeScript SDK (``@agentclientprotocol/sdk``, its client app) drives the real
``cortex-lsp acp`` over stdio: a streamed answer, and a write that asks permission (allowed → written by
the client; rejected → nothing written). The Node script is tests/acp/node/client.mjs; its dependencies
are installed with ``npm ci`` in tests/acp/node (.ci/run does it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_writes import WRITE, script_write
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer

pytestmark = [pytest.mark.editor, pytest.mark.slow]

NODE_DIR = Path(__file__).parent / "node"
ANSWER = "Paris is the capital of France."


def _drive(model: ScriptedModelServer, tmp_path: Path, permission: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip("node or tests/acp/node/node_modules is missing: run `npm ci` in tests/acp/node")
    root = tmp_path / "ws"
    root.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    env = server_env(model, data)
    env["PYTHONPATH"] = os.getcwd()  # the agent's `python -m cortex_lsp` is this tree's
    done = subprocess.run([node, str(NODE_DIR / "client.mjs"), sys.executable, str(root), permission,
                           "What is the capital of France?", WRITE],
                          capture_output=True, text=True, env=env, cwd=os.getcwd(), timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["root"] = root
    return result


def _answer(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates
                   if u["sessionUpdate"] == "agent_message_chunk" and u["content"]["type"] == "text")


def _script(model: ScriptedModelServer) -> None:
    script_write(model, "notes.txt")
    model.on(Reply(content=ANSWER), times=None, first=True,
             when=lambda body: "capital of France" in json.dumps(body["messages"][-1]))


def test_node_client_asks_and_allows_a_write(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script(model)
    result = _drive(model, tmp_path, "allow")
    assert result["init"]["agentCapabilities"]["loadSession"] is True
    assert result["asked"]["stopReason"] == "end_turn"
    assert ANSWER in _answer(result["updates"])
    assert result["wrote"]["stopReason"] == "end_turn"
    (permission,) = result["permissions"]
    assert permission["toolCall"]["_meta"]["cortex"]["asked"] is True
    assert any(c["type"] == "diff" for c in permission["toolCall"]["content"])
    target = result["root"] / "notes.txt"
    assert result["writes"] == [{"path": str(target), "content": "hello from cortex\n"}]
    assert target.read_text() == "hello from cortex\n"
    kinds = {u.get("kind") for u in result["updates"] if u["sessionUpdate"] == "tool_call"}
    assert "edit" in kinds


def test_node_client_rejects_a_write_and_nothing_is_written(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script(model)
    result = _drive(model, tmp_path, "reject")
    assert len(result["permissions"]) == 1
    assert result["writes"] == []
    assert not (result["root"] / "notes.txt").exists()
    edits = result["wrote"]["_meta"]["cortex"]["edits"]
    assert edits[0]["applied"] is False and "rejected" in edits[0]["reason"]
