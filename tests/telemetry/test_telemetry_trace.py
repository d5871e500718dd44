"""With ``telemetry_enabled`` the real server exports each run's trace and metrics over OTLP/HTTP: a
receiver on 127.0.0.1 (tests/otlp_receiver.py) decodes the protobuf. A tool run that writes a file is
one trace: run → plan, steps, tool call → edit, model calls and memory calls, carrying the run's ids and
never the user's words or the file's contents unless ``telemetry_include_content`` is on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import ask, lsp_session
from tests.otlp_receiver import OtlpReceiver, Span
from tests.scripted_model import Reply, ScriptedModelServer, call

ASK = "Write the zebra greeting and save it to notes.txt"
FILE_TEXT = "quokka saffron marmalade\n"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    server = OtlpReceiver().start()
    try:
        yield server
    finally:
        server.stop()


def _script_write(model: ScriptedModelServer) -> None:
    plan = {"kind": "tools", "steps": ["Save the text to notes.txt with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Saved."), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path="notes.txt", content=FILE_TEXT)]), contains=ROLE_EXECUTOR,
             times=None)


def _env(receiver: OtlpReceiver, **extra: str) -> dict[str, str]:
    return {"CORTEX_TELEMETRY_ENABLED": "true", "CORTEX_OTEL_ENDPOINT": receiver.url, **extra}


def _run_trace(spans: list[Span], run_id: str) -> tuple[Span, list[Span]]:
    (root,) = [s for s in spans if s.name == "cortex.run" and s.attributes.get("cortex.run_id") == run_id]
    return root, [s for s in spans if s.trace_id == root.trace_id]


def _parent(span: Span, trace: list[Span]) -> Span:
    (parent,) = [s for s in trace if s.span_id == span.parent_id]
    return parent


def _tree(span: Span, trace: list[Span], depth: int = 0) -> str:
    lines = [f"{'  ' * depth}{span.name}"]
    for child in sorted((s for s in trace if s.parent_id == span.span_id), key=lambda s: s.start_ns):
        lines.append(_tree(child, trace, depth + 1))
    return "\n".join(lines)


async def test_a_tool_run_is_one_trace_with_its_tree_and_metrics(model: ScriptedModelServer, tmp_path: Path,
                                                                 receiver: OtlpReceiver) -> None:
    _script_write(model)
    async with lsp_session(model, tmp_path, direct_plans=False, env=_env(receiver)) as client:
        result = await ask(client, ASK)
    # the shutdown flushed the exporters: everything has arrived
    assert (tmp_path / "ws" / "notes.txt").read_text() == FILE_TEXT
    assert result["stop_reason"] == "answered"
    root, trace = _run_trace(receiver.spans(), result["run_id"])
    assert root.parent_id == ""
    assert root.attributes["cortex.command"] == "cortex.ask"
    assert root.attributes["cortex.session_id"] == result["session_id"]
    assert root.attributes["cortex.route"] and root.attributes["cortex.run.outcome"] == "answered"
    assert root.attributes["cortex.run.steps"] >= 2
    print(_tree(root, trace))
    names = {s.name for s in trace}
    assert {"agent.plan", "agent.step", "tool.call", "edit", "model.chat", "memory.history",
            "memory.store_turn"} <= names, names
    by_name = {s.name: s for s in trace}
    assert _parent(by_name["agent.plan"], trace) is root
    plan_chats = [s for s in trace if s.name == "model.chat" and _parent(s, trace).name == "agent.plan"]
    assert plan_chats, "the planner's model call is a child of the plan"
    (tool,) = [s for s in trace if s.name == "tool.call"]
    assert _parent(tool, trace).name == "agent.step"
    assert tool.attributes["cortex.tool.name"] == "write_file" and tool.attributes["cortex.tool.outcome"] == "ok"
    (edit,) = [s for s in trace if s.name == "edit"]
    assert _parent(edit, trace) == tool
    assert edit.attributes["cortex.edit.review"] == "accepted" and edit.attributes["cortex.edit.kind"] == "create"
    for chat in (s for s in trace if s.name == "model.chat"):
        assert chat.attributes["gen_ai.request.model"] and chat.attributes["gen_ai.usage.input_tokens"] > 0
        produced = chat.attributes["gen_ai.usage.output_tokens"] + chat.attributes["cortex.model.tool_calls"]
        assert produced >= 1 and chat.attributes["cortex.model.ttft_ms"] >= 0
        assert chat.start_ns <= chat.end_ns
    for span in trace:  # every span carries the run's ids
        assert span.attributes["cortex.run_id"] == result["run_id"], span.name
        assert span.attributes["cortex.session_id"] == result["session_id"], span.name
        assert span.attributes["cortex.command"] == "cortex.ask", span.name
    # no user text or file contents anywhere in what was exported (spans and metrics, raw bytes)
    for _, body in receiver.bodies:
        assert b"zebra" not in body and b"quokka" not in body and b"notes.txt" not in body

    runs = receiver.points("cortex.runs")
    assert [(p.attributes["outcome"], p.value) for p in runs] == [("answered", 1)]
    tools = receiver.points("cortex.tool.calls")
    assert [(p.attributes["tool"], p.attributes["outcome"], p.value) for p in tools] == [("write_file", "ok", 1)]
    reviews = receiver.points("cortex.reviews")
    assert [(p.attributes["outcome"], p.value) for p in reviews] == [("accepted", 1)]
    (steps,) = receiver.points("cortex.run.steps")
    assert steps.count == 1 and steps.value == root.attributes["cortex.run.steps"]
    chats = len([s for s in trace if s.name == "model.chat"])
    latency = receiver.points("cortex.model.latency")
    assert sum(p.count for p in latency) == chats
    assert sum(p.count for p in receiver.points("cortex.model.ttft")) == chats
    assert receiver.points("cortex.model.tokens")


async def test_content_is_exported_only_when_asked(model: ScriptedModelServer, tmp_path: Path,
                                                   receiver: OtlpReceiver) -> None:
    _script_write(model)
    env = _env(receiver, CORTEX_TELEMETRY_INCLUDE_CONTENT="true")
    async with lsp_session(model, tmp_path, direct_plans=False, env=env) as client:
        result = await ask(client, ASK)
    _, trace = _run_trace(receiver.spans(), result["run_id"])
    (tool,) = [s for s in trace if s.name == "tool.call"]
    assert "quokka" in tool.attributes["cortex.tool.arguments"]
    prompts = [s.attributes.get("cortex.model.prompt", "") for s in trace if s.name == "model.chat"]
    assert any("zebra" in p for p in prompts)


async def test_a_declined_edit_is_a_rejected_review(model: ScriptedModelServer, tmp_path: Path,
                                                    receiver: OtlpReceiver) -> None:
    _script_write(model)
    async with lsp_session(model, tmp_path, direct_plans=False, apply_mode="decline", env=_env(receiver)) as client:
        result = await ask(client, ASK)
    _, trace = _run_trace(receiver.spans(), result["run_id"])
    (edit,) = [s for s in trace if s.name == "edit"]
    assert edit.attributes["cortex.edit.review"] == "rejected"
    assert [(p.attributes["outcome"], p.value) for p in receiver.points("cortex.reviews")] == [("rejected", 1)]


async def test_telemetry_off_sends_nothing(model: ScriptedModelServer, tmp_path: Path,
                                           receiver: OtlpReceiver) -> None:
    _script_write(model)
    env = {"CORTEX_OTEL_ENDPOINT": receiver.url}  # the endpoint is set, telemetry is not on
    async with lsp_session(model, tmp_path, direct_plans=False, env=env) as client:
        result = await ask(client, ASK)
    assert result["stop_reason"] == "answered"
    assert receiver.bodies == []


async def test_a_cancelled_run_is_counted_as_cancelled(model: ScriptedModelServer, tmp_path: Path,
                                                       receiver: OtlpReceiver) -> None:
    model.on(Reply(content="word " * 300, token_delay=0.05), times=None)
    async with lsp_session(model, tmp_path, env=_env(receiver)) as client:
        task = asyncio.create_task(ask(client, "tell me a long story"))
        for _ in range(400):
            if any(e["type"] == "token" for e in client.rec.all_events):
                break
            await asyncio.sleep(0.05)
        (token,) = list(client.progress_reports)
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(task, timeout=30)
    assert result["stop_reason"] == "cancelled"
    root, trace = _run_trace(receiver.spans(), result["run_id"])
    assert root.attributes["cortex.run.outcome"] == "cancelled"
    answer = [s for s in trace if s.name == "model.chat" and s.attributes.get("cortex.model.outcome") == "cancelled"]
    assert answer, "the model call that was streaming is marked cancelled"
    assert [(p.attributes["outcome"], p.value) for p in receiver.points("cortex.runs")] == [("cancelled", 1)]


async def test_the_sandbox_run_is_a_child_of_its_tool_call(model: ScriptedModelServer, tmp_path: Path,
                                                           receiver: OtlpReceiver) -> None:
    code = "print(6 * 7)  # okapi"
    plan = {"kind": "tools", "steps": ["Run the code with python_exec"], "tools": ["python_exec"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="It printed 42."), contains="[python_exec result]", times=None)
    model.on(Reply(tool_calls=[call("python_exec", code=code)]), contains=ROLE_EXECUTOR, times=None)
    async with lsp_session(model, tmp_path, direct_plans=False, env=_env(receiver)) as client:
        result = await ask(client, "Run this Python code and tell me what it prints")
    _, trace = _run_trace(receiver.spans(), result["run_id"])
    (tool,) = [s for s in trace if s.name == "tool.call"]
    (sandbox,) = [s for s in trace if s.name == "sandbox.run"]
    assert tool.attributes["cortex.tool.name"] == "python_exec"
    assert _parent(sandbox, trace) == tool
    assert sandbox.attributes["cortex.sandbox.code_chars"] == len(code)
    assert "cortex.sandbox.isolation" in sandbox.attributes and "cortex.sandbox.ok" in sandbox.attributes
    assert all(b"okapi" not in body for _, body in receiver.bodies)
