"""Incremental re-indexing of the document index: after one file changes, only that file is read, chunked and
embedded again — counted in chunks sent to the (scripted) embedding model and files read, never in time.
Real SQLite, real Chroma, the real Ollama client over HTTP; each pass opens a fresh store (as after a
restart), so the embedder's in-process cache cannot hide a re-embedding."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from cortex_lsp.config import Settings
from cortex_lsp.guards.paths import ResolvedPath
from cortex_lsp.memory.chroma import release_chroma_client
from cortex_lsp.memory.docindex import IndexStats, default_reader
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.ollama_client import OllamaClient
from tests.scripted_model import ScriptedModelServer

FILES = 12


def _module(i: int, extra: str = "") -> str:
    funcs = "\n\n".join(
        f"def module{i}_function{k}(value):\n    '''Return value scaled by {k} in module {i}.'''\n"
        f"    return value * {k} + {i}\n" for k in range(4))
    return f'"""Module {i}."""\n\n{funcs}\n{extra}'


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    for i in range(FILES):
        (root / "pkg" / f"module{i}.py").write_text(_module(i))
    return root


async def _index(settings: Settings, client: OllamaClient, root: Path) -> tuple[IndexStats, list[str]]:
    """One pass with a fresh store; returns the stats and the relative paths the index read."""
    read: list[str] = []

    def reader(target: ResolvedPath) -> str:
        read.append(target.relative)
        return default_reader(target)

    memory = await PersistentMemory(settings, client).open()
    try:
        stats = await memory.doc_index.index_workspace([root], reader)
    finally:
        await memory.aclose()
        release_chroma_client(settings)
    return stats, read


def _embedded(model: ScriptedModelServer, since: int) -> list[str]:
    texts: list[str] = []
    for body in model.embed_requests[since:]:
        raw = body.get("input", "")
        texts.extend([raw] if isinstance(raw, str) else raw)
    return texts


async def test_one_changed_file_is_the_only_one_read_and_embedded_again(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    root = _workspace(tmp_path)
    first, read = await _index(mem_settings, model_client, root)
    assert first.indexed == FILES and len(read) == FILES
    everything = _embedded(model_server, 0)
    assert len(everything) == first.chunks > FILES  # several chunks per file

    changed = root / "pkg" / "module5.py"
    changed.write_text(_module(5, extra="\ndef module5_added(value):\n    return -value\n"))
    mark = len(model_server.embed_requests)
    second, read = await _index(mem_settings, model_client, root)

    assert second.indexed == 1 and second.unchanged == FILES - 1 and second.removed == 0
    assert read == ["pkg/module5.py"]
    again = _embedded(model_server, mark)
    assert again and all("module5" in text or "Module 5" in text for text in again), again
    per_file = first.chunks // FILES
    assert len(again) <= per_file + 2  # that file's chunks only, not the folder's
    assert second.chunks >= first.chunks


async def test_touched_but_unchanged_files_are_read_and_not_embedded(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    root = _workspace(tmp_path)
    await _index(mem_settings, model_client, root)
    for path in (root / "pkg").iterdir():
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))
    mark = len(model_server.embed_requests)
    stats, read = await _index(mem_settings, model_client, root)
    assert stats.indexed == 0 and stats.unchanged == FILES
    assert len(read) == FILES  # new mtime: read and hashed ...
    assert _embedded(model_server, mark) == []  # ... but the same content is not embedded again
    mark = len(model_server.embed_requests)
    stats, read = await _index(mem_settings, model_client, root)
    assert read == [] and _embedded(model_server, mark) == []  # and the next pass does not even read them


async def test_an_index_written_before_the_bm25_table_is_searchable(
    mem_settings: Settings, model_client: OllamaClient, tmp_path: Path
) -> None:
    root = _workspace(tmp_path)
    await _index(mem_settings, model_client, root)
    db = sqlite3.connect(mem_settings.data_dir / "docs.db")
    db.execute("DROP TABLE chunks_fts")  # as written by the previous version
    db.commit()
    db.close()
    memory = await PersistentMemory(mem_settings, model_client).open()
    try:
        hits = await memory.doc_index.search("module7_function3", [root], top_k=1, mode="bm25")
    finally:
        await memory.aclose()
        release_chroma_client(mem_settings)
    assert [h.path for h in hits] == ["pkg/module7.py"]


async def test_postings_of_an_older_tokenizer_are_rebuilt_and_words_meet_at_their_stem(
    mem_settings: Settings, model_client: OllamaClient, tmp_path: Path
) -> None:
    root = _workspace(tmp_path)
    (root / "RELEASING.md").write_text("# Releasing\n\nTagging the commit comes first.\n")
    await _index(mem_settings, model_client, root)
    db = sqlite3.connect(mem_settings.data_dir / "docs.db")
    db.execute("DELETE FROM chunks_fts")  # as if written by the older tokenizer, words without stems
    db.execute("INSERT INTO chunks_fts(rowid, tokens) SELECT rowid, lower(text) FROM chunks")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    memory = await PersistentMemory(mem_settings, model_client).open()
    try:
        hits = await memory.doc_index.search("how are releases tagged", [root], top_k=1, mode="bm25")
    finally:
        await memory.aclose()
        release_chroma_client(mem_settings)
    assert [h.path for h in hits] == ["RELEASING.md"]


async def test_a_search_never_returns_another_folders_chunks(
    mem_settings: Settings, model_client: OllamaClient, tmp_path: Path
) -> None:
    mine = _workspace(tmp_path)
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    for i in range(FILES):  # the other folder dominates the collection and matches the query best
        (other / "lib" / f"zebra{i}.py").write_text(f"def zebra_stripes_{i}(value):\n    return 'zebra' * {i}\n")
    memory = await PersistentMemory(mem_settings, model_client).open()
    try:
        await memory.doc_index.index_workspace([mine])
        await memory.doc_index.index_workspace([other])
        hits = await memory.doc_index.search("zebra stripes", [mine], top_k=5, mode="vector")
        both = await memory.doc_index.search("zebra stripes", [mine, other], top_k=5, mode="vector")
    finally:
        await memory.aclose()
        release_chroma_client(mem_settings)
    assert hits and all(h.path.startswith("pkg/") for h in hits)
    assert any(h.path.startswith("lib/") for h in both)
