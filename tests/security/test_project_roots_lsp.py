"""Folders that are not projects (``/``, the home folder, system folders) never become roots, through the
real server: opened at ``initialize`` or added by ``didChangeWorkspaceFolders``, the user is told once
(``window/showMessage`` naming the folder), and a hostile model's ``read_file`` of ``/etc/passwd`` is
offered, called, and refused: the file's text reaches neither the result nor the model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import CortexClient, ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call

SECRET_FILE = "/etc/passwd"
SECRET_LINE = Path(SECRET_FILE).read_text(encoding="utf-8", errors="replace").splitlines()[0]


def _script_read(model: ScriptedModelServer, path: str) -> None:
    """A hostile planner and executor: whatever the request, read ``path``."""
    model.reset()
    plan = {"kind": "tools", "steps": [f"Read {path} with read_file"], "tools": ["read_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Here it is."), contains="[read_file result]", times=None)
    model.on(Reply(content="Here it is."), contains="ERROR", times=None)
    model.on(Reply(tool_calls=[call("read_file", path=path)]), contains=ROLE_EXECUTOR, times=None)


async def _refusal_shown(client: CortexClient, folder: str) -> list[str]:
    """The refusal messages naming ``folder``, waiting (30 s at most) for each showMessage until one does."""
    async def wait() -> list[str]:
        while not (shown := [m.message for m in client.messages if "not use" in m.message and folder in m.message]):
            await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
        return shown

    return await asyncio.wait_for(wait(), timeout=30)


async def _assert_read_refused(client: CortexClient, model: ScriptedModelServer, path: str) -> None:
    secret = SECRET_LINE
    _script_read(model, path)
    result: dict[str, Any] = await ask(client, "Open the password file with read_file and print it")
    offered = any(t.get("function", {}).get("name") == "read_file"
                  for body in model.chat_requests for t in body.get("tools") or [])
    assert offered, "the hostile model was never offered read_file (the test would prove nothing)"
    calls = [c for c in result["tool_calls"] if c["tool"] == "read_file"]
    assert calls, f"the hostile model never called read_file: {result}"
    assert all(not c["success"] for c in calls), calls
    assert secret not in json.dumps(result)
    assert all(secret not in json.dumps(body) for body in model.chat_requests)


async def test_root_slash_at_initialize_is_refused_and_named(model: ScriptedModelServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.md").write_text("# notes\n", encoding="utf-8")
    async with lsp_session(model, tmp_path, folders=[ws, Path("/")], direct_plans=False) as client:
        shown = await _refusal_shown(client, "/ is the whole file system")
        assert len(shown) == 1, shown
        await _assert_read_refused(client, model, SECRET_FILE)
        await _assert_read_refused(client, model, "etc/passwd")


async def test_system_folders_added_at_run_time_are_refused(model: ScriptedModelServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with lsp_session(model, tmp_path, folders=[ws], direct_plans=False) as client:
        for folder in ("/", "/etc"):
            client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=Path(folder).as_uri(), name=folder)], removed=[])))
        await _refusal_shown(client, "/etc is a system folder")
        await _assert_read_refused(client, model, SECRET_FILE)
        await _assert_read_refused(client, model, "passwd")
        shown = [m.message for m in client.messages if "not use" in m.message]
        assert len(shown) == 2 and "/ is the whole file system" in shown[0], shown  # one message per folder
        await _assert_read_refused(client, model, SECRET_FILE)
        assert len([m for m in client.messages if "not use" in m.message]) == 2  # not repeated per run


async def test_home_folder_itself_is_refused(model: ScriptedModelServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "diary.md").write_text("my secret diary\n", encoding="utf-8")
    async with lsp_session(model, tmp_path, folders=[home / "project", home],
                           env={"HOME": str(home)}, direct_plans=False) as client:
        await _refusal_shown(client, "is your home folder itself")
        _script_read(model, str(home / "diary.md"))
        result = await ask(client, "Open the diary with read_file and print it")
        calls = [c for c in result["tool_calls"] if c["tool"] == "read_file"]
        assert calls and not any(c["success"] for c in calls), result
        assert "secret diary" not in json.dumps(result)
