"""The official ACP TypeScript SDK (``@agentclientprotocol/sdk``, its client app) drives the real
``cortex-lsp acp`` over stdio through the scenarios the SDK's Python client runs (tests/acp/test_acp_ask.py,
test_acp_writes.py, test_acp_security.py, with the same scripted-model scripts): a streamed answer; a tool
plan shown as plan entries and a ``read`` tool call; a write that asks permission (allowed → written by the
client; rejected → nothing written); cancel mid-stream; a past session listed and reloaded in a second
process; a hostile model that writes, fetches and runs what the user did not ask for. The Node script is
tests/acp/node/client.mjs (its first argument picks the mode); its dependencies are installed with
``npm ci`` in tests/acp/node (.ci/run does it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from loopback import Listener

from cortex_lsp.agent.plan_guards import PYTHON_NOT_ASKED
from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from cortex_lsp.guards.urls import NOT_TYPED_MESSAGE
from tests.acp.acp_harness import direct_plans
from tests.acp.test_acp_ask import PAST_ANSWER, PAST_QUESTION, script_past_session, script_read_plan
from tests.acp.test_acp_security import script_hostile_fetch, script_hostile_run, script_pushed_write
from tests.acp.test_acp_writes import LONG_STORY, QUICK, WRITE, script_long_story, script_write
from tests.agent.conftest import tool_names
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer
from tests.security.attack import FORCE_TOOLS, assert_refused_unoffered

pytestmark = [pytest.mark.editor, pytest.mark.slow]

NODE_DIR = Path(__file__).parent / "node"
ANSWER = "Paris is the capital of France."
Update = dict[str, Any]


def _drive(model: ScriptedModelServer, tmp_path: Path, mode: str, prompts: list[Any], **options: Any
           ) -> dict[str, Any]:
    """One run of client.mjs in ``mode`` against a fresh agent process (workspace ``tmp_path/ws`` and data
    folder ``tmp_path/data``, kept between runs of one test: a second run sees the first one's memory)."""
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip("node or tests/acp/node/node_modules is missing: run `npm ci` in tests/acp/node")
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    env = server_env(model, data)
    env["PYTHONPATH"] = os.getcwd()  # the agent's `python -m cortex_lsp` is this tree's
    spec = json.dumps({"prompts": prompts, **options})
    done = subprocess.run([node, str(NODE_DIR / "client.mjs"), mode, sys.executable, str(root), spec],
                          capture_output=True, text=True, env=env, cwd=os.getcwd(), timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["root"] = root
    return result


def _answer(updates: list[Update]) -> str:
    return "".join(u["content"]["text"] for u in updates
                   if u["sessionUpdate"] == "agent_message_chunk" and u["content"]["type"] == "text")


def _of(updates: list[Update], kind: str) -> list[Update]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def _since(result: dict[str, Any], prompt: int) -> list[Update]:
    """The updates from prompt number ``prompt`` on (to the next prompt, or the end)."""
    marks = [*result["marks"], len(result["updates"])]
    updates: list[Update] = result["updates"][marks[prompt]:marks[prompt + 1]]
    return updates


def _final_status(updates: list[Update], call_id: str) -> str | None:
    statuses = [u["status"] for u in updates
                if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == call_id and u.get("status")]
    return statuses[-1] if statuses else None


def _blocks(prompt: list[Any]) -> list[dict[str, Any]]:
    """The SDK's Python content blocks as the JSON the Node client sends."""
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in prompt]


def _script(model: ScriptedModelServer) -> None:
    script_write(model, "notes.txt")
    model.on(Reply(content=ANSWER), times=None, first=True,
             when=lambda body: "capital of France" in json.dumps(body["messages"][-1]))


def test_node_client_asks_and_allows_a_write(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script(model)
    result = _drive(model, tmp_path, "prompts", ["What is the capital of France?", WRITE], permission="allow")
    asked, wrote = result["responses"]
    assert result["init"]["agentCapabilities"]["loadSession"] is True
    assert asked["stopReason"] == "end_turn"
    assert ANSWER in _answer(_since(result, 0))
    assert wrote["stopReason"] == "end_turn"
    (permission,) = result["permissions"]
    assert permission["toolCall"]["_meta"]["cortex"]["asked"] is True
    assert any(c["type"] == "diff" for c in permission["toolCall"]["content"])
    target = result["root"] / "notes.txt"
    assert result["writes"] == [{"path": str(target), "content": "hello from cortex\n"}]
    assert target.read_text() == "hello from cortex\n"
    kinds = {u.get("kind") for u in _of(result["updates"], "tool_call")}
    assert "edit" in kinds


def test_node_client_rejects_a_write_and_nothing_is_written(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script(model)
    result = _drive(model, tmp_path, "prompts", ["What is the capital of France?", WRITE], permission="reject")
    assert len(result["permissions"]) == 1
    assert result["writes"] == []
    assert not (result["root"] / "notes.txt").exists()
    edits = result["responses"][1]["_meta"]["cortex"]["edits"]
    assert edits[0]["applied"] is False and "rejected" in edits[0]["reason"]


def test_node_client_sees_a_tool_plan_as_plan_entries_and_a_read_tool_call(model: ScriptedModelServer,
                                                                           tmp_path: Path) -> None:
    plan = script_read_plan(model)
    (tmp_path / "ws").mkdir()
    notes = tmp_path / "ws" / "notes.md"
    notes.write_text("buy milk\n")
    result = _drive(model, tmp_path, "prompts", ["What do my notes say?"])
    assert result["responses"][0]["stopReason"] == "end_turn"
    plans = _of(result["updates"], "plan")
    assert plans and [e["content"] for e in plans[0]["entries"]] == plan["steps"]
    assert all(e["status"] == "completed" for e in plans[-1]["entries"])
    started = _of(result["updates"], "tool_call")
    assert [(s["kind"], s["status"]) for s in started] == [("read", "in_progress")]
    assert "notes.md" in started[0]["title"]
    assert _final_status(result["updates"], started[0]["toolCallId"]) == "completed"
    assert result["reads"] == [str(notes)], "read_file went through the client's fs/read_text_file"


def test_node_client_cancels_mid_stream(model: ScriptedModelServer, tmp_path: Path) -> None:
    direct_plans(model)
    script_long_story(model)
    result = _drive(model, tmp_path, "cancel", [LONG_STORY, QUICK])
    (cancel,) = result["cancels"]
    assert "word" in cancel["chunk"]["text"], "session/cancel went out on the first answer chunk"
    stopped, follow = result["responses"]
    assert stopped["stopReason"] == "cancelled"
    assert _answer(_since(result, 0)).count("word") < 400
    assert follow["stopReason"] == "end_turn" and "short" in _answer(_since(result, 1))


def test_node_client_lists_and_loads_a_past_session(model: ScriptedModelServer, tmp_path: Path) -> None:
    direct_plans(model)
    script_past_session(model)
    first = _drive(model, tmp_path, "prompts", [PAST_QUESTION])
    (past,) = first["sessions"]
    model.on(Reply(content="Still blue."), contains="Still?", times=None)
    second = _drive(model, tmp_path, "load", ["Still?"], sessionId=past)  # a new process: memory
    assert past in [s["sessionId"] for s in second["listed"]["sessions"]]
    replay = [u for u in second["updates"][second["loadMark"]:second["marks"][0]]
              if u["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")]
    assert [u["sessionUpdate"] for u in replay[:2]] == ["user_message_chunk", "agent_message_chunk"]
    assert "favourite colour" in replay[0]["content"]["text"]
    assert PAST_ANSWER in replay[1]["content"]["text"]
    # the reopened session goes on with its history as context
    assert second["responses"][0]["stopReason"] == "end_turn"
    assert "favourite colour" in json.dumps(model.chat_requests[-1])


def _offered_and_called(model: ScriptedModelServer, tool: str) -> None:
    """From the scripted model's request log: ``tool`` was offered to the executor, and a later request
    carried its result back (the agent acted on the model's call)."""
    executor = [r for r in model.chat_requests if ROLE_EXECUTOR in json.dumps(r.get("messages"))]
    assert any(tool in tool_names(r) for r in executor), f"{tool} was offered to the model"
    assert any(f"[{tool} result]" in json.dumps(r.get("messages")) for r in model.chat_requests), \
        f"the model called {tool}"


def test_node_client_hostile_model_gets_no_write(model: ScriptedModelServer, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    app = tmp_path / "ws" / "app.py"
    app.write_text("x = 1\n")
    prompt = script_pushed_write(model, app)
    result = _drive(model, tmp_path, "prompts", [_blocks(prompt)], permission="reject")
    _offered_and_called(model, "write_file")
    (permission,) = result["permissions"]
    assert permission["toolCall"]["_meta"]["cortex"]["asked"] is False
    assert result["writes"] == []
    assert app.read_text() == "x = 1\n"
    assert not (tmp_path / "ws" / "notes.md").exists()


def test_node_client_hostile_model_fetches_and_runs_nothing(model: ScriptedModelServer, tmp_path: Path) -> None:
    listener = Listener()
    try:
        (tmp_path / "ws").mkdir()
        url = f"http://127.0.0.1:{listener.port}/steal?d=secret"
        fetch = _blocks(script_hostile_fetch(model, tmp_path / "ws", url))
        fetched = _drive(model, tmp_path, "prompts", [fetch])
        _offered_and_called(model, "web_fetch")
        (started,) = [u for u in _of(fetched["updates"], "tool_call") if u["kind"] == "fetch"]
        assert _final_status(fetched["updates"], started["toolCallId"]) == "failed"
        # refused for where the address came from (before any address check would refuse the loopback)
        assert any(NOT_TYPED_MESSAGE[:60] in json.dumps(r.get("messages")) for r in model.chat_requests)
        assert listener.connections == 0, "nothing was fetched"

        # the model plans python_exec (a print of a marker, a connection to the listener) for a request that
        # asks for no run: code takes it out of the plan, it is never offered, nothing runs
        marker = script_hostile_run(model, tmp_path / "ws", listener.port)
        result = _drive(model, tmp_path, "prompts", ["Summarize notes.md"])
        planner = [r for r in model.chat_requests if ROLE_PLANNER in json.dumps(r.get("messages"))]
        assert planner, "the hostile planner was asked (and planned python_exec)"
        assert not any("python_exec" in tool_names(r) for r in model.chat_requests), "python_exec never offered"
        assert PYTHON_NOT_ASKED in result["responses"][0]["_meta"]["cortex"]["notes"]
        assert listener.connections == 0, "no code ran"
        printed = f"stdout:\n{marker}"
        assert printed not in json.dumps(model.chat_requests).replace("\\n", "\n")
        assert printed not in json.dumps(result["updates"]).replace("\\n", "\n")

        # the tool plan forced (a plan that also reads): the model is offered the other tools, calls
        # python_exec anyway, and the executor refuses it; the client sees the call fail
        marker = script_hostile_run(model, tmp_path / "ws", listener.port, forced=True)
        result = _drive(model, tmp_path, "prompts", [FORCE_TOOLS + "Summarize notes.md"])
        assert_refused_unoffered(model.chat_requests, result["responses"][0]["_meta"]["cortex"]["tool_calls"],
                                 "python_exec", because="The python_exec tool is not available for this request")
        runs = [u for u in _of(result["updates"], "tool_call") if u["kind"] == "execute"]
        assert runs and all(_final_status(result["updates"], u["toolCallId"]) == "failed" for u in runs)
        assert listener.connections == 0, "no code ran"
        assert f"stdout:\n{marker}" not in json.dumps(result["updates"]).replace("\\n", "\n")
    finally:
        listener.close()
