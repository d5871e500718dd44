"""Writes are honest through the real server: the model's answer is never rewritten; after a run that
tried writes, the ledger of facts made by code follows it ("Written: … · Declined: … · Refused: …"),
and an answer claiming a write that never happened comes back unchanged with no ledger (code says
nothing it does not know); a slow review is not cut off by the tool time-out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from lsprotocol import types

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import CortexClient, _apply_to_disk, ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call

BOAST = "I computed the statistics and saved a summary to summary.md. The mean is 3."


def _script_write_then_boast(model: ScriptedModelServer, path: str = "summary.md") -> None:
    plan = {"kind": "tools", "steps": [f"Save the summary to {path} with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content=BOAST), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path=path, content="# Summary\nmean 3\n")]),
             contains=ROLE_EXECUTOR, times=None)


def _slow_apply(client: CortexClient, seconds: float) -> None:
    """Replace the harness's applyEdit handler by one that 'reviews' for ``seconds`` and then accepts."""

    async def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.rec.edits.append(params)
        await asyncio.sleep(seconds)
        _apply_to_disk(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = on_apply


async def test_declined_write_is_named_after_the_answer(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script_write_then_boast(model)
    async with lsp_session(model, tmp_path, direct_plans=False, apply_mode="decline") as client:
        result = await ask(client, "Compute the stats of data.csv and save a summary to summary.md")
    assert not (tmp_path / "ws" / "summary.md").exists()
    assert [e["applied"] for e in result["edits"]] == [False]
    assert result["answer"] == f"{BOAST}\n\nDeclined: summary.md"  # the words stay; the facts follow
    assert "Declined: summary.md" in result["notes"]
    assert "summary.md was declined" in result["edits"][0]["reason"]


async def test_refused_write_is_listed_after_the_answer(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script_write_then_boast(model, "run.sh")
    model.on(Reply(content="Done: I wrote run.sh for you."), contains="[write_file result]", times=None, first=True)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        result = await ask(client, "Save a script to run.sh")
        assert client.rec.edits == []
    assert not (tmp_path / "ws" / "run.sh").exists()
    assert result["answer"].startswith("Done: I wrote run.sh for you.\n\nRefused: run.sh (")


async def test_claim_without_any_write_is_not_rewritten(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="Sure. I saved the notes to notes.md for you."), contains="notes", times=None)
    async with lsp_session(model, tmp_path) as client:
        result = await ask(client, "What should go in my notes?")
        assert client.rec.edits == []
    assert result["edits"] == []
    assert result["answer"] == "Sure. I saved the notes to notes.md for you."  # no write tried: no ledger


async def test_written_file_claim_is_left_alone(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script_write_then_boast(model)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        result = await ask(client, "Compute the stats of data.csv and save a summary to summary.md")
    assert (tmp_path / "ws" / "summary.md").read_text() == "# Summary\nmean 3\n"
    assert result["answer"] == f"{BOAST}\n\nWritten: summary.md"
    assert [e["applied"] for e in result["edits"]] == [True]


async def test_slow_review_is_not_cut_off_by_the_tool_time_out(model: ScriptedModelServer, tmp_path: Path) -> None:
    _script_write_then_boast(model)
    async with lsp_session(model, tmp_path, direct_plans=False,
                           init_options={"cortex": {"tool_timeout_seconds": 1}}) as client:
        _slow_apply(client, 3.0)
        result = await ask(client, "Compute the stats of data.csv and save a summary to summary.md")
        assert len(client.rec.edits) == 1
    assert [e["applied"] for e in result["edits"]] == [True]
    assert (tmp_path / "ws" / "summary.md").read_text() == "# Summary\nmean 3\n"
    assert result["answer"] == f"{BOAST}\n\nWritten: summary.md"
    assert result["stop_reason"] == "answered"


async def test_review_time_does_not_count_against_the_run_budget(model: ScriptedModelServer,
                                                                 tmp_path: Path) -> None:
    # The review takes longer than the whole run budget: before the user clock, the run ended as
    # time_budget right after the write and the scripted answer never came.
    _script_write_then_boast(model)
    async with lsp_session(model, tmp_path, direct_plans=False,
                           init_options={"cortex": {"max_run_seconds": 4}}) as client:
        _slow_apply(client, 5.0)
        result = await ask(client, "Compute the stats of data.csv and save a summary to summary.md")
        assert len(client.rec.edits) == 1
    assert [e["applied"] for e in result["edits"]] == [True]
    assert result["stop_reason"] == "answered"
    assert result["answer"] == f"{BOAST}\n\nWritten: summary.md"


async def test_a_file_is_ready_claim_after_a_declined_write_gets_the_ledger(model: ScriptedModelServer,
                                                                         tmp_path: Path) -> None:
    """The write is declined; the model then claims, naming no file and no verb of saving, that it exists."""
    _script_write_then_boast(model, "haiku.md")
    model.on(Reply(content="Your file is ready. Leaves fall slowly."), contains="[write_file result]",
             times=None, first=True)
    async with lsp_session(model, tmp_path, direct_plans=False, apply_mode="decline") as client:
        result = await ask(client, "Write a haiku about autumn and save it to haiku.md")
        assert len(client.rec.edits) == 1
    assert not (tmp_path / "ws" / "haiku.md").exists()
    assert [e["applied"] for e in result["edits"]] == [False]
    assert result["answer"] == "Your file is ready. Leaves fall slowly.\n\nDeclined: haiku.md"


async def test_a_ready_or_broken_name_claim_with_no_write_is_not_rewritten(model: ScriptedModelServer,
                                                                       tmp_path: Path) -> None:
    """No write at all; the model says the file is ready, in the workspace, and saved as "haiku. md"."""
    boast = "Here is your haiku.\n\nLeaves fall slowly\n\nYour file is ready. I saved it as haiku. md"
    model.on(Reply(content=boast), contains="haiku", times=None)
    async with lsp_session(model, tmp_path) as client:
        result = await ask(client, "Write a haiku about autumn.")
        assert client.rec.edits == []
    assert not (tmp_path / "ws" / "haiku.md").exists()
    assert result["edits"] == []
    assert result["answer"] == boast  # never rewritten; no write was tried, so no ledger


async def test_a_file_already_in_the_workspace_may_be_called_ready(model: ScriptedModelServer,
                                                                  tmp_path: Path) -> None:
    """No write; the answer points at a file that was there before the run: nothing is corrected."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("# Notes\n", encoding="utf-8")
    answer = "Leaves fall slowly. Your notes.md is ready in your workspace, as before."
    model.on(Reply(content=answer), contains="haiku", times=None)
    async with lsp_session(model, tmp_path) as client:
        result = await ask(client, "Write a haiku about autumn.")
        assert client.rec.edits == []
    assert result["answer"] == answer
    assert (ws / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    assert "Written: nothing." not in result["notes"]
