"""The real ``cortex-lsp acp`` over stdio, driven by the official SDK's client: initialize, a streamed
answer, a tool plan shown as plan entries and tool calls, and a past session reopened."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk, AvailableCommandsUpdate, UserMessageChunk

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.acp.acp_harness import WAIT, acp_session
from tests.scripted_model import Reply, ScriptedModelServer, call

PAST_QUESTION = "What is a good favourite colour?"
PAST_ANSWER = "Blue is my answer."


def script_read_plan(model: ScriptedModelServer) -> dict[str, Any]:
    """A tools plan of two steps whose executor reads notes.md with read_file; returns the plan."""
    plan = {"kind": "tools", "steps": ["Read notes.md with read_file", "Answer from it"], "tools": ["read_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="The notes say: buy milk."), contains="[read_file result]", times=None)
    model.on(Reply(tool_calls=[call("read_file", path="notes.md")]), contains=ROLE_EXECUTOR, times=None)
    return plan


def script_past_session(model: ScriptedModelServer) -> None:
    """The answer to :data:`PAST_QUESTION` (a turn to reopen later)."""
    model.on(Reply(content=PAST_ANSWER), contains="favourite colour", times=None)


async def test_initialize_new_session_and_a_streamed_answer(model: ScriptedModelServer, tmp_path: Path) -> None:
    answer = "Paris is the capital of France, and it has been for a very long time indeed."
    model.on(Reply(content=answer), contains="capital of France", times=None)
    async with acp_session(model, tmp_path) as run:
        caps = run.init.agent_capabilities
        assert run.init.protocol_version == PROTOCOL_VERSION
        assert caps is not None and caps.load_session is True
        assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context is True
        assert caps.prompt_capabilities.image is False
        assert caps.session_capabilities is not None and caps.session_capabilities.list is not None

        session = await asyncio.wait_for(run.conn.new_session(cwd=str(run.root), mcp_servers=[]), WAIT)
        await run.client.wait_for(lambda: run.client.of(AvailableCommandsUpdate))
        since = run.client.mark()
        response = await asyncio.wait_for(run.conn.prompt(session_id=session.session_id,
                                                          prompt=[text_block("What is the capital of France?")]),
                                          WAIT)
        assert response.stop_reason == "end_turn"
        assert run.client.answer_text(since).strip() == answer
        names = {c.name for c in run.client.of(AvailableCommandsUpdate)[0].available_commands}
        assert names == {"explain", "run", "memory", "forget", "doctor", "new"}


async def test_a_tool_plan_is_shown_as_plan_entries_and_tool_calls(model: ScriptedModelServer,
                                                                   tmp_path: Path) -> None:
    plan = script_read_plan(model)
    async with acp_session(model, tmp_path, plans=False) as run:
        notes = run.root / "notes.md"
        notes.write_text("saved on disk: buy bread\n")
        run.client.buffers[str(notes)] = "unsaved in the editor: buy milk\n"
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        response = await asyncio.wait_for(
            run.conn.prompt(session_id=session.session_id, prompt=[text_block("What do my notes say?")]), WAIT)
        assert response.stop_reason == "end_turn"
        entries = run.client.plans()[0].entries
        assert [e.content for e in entries] == plan["steps"]
        assert all(e.status == "completed" for e in run.client.plans()[-1].entries)
        started = run.client.tool_calls()
        assert [(s.kind, s.status) for s in started] == [("read", "in_progress")]
        assert "notes.md" in started[0].title
        done = [u for u in run.client.tool_updates() if u.tool_call_id == started[0].tool_call_id]
        assert done and done[-1].status == "completed"
        # the read went through the client (fs/read_text_file): the model saw the unsaved buffer
        assert str(notes) in run.client.reads
        executor_saw = json.dumps(model.chat_requests)
        assert "buy milk" in executor_saw and "buy bread" not in executor_saw


async def test_list_and_load_replay_a_past_session(model: ScriptedModelServer, tmp_path: Path) -> None:
    script_past_session(model)
    async with acp_session(model, tmp_path) as run:
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        await asyncio.wait_for(run.conn.prompt(session_id=session.session_id,
                                               prompt=[text_block(PAST_QUESTION)]), WAIT)
        past = session.session_id
    async with acp_session(model, tmp_path) as run:  # a new process: the session comes from memory
        listed = await run.conn.list_sessions(cwd=str(run.root))
        assert past in [s.session_id for s in listed.sessions]
        await asyncio.wait_for(run.conn.load_session(cwd=str(run.root), session_id=past, mcp_servers=[]), WAIT)
        replay = [u for _, u in run.client.updates if isinstance(u, UserMessageChunk | AgentMessageChunk)]
        assert isinstance(replay[0], UserMessageChunk) and "favourite colour" in replay[0].content.text
        assert isinstance(replay[1], AgentMessageChunk) and PAST_ANSWER in replay[1].content.text
        # the reopened session goes on with its history as context
        model.on(Reply(content="Still blue."), contains="Still?", times=None)
        await asyncio.wait_for(run.conn.prompt(session_id=past, prompt=[text_block("Still?")]), WAIT)
        assert "favourite colour" in json.dumps(model.chat_requests[-1])


@pytest.fixture(scope="module")
def route_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The classifier's route weights, fitted once here (a cold agent would fit them during the ask)."""
    from cortex_lsp.agent.meaning import packaged_classifier

    cache = tmp_path_factory.mktemp("cache")
    classifier = packaged_classifier(cache / "cortex-lsp")
    if classifier is None:
        pytest.skip("the packaged sentence embedder is not installed")
    classifier.prepare()
    return cache


async def test_a_small_model_is_routed_by_meaning_as_on_the_language_server(
        model: ScriptedModelServer, tmp_path: Path, route_cache: Path) -> None:
    model.default = Reply(content="Use the restore button.")
    env = {"CORTEX_MODEL_PROFILE": "small", "XDG_CACHE_HOME": str(route_cache)}
    async with acp_session(model, tmp_path, env=env) as run:
        (run.root / "docs").mkdir()
        (run.root / "docs" / "operations.md").write_text(
            "# Operations\n\n## Restoring a backup\n\nStop the server, then run `restore.sh 2024-05-01`.\n")
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        since = run.client.mark()
        response = await asyncio.wait_for(
            run.conn.prompt(session_id=session.session_id, prompt=[text_block("How do I restore a backup?")]), WAIT)
        assert response.stop_reason == "end_turn"
        assert ["doc_search" in s.title for s in run.client.tool_calls()] == [True]
        assert "restore.sh 2024-05-01" in run.client.answer_text(since)
