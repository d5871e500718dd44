"""Fresh document search without a walk per search: the editor's path events (DocChanges) make a search
re-read only the changed paths; a walk only when the folder was never walked, the editor cannot watch,
a burst overflows, or the last walk is too old. Real SQLite, real Chroma, the doc_search tool.

The work is asserted on the counters DocChanges keeps (files walked, paths re-read), never on time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.memory.docchanges import MAX_PENDING, DocChanges
from cortex_lsp.memory.docfresh import refresh
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.doc_search import DocSearchTool
from cortex_lsp.tools.registry import ToolRegistry

FILES = 40


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for n in range(FILES):
        (root / f"part{n % 4}").mkdir(parents=True, exist_ok=True)
        (root / f"part{n % 4}" / f"note{n}.md").write_text(f"# Note {n}\n\nOrdinary text number {n}.\n")
    return root


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def search(registry: ToolRegistry, root: Path, settings: Settings, query: str,
                 overlays: dict[Path, str] | None = None) -> str:
    ctx = ToolContext(workspace=StaticWorkspace([root], overlays or {}), settings=settings)
    result = await registry.execute("doc_search", {"action": "search", "query": query}, ctx)
    assert result.success, result.error
    return result.output


def watched(memory: PersistentMemory, changes: DocChanges | None = None) -> tuple[DocChanges, ToolRegistry]:
    """A doc_search tool fed by an editor that watches files (``changes``: a new one by default)."""
    changes = changes if changes is not None else DocChanges()
    changes.start_watching()
    return changes, ToolRegistry([DocSearchTool(memory.doc_index, changes)])


def touch(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))  # a new mtime on coarse clocks too


async def test_a_changed_file_is_found_without_a_walk(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    changes, registry = watched(memory)
    assert "zanzibarquokka" not in await search(registry, folder, mem_settings, "zanzibarquokka")
    first = changes.counters
    assert first.walks == 1 and first.files_walked == FILES  # never walked: one walk
    touch(folder / "part1" / "note5.md", "# Note 5\n\nThe zanzibarquokka ledger moved.\n")
    changes.changed([str(folder / "part1" / "note5.md")])
    found = await search(registry, folder, mem_settings, "zanzibarquokka")
    after = changes.counters
    assert "part1/note5.md" in found and "zanzibarquokka" in found
    assert after.walks == 1 and after.files_walked == FILES  # no second walk
    assert after.paths_checked == 1
    await search(registry, folder, mem_settings, "zanzibarquokka")
    assert changes.counters.walks == 1 and changes.counters.paths_checked == 1  # nothing pending: no work


async def test_without_changes_every_search_walks_as_before(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    changes = DocChanges()  # watching stays False: the editor cannot report changes on disk
    registry = ToolRegistry([DocSearchTool(memory.doc_index, changes)])
    await search(registry, folder, mem_settings, "ordinary")
    touch(folder / "part2" / "note6.md", "# Note 6\n\nThe quillpangolin appears.\n")  # no event at all
    found = await search(registry, folder, mem_settings, "quillpangolin")
    assert "part2/note6.md" in found
    assert changes.counters.walks == 2 and changes.counters.files_walked == 2 * FILES


async def test_deleted_files_and_folders_leave_the_index(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    changes, registry = watched(memory)
    await search(registry, folder, mem_settings, "ordinary")
    (folder / "part0" / "note4.md").unlink()
    for f in (folder / "part3").iterdir():
        f.unlink()
    (folder / "part3").rmdir()
    changes.changed([str(folder / "part0" / "note4.md"), str(folder / "part3")])  # a folder: one event
    await search(registry, folder, mem_settings, "ordinary")
    left = await memory.doc_index.search("Ordinary text number", [folder], top_k=50, mode="bm25")
    paths = {h.path for h in left}
    assert "part0/note4.md" not in paths and not any(p.startswith("part3/") for p in paths)
    assert len(paths) == FILES - 1 - FILES // 4
    assert changes.counters.walks == 1


async def test_a_folder_moved_in_is_indexed_from_its_one_event(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    changes, registry = watched(memory)
    await search(registry, folder, mem_settings, "ordinary")
    (folder / "new" / "deep").mkdir(parents=True)
    (folder / "new" / "deep" / "moved.md").write_text("# Moved\n\nThe velvetaardvark protocol.\n")
    (folder / "new" / ".hidden.md").write_text("velvetaardvark secret\n")
    changes.changed([str(folder / "new")])
    found = await search(registry, folder, mem_settings, "velvetaardvark")
    assert "new/deep/moved.md" in found and ".hidden.md" not in found and "secret" not in found
    assert changes.counters.walks == 1


async def test_paths_the_tools_may_not_read_stay_out(
    memory: PersistentMemory, folder: Path, mem_settings: Settings, tmp_path: Path
) -> None:
    changes, registry = watched(memory)
    await search(registry, folder, mem_settings, "ordinary")
    outside = tmp_path / "outside.md"
    outside.write_text("glimmerwombat outside\n")
    (folder / ".env").write_text("glimmerwombat=1\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "notes.md").write_text("glimmerwombat in git\n")
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "pkg.md").write_text("glimmerwombat vendored\n")
    (folder / "link.md").symlink_to(outside)
    changes.changed([str(outside), str(folder / ".env"), str(folder / ".git" / "notes.md"),
                     str(folder / "node_modules" / "pkg.md"), str(folder / "link.md"), str(folder / ".git")])
    found = await search(registry, folder, mem_settings, "glimmerwombat")
    assert "glimmerwombat" not in found
    hits = await memory.doc_index.search("glimmerwombat", [folder, tmp_path], top_k=10, mode="bm25")
    assert hits == []


async def test_a_burst_of_events_is_coalesced_into_one_bounded_walk(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    changes, registry = watched(memory)
    await search(registry, folder, mem_settings, "ordinary")
    changes.changed([str(folder / "part0" / "note0.md")] * 1000)  # one file, a thousand saves
    assert changes.pending == 1
    await search(registry, folder, mem_settings, "ordinary")
    assert changes.counters.paths_checked == 1 and changes.counters.walks == 1
    changes.changed([str(folder / f"gen{n}.md") for n in range(1000)])  # a build writes 1,000 files
    assert changes.pending <= MAX_PENDING
    touch(folder / "part0" / "note8.md", "# Note 8\n\nThe burstmarmot line.\n")
    found = await search(registry, folder, mem_settings, "burstmarmot")
    after = changes.counters
    assert "part0/note8.md" in found  # the one walk saw what the dropped events stood for
    assert after.walks == 2 and after.overflows == 1 and after.paths_checked == 1 and after.events == 2000
    assert changes.pending == 0


async def test_an_old_walk_is_repeated_after_the_interval(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    clock = Clock()
    changes, registry = watched(memory, DocChanges(clock=clock, full_walk_seconds=300))
    await search(registry, folder, mem_settings, "ordinary")
    touch(folder / "part3" / "note3.md", "# Note 3\n\nThe unwatchedemu edit.\n")  # by a program nobody watched
    clock.now += 299
    assert "unwatchedemu" not in await search(registry, folder, mem_settings, "unwatchedemu")
    clock.now += 2
    assert "part3/note3.md" in await search(registry, folder, mem_settings, "unwatchedemu")
    assert changes.counters.walks == 2


async def test_unsaved_text_and_closing_without_saving(
    memory: PersistentMemory, folder: Path, mem_settings: Settings
) -> None:
    changes, registry = watched(memory)
    await search(registry, folder, mem_settings, "ordinary")
    note = folder / "part2" / "note2.md"
    changes.changed([str(note)])  # didChange: the open document's text, not yet saved
    found = await search(registry, folder, mem_settings, "typedokapi", {note: "# Note 2\n\ntypedokapi draft\n"})
    assert "part2/note2.md" in found
    changes.changed([str(note)])  # didClose without saving: back to the text on disk
    assert "typedokapi" not in await search(registry, folder, mem_settings, "typedokapi")
    assert changes.counters.walks == 1


async def test_an_emptied_index_is_walked_again(memory: PersistentMemory, folder: Path) -> None:
    changes = DocChanges()
    changes.start_watching()
    await refresh(memory.doc_index, [folder], changes)
    await memory.doc_index.reset()  # cortex.memory.reset, or another data folder
    fresh = await refresh(memory.doc_index, [folder], changes)
    assert fresh.walk is not None and fresh.walk.indexed == FILES
    assert changes.counters.walks == 2


async def test_a_folder_opened_through_a_link_gets_its_events(
    memory: PersistentMemory, folder: Path, mem_settings: Settings, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    linked.symlink_to(folder)  # the editor opened the link: its events name paths under the link
    changes, registry = watched(memory)
    await search(registry, linked, mem_settings, "ordinary")
    touch(folder / "part1" / "note1.md", "# Note 1\n\nThe linkedlemur note.\n")
    changes.changed([str(linked / "part1" / "note1.md")])
    assert "part1/note1.md" in await search(registry, linked, mem_settings, "linkedlemur")
    assert changes.counters.walks == 1 and changes.counters.paths_checked == 1


async def test_once_the_watcher_starts_every_folder_is_walked_once_more(memory: PersistentMemory,
                                                                        folder: Path) -> None:
    changes = DocChanges()
    await refresh(memory.doc_index, [folder], changes)  # before the client answered the registration
    touch(folder / "part0" / "note0.md", "# Note 0\n\nchanged before the watcher ran\n")  # reported to nobody
    changes.start_watching()
    first = await refresh(memory.doc_index, [folder], changes)
    second = await refresh(memory.doc_index, [folder], changes)
    assert first.walk is not None and first.walk.indexed == 1
    assert second.walk is None and changes.counters.walks == 2


async def test_a_folder_without_documents_is_walked_once(memory: PersistentMemory, tmp_path: Path) -> None:
    bare = tmp_path / "images"
    bare.mkdir()
    (bare / "photo.jpg").write_bytes(b"\xff\xd8")
    changes = DocChanges()
    changes.start_watching()
    for _ in range(3):
        await refresh(memory.doc_index, [bare], changes)
    assert changes.counters.walks == 1  # an empty index is expected there: no walk per search
