"""The streaming contract through the real server: an answer's text reaches the client complete, in
order and coalesced (one ``cortex/event`` token note per tick, not per token; "Answering…" reported
once), and a cancel mid-stream stops the text."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.lsp_harness import ask, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer
from tests.waiting import later_run, script_later_run


def _words(n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def _token_text(events: list[dict], run_id: str) -> list[str]:  # type: ignore[type-arg]
    return [e["data"]["value"] for e in events if e["run_id"] == run_id and e["type"] == "token"]


async def test_a_long_answer_arrives_complete_in_order_and_coalesced(model: ScriptedModelServer,
                                                                       tmp_path: Path) -> None:
    text = _words(5000)
    model.on(Reply(content=text), contains="stream it", times=None)
    async with lsp_session(model, tmp_path) as client:
        client.progress_reports.setdefault("t-s", [])
        result = await execute(client, "cortex.ask", {"message": "stream it"}, token="t-s")
        pieces = _token_text(client.rec.all_events, result["run_id"])
        reports = [getattr(v, "message", None) for v in client.progress_reports["t-s"]]
        types_seen = [e["type"] for e in client.rec.events[result["run_id"]]]
    assert result["stop_reason"] == "answered" and result["answer"] == text
    assert "".join(pieces) == text, "every token, in order, nothing doubled"
    assert len(pieces) < 5000 / 10, f"coalesced: {len(pieces)} notes for 5,000 tokens"
    assert reports.count("Answering…") == 1, "one progress report for the answer, not one per note"
    assert types_seen[-1] == "done" and "token" not in types_seen[types_seen.index("done"):]


async def test_two_answers_in_a_row_do_not_mix(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content=_words(800, "a")), contains="first", times=None)
    model.on(Reply(content=_words(800, "b")), contains="second", times=None)
    async with lsp_session(model, tmp_path) as client:
        first = await ask(client, "first")
        second = await ask(client, "second")
        events = list(client.rec.all_events)
    assert "".join(_token_text(events, first["run_id"])) == _words(800, "a")
    assert "".join(_token_text(events, second["run_id"])) == _words(800, "b")


async def test_cancel_mid_stream_stops_the_text(model: ScriptedModelServer, tmp_path: Path) -> None:
    full = _words(400)
    model.on(Reply(content=full, token_delay=0.05), contains="slow story", times=None)  # ~20 s unstopped
    script_later_run(model, token_delay=0.05)
    async with lsp_session(model, tmp_path) as client:
        client.progress_reports.setdefault("t-c", [])
        task = asyncio.create_task(execute(client, "cortex.ask", {"message": "slow story"}, token="t-c"))
        for _ in range(600):
            if any(e["type"] == "token" for e in client.rec.all_events):
                break
            await asyncio.sleep(0.05)
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token="t-c"))
        result = await asyncio.wait_for(task, timeout=15)
        received = "".join(_token_text(client.rec.all_events, result["run_id"]))
        # nothing more arrives after the run answered: a later run streams 10 tokens at the same pace, so a
        # stream of the first still read would have sent more by its answer
        await later_run(client)
        later = "".join(_token_text(client.rec.all_events, result["run_id"]))
    assert result["stop_reason"] == "cancelled"
    assert received and full.startswith(received) and len(received) < len(full), "a prefix, in order"
    assert later == received
