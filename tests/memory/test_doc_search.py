"""Document search: structure-aware chunks, CRLF, hybrid BM25 + vectors with citations, re-indexing,
the path guards — real SQLite, real Chroma, embeddings from the scripted model server.

Also measures hit@3 of hybrid vs vectors-only on the labelled set in ``data/doc_queries.json``
(exact identifiers and error messages over ``data/doc_corpus``); hybrid must beat vectors-only.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.memory.chunking import chunk_markdown, chunk_python, chunk_text
from cortex_lsp.memory.docindex import DocHit, SearchMode
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.ports import StaticWorkspace
from cortex_lsp.tools.base import ToolContext
from cortex_lsp.tools.details import DocHits
from cortex_lsp.tools.doc_search import DocSearchTool
from cortex_lsp.tools.registry import ToolRegistry

DATA = Path(__file__).parent / "data"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DATA / "doc_corpus", root)
    return root


def gold_line(root: Path, rel: str, line: str) -> int:
    text = (root / rel).read_bytes().decode().replace("\r\n", "\n")
    return text.split("\n").index(line) + 1


def is_hit(hit: DocHit, rel: str, line_no: int) -> bool:
    return hit.path == rel and hit.start_line <= line_no <= hit.end_line


async def hit_rate(memory: PersistentMemory, root: Path, mode: SearchMode) -> float:
    cases = json.loads((DATA / "doc_queries.json").read_text())
    hits = 0
    for case in cases:
        line_no = gold_line(root, case["path"], case["line"])
        found = await memory.doc_index.search(case["query"], [root], top_k=3, mode=mode)
        hits += any(is_hit(h, case["path"], line_no) for h in found)
    return hits / len(cases)


async def test_hybrid_beats_vectors_only_on_the_labelled_set(
    memory: PersistentMemory, workspace: Path
) -> None:
    assert len(json.loads((DATA / "doc_queries.json").read_text())) >= 15
    stats = await memory.doc_index.index_workspace([workspace])
    assert stats.indexed == 6 and stats.chunks > 15
    hybrid = await hit_rate(memory, workspace, "hybrid")
    vector = await hit_rate(memory, workspace, "vector")
    bm25 = await hit_rate(memory, workspace, "bm25")
    print(f"\nhit@3 on {DATA / 'doc_queries.json'}: hybrid {hybrid:.2f}, vectors-only {vector:.2f}, "
          f"bm25-only {bm25:.2f}")
    assert hybrid > vector
    assert hybrid >= 0.85


def test_markdown_is_chunked_on_headings_with_line_ranges() -> None:
    text = (DATA / "doc_corpus" / "docs" / "errors.md").read_text()
    chunks = chunk_markdown(text)
    lines = text.split("\n")
    headings = [c.heading for c in chunks]
    assert "## HB-2001 spool folder full" in headings and "## ERR_CLOCK_SKEW" in headings
    for chunk in chunks:
        assert "\n".join(lines[chunk.start_line - 1 : chunk.end_line]) == chunk.text
        assert sum(1 for line in chunk.text.split("\n") if line.startswith("## ")) <= 1


def test_python_is_chunked_on_definitions() -> None:
    text = (DATA / "doc_corpus" / "docs" / "sync_engine.py").read_text()
    chunks = chunk_python(text)
    by_head = {c.heading: c for c in chunks}
    backoff = by_head["def compute_backoff(attempt, base=2.0, ceiling=300.0):"]
    assert backoff.text.startswith("def compute_backoff") and "return min(ceiling" in backoff.text
    assert "def send_batch" not in backoff.text
    assert "class SpoolFullError(Exception):" in by_head


def test_crlf_documents_chunk_and_cite_like_lf_documents() -> None:
    lf = "Title\n\nfirst paragraph line one\nline two\n\nsecond paragraph\n" * 40
    crlf = lf.replace("\n", "\r\n")
    cr = lf.replace("\n", "\r")
    expected = [(c.start_line, c.end_line, c.text) for c in chunk_text(lf, 300)]
    assert [(c.start_line, c.end_line, c.text) for c in chunk_text(crlf, 300)] == expected
    assert [(c.start_line, c.end_line, c.text) for c in chunk_text(cr, 300)] == expected
    assert all("\r" not in c.text for c in chunk_markdown(crlf))


async def test_crlf_file_citations_point_at_the_right_lines(
    memory: PersistentMemory, workspace: Path
) -> None:
    raw = (workspace / "docs" / "ops_notes.txt").read_bytes()
    assert b"\r\n" in raw
    await memory.doc_index.index_workspace([workspace])
    [top, *_] = await memory.doc_index.search("cleanup_quarantine", [workspace], top_k=3)
    lines = raw.decode().split("\r\n")
    assert top.path == "docs/ops_notes.txt"
    cited = lines[top.start_line - 1 : top.end_line]
    assert any("cleanup_quarantine" in line for line in cited)
    assert "\r" not in top.text


def tool_context(root: Path, settings: Settings, overlays: dict[Path, str] | None = None) -> ToolContext:
    return ToolContext(workspace=StaticWorkspace([root], overlays or {}), settings=settings)


async def test_the_tool_answers_with_citations(
    memory: PersistentMemory, workspace: Path, mem_settings: Settings
) -> None:
    registry = ToolRegistry([DocSearchTool(memory.doc_index)])
    args = {"action": "search", "query": "ERR_CLOCK_SKEW", "top_k": 99}
    result = await registry.execute("doc_search", args, tool_context(workspace, mem_settings))
    assert result.success, result.error
    line_no = gold_line(workspace, "docs/errors.md", "## ERR_CLOCK_SKEW")
    assert isinstance(result.detail, DocHits), result
    first = result.detail.hits[0]
    assert first.path == "docs/errors.md" and first.start_line <= line_no <= first.end_line
    assert f"[1] {first.citation}" in result.output
    assert len(result.detail.hits) <= 20  # top_k is clamped


async def test_a_search_scoped_to_a_path_indexes_that_file_first_and_searches_only_it(
    memory: PersistentMemory, workspace: Path, mem_settings: Settings
) -> None:
    registry = ToolRegistry([DocSearchTool(memory.doc_index)])
    args = {"action": "search", "query": "HB-1001 ledger unreachable", "path": "docs/sync_engine.py"}
    result = await registry.execute("doc_search", args, tool_context(workspace, mem_settings))
    assert result.success, result.error
    assert isinstance(result.detail, DocHits), result
    assert {h.path for h in result.detail.hits} == {"docs/sync_engine.py"}
    # Only that file was indexed (nothing else was read).
    everywhere = await memory.doc_index.search("HB-1001", [workspace], top_k=10, mode="bm25")
    assert everywhere and {h.path for h in everywhere} == {"docs/sync_engine.py"}


async def test_changed_and_deleted_files_are_reindexed(memory: PersistentMemory, workspace: Path) -> None:
    index = memory.doc_index
    await index.index_workspace([workspace])
    again = await index.index_workspace([workspace])
    assert again.indexed == 0 and again.unchanged == 6
    target = workspace / "docs" / "deploy.md"
    target.write_text(target.read_text() + "\n## Decommissioning\n\nRun harbor retire --purge-spool last.\n")
    stats = await index.index_workspace([workspace])
    assert stats.indexed == 1
    # the re-indexed text is found (ranking against the other files is the recall benchmark's business:
    # in a loaded full run the fused rank-1 hit was once changelog.md)
    hits = await index.search("harbor retire --purge-spool", [workspace], top_k=3)
    assert any(h.path == "docs/deploy.md" and "purge-spool" in h.text for h in hits), hits
    # Same size and content, new mtime: re-read, hash unchanged, chunks kept.
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10_000_000))
    assert (await index.index_workspace([workspace])).indexed == 0
    (workspace / "docs" / "changelog.md").unlink()
    assert (await index.index_workspace([workspace])).removed == 1
    gone = await index.search("retry_backoff_seconds", [workspace], top_k=5, path="docs/changelog.md")
    assert gone == []


async def test_hidden_and_outside_files_are_never_indexed(
    memory: PersistentMemory, workspace: Path, mem_settings: Settings, tmp_path: Path
) -> None:
    (workspace / ".private").mkdir()
    (workspace / ".private" / "secrets.md").write_text("# Secrets\nZEBRA_PASSWORD_42\n")
    (workspace / ".env.md").write_text("ZEBRA_PASSWORD_42\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\nZEBRA_PASSWORD_42 lives outside the folder\n")
    (workspace / "docs" / "link.md").symlink_to(outside)
    await memory.doc_index.index_workspace([workspace])
    assert await memory.doc_index.search("ZEBRA_PASSWORD_42", [workspace], top_k=5, mode="bm25") == []
    registry = ToolRegistry([DocSearchTool(memory.doc_index)])
    context = tool_context(workspace, mem_settings)
    for path in (".private/secrets.md", ".env.md", "docs/link.md", "../outside.md"):
        args = {"action": "search", "query": "ZEBRA", "path": path}
        result = await registry.execute("doc_search", args, context)
        assert not result.success and "denied" in result.error.lower(), (path, result.error)


async def test_index_action_and_unsaved_editor_text(
    memory: PersistentMemory, workspace: Path, mem_settings: Settings
) -> None:
    registry = ToolRegistry([DocSearchTool(memory.doc_index)])
    target = (workspace / "README.md").resolve()
    draft = "# Draft\n\nUNSAVED_MARKER_77 only in the editor\n"
    context = tool_context(workspace, mem_settings, {target: draft})
    result = await registry.execute("doc_search", {"action": "index_document", "path": "README.md"}, context)
    assert result.success and "README.md" in result.output
    found = await memory.doc_index.search("UNSAVED_MARKER_77", [workspace], top_k=1, mode="bm25")
    assert found and found[0].path == "README.md"
    result = await registry.execute("doc_search", {"action": "index"}, context)
    assert result.success and "6 file(s)" not in result.output and "unchanged" in result.output
    missing = await registry.execute("doc_search", {"action": "search"}, context)
    assert not missing.success and "query" in missing.error
