"""The test run never touches the user's own data: ``HOME`` and the XDG folders point at the run's
temporary home (tests/conftest.py), for this process and for the servers it starts. A server told to use
a data folder inside the opened folder falls back to the default one, and that lands in the run's home,
not under the user's ``~/.local/share/cortex-lsp``."""

from __future__ import annotations

import os
from pathlib import Path

from cortex_lsp.config import Settings, default_data_dir
from tests import user_dirs
from tests.lsp_harness import ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer


def test_the_default_folders_are_the_runs_own(test_home: user_dirs.TestHome) -> None:
    assert Path.home() == test_home.root
    assert default_data_dir() == test_home.data_dir
    assert Settings().data_dir == test_home.data_dir
    assert default_data_dir() != user_dirs.REAL_DATA_DIR
    for name in user_dirs.REDIRECTED:
        assert Path(os.environ[name]).is_relative_to(test_home.root), name


async def test_the_fallback_data_folder_is_the_runs_not_the_users(
        model: ScriptedModelServer, tmp_path: Path, test_home: user_dirs.TestHome) -> None:
    before = user_dirs.snapshot()
    model.default = Reply(content="Hello there.")
    init = {"cortex": {"dataDir": str(tmp_path / "ws" / "cortex-data")}}  # inside the opened folder
    async with lsp_session(model, tmp_path, init_options=init) as client:
        result = await ask(client, "hi")
    assert result["stop_reason"] == "answered"
    assert not (tmp_path / "ws" / "cortex-data").exists()
    assert (test_home.data_dir / "memory.db").is_file(), "the fallback went somewhere else"
    assert user_dirs.changes(before, user_dirs.snapshot()) == []


def test_changes_names_what_was_written(tmp_path: Path) -> None:
    before = user_dirs.snapshot(tmp_path)
    (tmp_path / "memory.db").write_text("x")
    assert user_dirs.changes(before, user_dirs.snapshot(tmp_path))[:1] == ["created memory.db"]
