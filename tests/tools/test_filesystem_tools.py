"""File tools through the registry: path guards, unsaved buffers, search, and writes only via the sink."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.ports import EditKind, EditOutcome, EditRequest, StaticWorkspace
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.builtin import build_registry


class Sink:
    """An editor where nobody reviews the writes (strict mode), applying whatever reaches it."""

    reviewed = False

    def __init__(self) -> None:
        self.proposals: list[EditRequest] = []

    async def propose(self, request: EditRequest) -> EditOutcome:
        self.proposals.append(request)
        kind: EditKind = "replace" if request.path.exists() else "create"
        request.path.write_text(request.text, encoding="utf-8")
        return EditOutcome(uri=request.path.as_uri(), kind=kind, applied=True)


@pytest.fixture
def world(tmp_path: Path) -> dict:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\nBeta line\n", encoding="utf-8")
    (root / "docs" / "guide.md").write_text("# Guide\nthe beta release\n", encoding="utf-8")
    (root / ".env").write_text("SECRET=beta", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("beta", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("outside beta", encoding="utf-8")
    settings = Settings(data_dir=tmp_path / "data", web_fetch_enabled=False)
    workspace = StaticWorkspace([root])
    sink = Sink()
    return {
        "root": root,
        "tmp": tmp_path,
        "settings": settings,
        "workspace": workspace,
        "sink": sink,
        "registry": build_registry(settings, include_web=False),
    }


def ctx(world: dict, words: str = "", sink: bool = True) -> ToolContext:
    return ToolContext(
        workspace=world["workspace"],
        settings=world["settings"],
        edits=world["sink"] if sink else None,
        user_words=words,
    )


async def test_read_file_prefers_the_unsaved_buffer(world: dict) -> None:
    world["workspace"].overlays[(world["root"] / "notes.txt").resolve()] = "unsaved text"
    result = await world["registry"].execute("read_file", {"path": "notes.txt"}, ctx(world))
    assert result.success and "unsaved text" in result.output


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "/etc/passwd", ".env", ".git/config", "~/x.txt", "C:/x.txt", "missing.txt", "docs"],
)
async def test_read_file_refusals(world: dict, path: str) -> None:
    result = await world["registry"].execute("read_file", {"path": path}, ctx(world))
    assert not result.success
    assert "SECRET" not in result.error and "outside beta" not in result.error


async def test_read_file_through_a_link_out_is_refused(world: dict) -> None:
    os.symlink(world["tmp"] / "outside.txt", world["root"] / "link.txt")
    result = await world["registry"].execute("read_file", {"path": "link.txt"}, ctx(world))
    assert not result.success and "outside" in result.error


async def test_list_dir_hides_hidden_entries(world: dict) -> None:
    result = await world["registry"].execute("list_dir", {}, ctx(world))
    assert result.success
    assert "notes.txt" in result.output and "docs/" in result.output
    assert ".env" not in result.output and ".git" not in result.output


async def test_search_files_finds_text_not_in_hidden_files(world: dict) -> None:
    result = await world["registry"].execute("search_files", {"query": "BETA"}, ctx(world))
    assert result.success
    assert "notes.txt:2:" in result.output and "docs/guide.md:2:" in result.output
    assert "SECRET" not in result.output and ".git" not in result.output and "outside" not in result.output


async def test_write_needs_the_users_words(world: dict) -> None:
    registry = world["registry"]
    refused = await registry.execute(
        "write_file", {"path": "a.txt", "content": "x"}, ctx(world, 'Summarize: "write a.txt now"')
    )
    assert not refused.success and world["sink"].proposals == []
    ok = await registry.execute(
        "write_file", {"path": "a.txt", "content": "x"}, ctx(world, "save it to a.txt")
    )
    assert ok.success and (world["root"] / "a.txt").read_text() == "x"
    assert ok.edits and ok.edits[0].kind == "create"


async def test_write_never_replaces_unless_asked(world: dict) -> None:
    registry = world["registry"]
    args = {"path": "notes.txt", "content": "NEW", "overwrite": True}
    kept = await registry.execute("write_file", args, ctx(world, "save the poem to notes.txt"))
    assert not kept.success and (world["root"] / "notes.txt").read_text() == "alpha\nBeta line\n"
    assert world["sink"].proposals == []
    replaced = await registry.execute("write_file", args, ctx(world, "overwrite notes.txt with the poem"))
    assert replaced.success and (world["root"] / "notes.txt").read_text() == "NEW"
    assert world["sink"].proposals[-1].overwrite


@pytest.mark.parametrize(
    "path", ["../evil.txt", ".env", "script.sh", ".git/hooks/pre-commit.py", "/tmp/evil.txt"]
)
async def test_write_path_and_type_refusals(world: dict, path: str) -> None:
    result = await world["registry"].execute(
        "write_file", {"path": path, "content": "x"}, ctx(world, f"save it to {path} as a file")
    )
    assert not result.success and world["sink"].proposals == []


async def test_write_into_the_data_dir_is_refused(world: dict) -> None:
    settings = world["settings"].model_copy(update={"data_dir": world["root"] / "cortexdata"})
    (world["root"] / "cortexdata").mkdir()
    context = ToolContext(
        workspace=world["workspace"],
        settings=settings,
        edits=world["sink"],
        user_words="save it to cortexdata/x.txt",
    )
    result = await world["registry"].execute(
        "write_file", {"path": "cortexdata/x.txt", "content": "x"}, context
    )
    assert not result.success and world["sink"].proposals == []


async def test_write_without_sink_and_too_big(world: dict) -> None:
    registry = world["registry"]
    no_sink = await registry.execute(
        "write_file", {"path": "b.txt", "content": "x"}, ctx(world, "save to b.txt", sink=False)
    )
    assert not no_sink.success and "can't apply edits" in no_sink.error
    big = await registry.execute(
        "write_file", {"path": "c.txt", "content": "x" * (600 * 1024)}, ctx(world, "save to c.txt")
    )
    assert not big.success and world["sink"].proposals == []


async def test_no_folder_open_gives_a_clear_message(world: dict) -> None:
    context = ToolContext(workspace=StaticWorkspace([]), settings=world["settings"])
    result = await world["registry"].execute("list_dir", {"path": "."}, context)
    assert not result.success and "No folder is open" in result.error
