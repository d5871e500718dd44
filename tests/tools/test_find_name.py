"""read_file given a plain file name that is not at the top of the open folder: the one file of that name
further down is read (through the path guards); several are named back; hidden entries, links out and
dependency folders are never searched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.builtin import build_registry
from cortex_lsp.tools.find_name import MAX_ENTRIES, bare_name, files_named


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "db.py").write_text("def connect():\n    return sqlite3.connect('billing.db')\n")
    (root / "app.py").write_text("print('top')\n")
    return root


async def _read(root: Path, tmp_path: Path, path: str) -> tuple[bool, str]:
    settings = Settings(data_dir=tmp_path / "data", web_fetch_enabled=False)
    registry = build_registry(settings, include_web=False)
    context = ToolContext(workspace=StaticWorkspace([root]), settings=settings, edits=None, user_words="")
    result = await registry.execute("read_file", {"path": path}, context)
    return result.success, result.output if result.success else (result.error or "")


async def test_a_file_named_without_its_folder_is_found_and_read(root: Path, tmp_path: Path) -> None:
    ok, text = await _read(root, tmp_path, "db.py")
    assert ok, text
    assert "billing.db" in text and "src/db.py" in text


async def test_a_file_at_the_top_is_read_as_before(root: Path, tmp_path: Path) -> None:
    (root / "src" / "app.py").write_text("print('nested')\n")
    ok, text = await _read(root, tmp_path, "app.py")
    assert ok and "top" in text and "nested" not in text


async def test_several_files_of_that_name_are_named_back_and_none_is_read(root: Path, tmp_path: Path) -> None:
    (root / "lib").mkdir()
    (root / "lib" / "db.py").write_text("OTHER = 1\n")
    ok, text = await _read(root, tmp_path, "db.py")
    assert not ok
    assert "lib/db.py" in text and "src/db.py" in text and "billing.db" not in text


@pytest.mark.parametrize("where", [".git/db.py", ".hidden/deep/db.py", "node_modules/pkg/db.py"])
async def test_hidden_and_dependency_folders_are_not_searched(tmp_path: Path, where: str) -> None:
    root = tmp_path / "ws"
    (root / where).parent.mkdir(parents=True)
    (root / where).write_text("SECRET = 'x'\n")
    ok, text = await _read(root, tmp_path, "db.py")
    assert not ok and "SECRET" not in text and text.startswith("Not found")


async def test_a_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "db.py").write_text("SECRET = 'outside'\n")
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(outside, root / "linked")
    (root / "direct.py").symlink_to(outside / "deep" / "db.py")
    ok, text = await _read(root, tmp_path, "db.py")
    assert not ok and "outside" not in text.replace(str(tmp_path), "")


@pytest.mark.parametrize("raw", ["src/db.py", ".env", "", "../db.py", "a\\b.py", "x" * 300])
def test_only_a_plain_visible_name_is_searched(raw: str) -> None:
    assert bare_name(raw) is None


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "many").mkdir(parents=True)
    for i in range(MAX_ENTRIES + 50):
        (root / "many" / f"f{i}.txt").touch()
    (root / "zz").mkdir()
    (root / "zz" / "db.py").touch()  # past the bound: walked after the 5,000 entries of "many"
    assert files_named("db.py", [root]) == []
    assert files_named("f1.txt", [root]) == ["many/f1.txt"]
