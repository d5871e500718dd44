"""Cancellation mid-stream: window/workDoneProgress/cancel and $/cancelRequest both stop the run,
the request still answers with ``stop_reason: cancelled``, and the server keeps serving."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsprotocol import types

from tests.lsp_harness import _plain, ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer

SLOW = Reply(content="word " * 400, token_delay=0.05)  # ~20 s if nobody stops it


async def _first_token(client, run_hint: str | None = None) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if any(e["type"] == "token" for e in client.rec.all_events):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no token streamed")


async def test_progress_cancel_stops_the_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(SLOW, contains="long story", times=None)
    model.on(Reply(content="short"), contains="quick one", times=None)
    async with lsp_session(model, tmp_path) as client:
        task = asyncio.create_task(ask(client, "tell me a long story"))
        await _first_token(client)
        (token,) = list(client.progress_reports)
        started = time.monotonic()
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(task, timeout=15)
        stopped_after = time.monotonic() - started
        follow_up = await ask(client, "quick one")
        reports = client.progress_reports[token]
    assert result["stop_reason"] == "cancelled"
    assert len(result["answer"].split()) < 400, "the answer stopped mid-stream"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert follow_up["answer"] == "short"
    print(f"progress cancel stopped the run in {stopped_after * 1000:.0f} ms")


async def test_cancel_request_stops_the_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(SLOW, times=None)
    async with lsp_session(model, tmp_path) as client:
        msg_id = "ask-to-cancel"
        future = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": "go on forever"}]),
            msg_id=msg_id,
        ))
        await _first_token(client)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        result = _plain(await asyncio.wait_for(future, timeout=15))
        events = list(client.rec.all_events)
    assert result["stop_reason"] == "cancelled"
    assert len(result["answer"].split()) < 400
    assert events[-1]["type"] == "done" and events[-1]["data"]["stop_reason"] == "cancelled"
