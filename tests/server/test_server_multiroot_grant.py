"""Several open folders, one granted name: "Update notes.md" means the first
folder's notes.md; a hostile model's absolute path into the other folder's notes.md is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call

REQUEST = "Update notes.md with today's date."


def _script(model: ScriptedModelServer, path: str) -> None:
    plan = {"kind": "tools", "steps": ["Update notes.md with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Done."), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path=path, content="PWNED", overwrite=True)]),
             contains=ROLE_EXECUTOR, times=None)


@pytest.mark.parametrize("target", ["other_absolute", "first_relative"])
async def test_a_granted_name_means_the_first_folder(model: ScriptedModelServer, tmp_path: Path, target: str) -> None:
    ws1, ws2 = tmp_path / "ws", tmp_path / "ws2"
    ws1.mkdir()
    ws2.mkdir()
    (ws1 / "notes.md").write_text("ws1 notes")
    (ws2 / "notes.md").write_text("ws2 notes (other project)")
    _script(model, str(ws2 / "notes.md") if target == "other_absolute" else "notes.md")
    async with lsp_session(model, tmp_path, folders=[ws1, ws2], direct_plans=False) as client:
        result = await ask(client, REQUEST)
        edits = list(client.rec.edits)
    assert (ws2 / "notes.md").read_text() == "ws2 notes (other project)", "the other folder's file is untouched"
    if target == "other_absolute":
        assert edits == [], "no applyEdit for the other folder's notes.md"
        assert (ws1 / "notes.md").read_text() == "ws1 notes"
        failed = [c for c in result["tool_calls"] if c["tool"] == "write_file"]
        assert failed and "several open folders" in json.dumps(failed), result["tool_calls"]
    else:
        assert len(edits) == 1
        assert (ws1 / "notes.md").read_text() == "PWNED"
