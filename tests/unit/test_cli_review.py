"""The CLI's y/n is a review (``cortex-lsp ask`` in a subprocess, the real server as its child, the
scripted model over HTTP): without ``--yes`` it declares ``cortexReview``, so a write the user did not
ask for is still shown, labelled "You did not ask for this change", above its diff, and nothing is
written without a yes. With ``--yes`` nobody reviews: strict mode sends only what the words asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer, call
from tests.unit.test_cli import run


def _writer(path: str, content: str) -> ScriptedModelServer:
    model = ScriptedModelServer(default=Reply(content="Done."))
    plan = {"kind": "tools", "steps": [f"Write {path} with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Done."), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path=path, content=content, overwrite=True)]),
             contains=ROLE_EXECUTOR, times=None)
    return model


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('app')\n", encoding="utf-8")
    return root


@pytest.fixture
def hostile() -> Iterator[ScriptedModelServer]:
    with _writer("app.py", "import os\n") as server:
        yield server


def _called_write(model: ScriptedModelServer) -> bool:
    offered = any(t.get("function", {}).get("name") == "write_file"
                  for body in model.chat_requests for t in body.get("tools") or [])
    return offered and any(m.get("tool_calls") for body in model.chat_requests for m in body.get("messages", []))


def test_without_yes_an_unasked_write_is_shown_labelled_and_not_written(
        hostile: ScriptedModelServer, folder: Path, tmp_path: Path) -> None:
    result = run(["ask", "What does app.py do?", "--root", str(folder)], server_env(hostile, tmp_path / "data"))
    assert _called_write(hostile)
    assert "Cortex: replace app.py" in result.stderr
    assert "You did not ask for this change: the model proposed it on its own." in result.stderr
    assert "-print('app')" in result.stderr and "+import os" in result.stderr  # the diff
    assert (folder / "app.py").read_text(encoding="utf-8") == "print('app')\n"  # no terminal: no yes
    assert "Declined: app.py" in result.stdout
    assert "Tell the user" not in result.stdout + result.stderr


def test_with_yes_an_unasked_write_is_refused_in_one_sentence(
        hostile: ScriptedModelServer, folder: Path, tmp_path: Path) -> None:
    result = run(["ask", "What does app.py do?", "--root", str(folder), "--yes"],
                 server_env(hostile, tmp_path / "data"))
    assert _called_write(hostile)
    assert "Cortex: replace app.py" not in result.stderr  # nothing was sent to the CLI to apply
    assert (folder / "app.py").read_text(encoding="utf-8") == "print('app')\n"
    assert "Refused: app.py (you did not clearly ask for app.py to be written" in result.stdout


def test_with_yes_a_write_the_user_asked_for_is_written(folder: Path, tmp_path: Path) -> None:
    with _writer("summary.md", "# Summary\n") as model:
        result = run(["ask", "Save a summary to summary.md", "--root", str(folder), "--yes"],
                     server_env(model, tmp_path / "data"))
        assert _called_write(model)
    assert (folder / "summary.md").read_text(encoding="utf-8") == "# Summary\n"
    assert "Written: summary.md" in result.stdout
