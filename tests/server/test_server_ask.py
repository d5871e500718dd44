"""cortex.ask through the real server: streaming progress and events, result object, concurrency,
``wait: false``, model errors, bad arguments."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp_harness import ask, capabilities, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer
from tests.waiting import until

RESULT_FIELDS = {"session_id", "answer", "plan", "tool_calls", "edits", "stop_reason", "elapsed_ms"}


async def test_ask_streams_progress_events_and_returns_the_result(model: ScriptedModelServer, tmp_path: Path) -> None:
    answer = "The capital of Japan is Tokyo, a city of about 37 million people."
    model.on(Reply(content=answer, token_delay=0.01), contains="capital of Japan", times=None)
    async with lsp_session(model, tmp_path) as client:
        result = await ask(client, "What is the capital of Japan?")
        events = list(client.rec.all_events)
        progress = dict(client.progress_reports)
    assert RESULT_FIELDS <= set(result)
    assert result["stop_reason"] == "answered"
    assert result["answer"] == answer
    assert result["plan"]["kind"] == "direct"
    # $/progress: begin (cancellable) … reports … end, on one server-created token
    assert len(progress) == 1
    (reports,) = progress.values()
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert any(isinstance(r, types.WorkDoneProgressReport) for r in reports[1:-1])
    # cortex/event: plan, step, tokens that add up to the answer, done with the result
    types_seen = [e["type"] for e in events]
    assert types_seen[0] == "plan" and types_seen[-1] == "done"
    assert "".join(e["data"]["value"] for e in events if e["type"] == "token") == answer
    tokens = [e for e in events if e["type"] == "token"]
    assert len(tokens) < len(answer.split())  # coalesced, not one message per model token
    assert events[-1]["data"]["answer"] == answer
    assert {e["run_id"] for e in events} == {result["run_id"]}


async def test_client_token_is_used_and_history_carries_over(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.script(Reply(content="Noted, Ada."), Reply(content="Your name is Ada."))
    async with lsp_session(model, tmp_path) as client:
        first = await execute(client, "cortex.ask", {"message": "Hi, I am Ada."}, token="client-token-1")
        second = await ask(client, "What is my name?", session_id=first["session_id"])
        progress = dict(client.progress_reports)
    assert "client-token-1" in progress
    assert isinstance(progress["client-token-1"][0], types.WorkDoneProgressBegin)
    assert isinstance(progress["client-token-1"][-1], types.WorkDoneProgressEnd)
    assert second["session_id"] == first["session_id"]
    sent = model.chat_requests[-1]["messages"]
    assert any(m["role"] == "user" and "I am Ada" in m["content"] for m in sent)
    assert any(m["role"] == "assistant" and "Noted, Ada." in m["content"] for m in sent)


async def test_two_runs_at_once_and_code_actions_while_streaming(model: ScriptedModelServer, tmp_path: Path) -> None:
    words = 150  # ~3 s of streaming each: room for the code action, which is asked once both stream
    model.on(Reply(content="alpha " * words, token_delay=0.02), contains="first question", times=None)
    model.on(Reply(content="beta " * words, token_delay=0.02), contains="second question", times=None)
    doc = tmp_path / "ws" / "mod.py"
    async with lsp_session(model, tmp_path) as client:
        doc.write_text("def f(x):\n    return x * 2\n")
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=doc.as_uri(), language_id="python", version=1, text=doc.read_text())))
        first = asyncio.create_task(ask(client, "first question"))
        second = asyncio.create_task(ask(client, "second question"))

        def streaming() -> int:
            return len({e["run_id"] for e in client.rec.all_events if e["type"] == "token"})

        await until(lambda: streaming() >= 2, what="both runs to stream a token")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.as_uri()),
            range=types.Range(start=types.Position(0, 0), end=types.Position(1, 16)),  # the whole function
            context=types.CodeActionContext(diagnostics=[])))
        before_actions = list(client.rec.all_events)  # what had arrived when the code action was answered
        a, b = await asyncio.gather(first, second)
        events = dict(client.rec.events)
    assert not [e for e in before_actions if e["type"] == "done"], \
        "the code action was answered while both runs streamed (before either run ended)"
    assert actions is not None
    assert {x.title for x in actions} >= {"Cortex: Explain this", "Cortex: Run this"}
    assert a["answer"].split() == ["alpha"] * words
    assert b["answer"].split() == ["beta"] * words
    for result, word in ((a, "alpha"), (b, "beta")):
        text = "".join(e["data"]["value"] for e in events[result["run_id"]] if e["type"] == "token")
        assert set(text.split()) == {word}


async def test_wait_false_returns_run_id_then_done_event(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="later answer", token_delay=0.05), times=None)
    async with lsp_session(model, tmp_path) as client:
        started = await ask(client, "anything", wait=False)
        assert set(started) >= {"run_id"}
        done = await until(lambda: [e for e in client.rec.events.get(started["run_id"], []) if e["type"] == "done"],
                           what="the run's done event")
    assert done and done[0]["data"]["answer"] == "later answer"
    assert done[0]["data"]["stop_reason"] == "answered"


async def test_model_down_gives_model_unavailable_and_server_stays_up(tmp_path: Path) -> None:
    async with lsp_session(None, tmp_path) as client:
        result = await ask(client, "hello?")
        again = await execute(client, "cortex.session.new")
    assert result["stop_reason"] == "model_unavailable"
    assert "ollama serve" in result["answer"]
    assert again["session_id"]


async def test_model_missing_gives_pull_advice(tmp_path: Path) -> None:
    with ScriptedModelServer(models=("llama3:latest",)) as model:
        async with lsp_session(model, tmp_path) as client:
            result = await ask(client, "hello?")
    assert result["stop_reason"] == "model_unavailable"
    assert "ollama pull qwen2.5:7b" in result["answer"]


async def test_client_without_progress_support_gets_events_only(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="fine"), times=None)
    async with lsp_session(model, tmp_path, caps=capabilities("neovim@v0.7.0", progress=False)) as client:
        result = await ask(client, "hi")
        progress = dict(client.progress_reports)
        events = list(client.rec.all_events)
    assert result["answer"] == "fine"
    assert progress == {}
    assert [e["type"] for e in events][-1] == "done"


BAD_ARGUMENTS: list[tuple[str, list[Any], str]] = [
    ("cortex.ask", [{}], "message"),
    ("cortex.ask", [{"message": ""}], "message"),
    ("cortex.ask", [{"message": "x" * 8193}], "message"),
    ("cortex.ask", [{"message": "hi", "orchestration": "swarm"}], "orchestration"),
    ("cortex.ask", [{"message": "hi", "wait": "soon"}], "wait"),
    ("cortex.ask", [{"message": "hi", "session_id": "../../etc"}], "session_id"),
    ("cortex.ask", [{"message": "hi", "surprise": 1}], "surprise"),
    ("cortex.ask", [{"message": "hi", "uri": "untitled:Untitled-1"}], "uri"),
    ("cortex.ask", [{"message": "hi"}, {"message": "again"}], "one argument"),
    ("cortex.ask", ["just a string"], "object"),
    ("cortex.explain", [{}], "uri"),
    ("cortex.explain", [{"uri": "file:///x.py", "range": {"start": {"line": -1, "character": 0},
                                                         "end": {"line": 0, "character": 0}}}], "range"),
    ("cortex.run", [{"uri": 3}], "uri"),
    ("cortex.memory.search", [{"query": "x", "types": ["dreams"]}], "types"),
    ("cortex.memory.search", [{"query": "x", "limit": 0}], "limit"),
    ("cortex.memory.forget", [{}], "id"),
    ("cortex.memory.reset", [{}], "confirm"),
    ("cortex.memory.reset", [{"confirm": False}], "confirm"),
]


async def test_bad_arguments_get_invalid_params_naming_the_field(model: ScriptedModelServer, tmp_path: Path) -> None:
    async with lsp_session(model, tmp_path) as client:
        for command, arguments, field in BAD_ARGUMENTS:
            with pytest.raises(JsonRpcInvalidParams) as info:
                await execute(client, command, raw_arguments=arguments)
            assert field in str(info.value), (command, arguments, str(info.value))
        assert model.chat_requests == [], "nothing ran"
        assert client.rec.all_events == []
