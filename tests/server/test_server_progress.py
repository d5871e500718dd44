"""Work-done progress through the real server: messages read as words (the step, the tool with short
arguments, "Answering…"), never byte counts; the run never waits for the client's reply to
``window/workDoneProgress/create``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from lsprotocol import types

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import CortexClient, ask, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call
from tests.waiting import later_run, script_later_run, until


def _messages(client: CortexClient) -> list[str]:
    out = []
    for reports in client.progress_reports.values():
        for value in reports:
            message = getattr(value, "message", None)
            if message:
                out.append(message)
    return out


def _script_read_then_answer(model: ScriptedModelServer) -> None:
    plan = {"kind": "tools", "steps": ["Read data.csv with read_file", "Answer with the mean"],
            "tools": ["read_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="The mean of the numbers in data.csv is 2, from three rows.", token_delay=0.01),
             contains="[read_file result]", times=None)
    model.on(Reply(tool_calls=[call("read_file", path="data.csv")]), contains=ROLE_EXECUTOR, times=None)


async def test_progress_messages_are_words_not_byte_counts(model: ScriptedModelServer, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "data.csv").write_text("x\n1\n2\n3\n")
    _script_read_then_answer(model)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        client.progress_reports.setdefault("t-1", [])
        result = await execute(client, "cortex.ask", {"message": "What is the mean of data.csv?"}, token="t-1")
        messages = _messages(client)
    assert result["stop_reason"] == "answered"
    assert not any("chars" in m for m in messages), messages
    assert "read_file data.csv" in messages, "the tool with its short arguments"
    assert "read_file ✔" in messages
    assert any(m.startswith("Step 1: Read data.csv") for m in messages)
    assert messages.count("Answering…") == 1, "one 'Answering…', not one per streamed chunk"


async def test_direct_answer_has_no_plan_noise(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="Tokyo.", token_delay=0.01), contains="capital of Japan", times=None)
    async with lsp_session(model, tmp_path) as client:
        client.progress_reports.setdefault("t-2", [])
        await execute(client, "cortex.ask", {"message": "What is the capital of Japan?"}, token="t-2")
        messages = _messages(client)
    assert not any(m.startswith("Plan") for m in messages), messages
    assert "Answering…" in messages


def _hold_create(client: CortexClient, release: asyncio.Event, created: list[str]) -> None:
    """The client answers ``workDoneProgress/create`` only when ``release`` is set."""

    async def on_create(params: types.WorkDoneProgressCreateParams) -> None:
        created.append(str(params.token))
        client.progress_reports.setdefault(params.token, [])
        await release.wait()

    client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = on_create


async def test_run_does_not_wait_for_the_create_reply(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="Tokyo is the capital."), contains="capital of Japan", times=None)
    script_later_run(model)
    release = asyncio.Event()
    created: list[str] = []
    async with lsp_session(model, tmp_path) as client:
        _hold_create(client, release, created)
        # no workDoneToken: the server asks the client to create one, and the client holds its reply
        result = await asyncio.wait_for(ask(client, "What is the capital of Japan?"), timeout=60)
        assert not release.is_set()
        assert len(created) == 1, "the create request was sent"
        assert client.progress_reports[created[0]] == [], "nothing is reported on a token not yet made"
        release.set()
        # the late reply: the server begins and closes the token it asked for (waiting for the end, not
        # for the first report: begin alone would be snapshotted if the end came a moment later)
        await until(lambda: any(isinstance(v, types.WorkDoneProgressEnd) for v in client.progress_reports[created[0]]),
                    what="the late token's end")
        # a later run streams at a scripted pace (10 tokens, 0.05 s apart): whatever a leftover of the first
        # run (a flush timer) would send on the late token has arrived by its answer
        follow_up = await later_run(client)
        late = list(client.progress_reports[created[0]])
    assert result["stop_reason"] == "answered" and result["answer"] == "Tokyo is the capital."
    assert [type(v) for v in late] == [types.WorkDoneProgressBegin, types.WorkDoneProgressEnd]
    assert follow_up["stop_reason"] == "answered"


async def test_progress_begins_when_the_create_reply_arrives(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="word " * 60, token_delay=0.05), contains="long", times=None)
    release = asyncio.Event()
    created: list[str] = []
    async with lsp_session(model, tmp_path) as client:
        _hold_create(client, release, created)
        task = asyncio.create_task(ask(client, "a long answer please"))
        # the run streams before the client has answered create
        await until(lambda: any(e["type"] == "token" for e in client.rec.all_events), what="a streamed token")
        assert client.progress_reports[created[0]] == []
        release.set()
        result = await asyncio.wait_for(task, timeout=60)
        reports = list(client.progress_reports[created[0]])
    assert result["stop_reason"] == "answered"
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert reports[0].message == "Answering…", "begin shows the latest held message"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
