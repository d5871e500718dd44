"""Document search over the workspace: structure-aware chunks, hybrid BM25 + vector ranking, citations.

Chunks (with their line ranges and text) live in SQLite (``data_dir/docs.db``), their BM25 postings in
an FTS5 table kept up to date file by file (a search never rebuilds anything); Chroma holds
only their vectors and root/path (:class:`~cortex_lsp.memory.vectors.VectorIndex`). A search fuses
both rankings by reciprocal rank fusion, so exact identifiers
and error messages (BM25's strength) and paraphrases (the vectors') both find their passage. Files
are re-indexed when their size/mtime and content hash change; deleted files drop out. Files are
read only through the path guards (:func:`~cortex_lsp.guards.paths.resolve_in_roots`), so hidden and
out-of-root files are never indexed.

This module owns the database and the index's life (indexing, dropping, reset, the search's one thread
hop); which files are read lives in :mod:`~cortex_lsp.memory.docscan`, the BM25 query and the fusion in
:mod:`~cortex_lsp.memory.docranking`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cortex_lsp.guards.paths import PathRefused, ResolvedPath, resolve_in_roots
from cortex_lsp.memory.chroma import Embedder
from cortex_lsp.memory.chunking import TOKENS_VERSION, Chunk, chunk_document, tokenize
from cortex_lsp.memory.docranking import CANDIDATES, VECTOR_OVERFETCH, DocHit, bm25_ids, fused, in_scope, roots_where
from cortex_lsp.memory.docscan import MAX_FILE_BYTES, MAX_FILES, Reader, default_reader, scan_documents
from cortex_lsp.memory.erase import connect, scrub_sqlite
from cortex_lsp.memory.vectors import VectorIndex

#: an indexing pass writes changed files in batches of this many chunks (or files), not one by one
FLUSH_CHUNKS = 1000
FLUSH_FILES = 200
#: BM25 postings: each chunk's tokens (as :func:`~cortex_lsp.memory.chunking.tokenize` makes them), rowid = chunks.rowid
FTS_SCHEMA = "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(tokens, tokenize=\"unicode61 tokenchars '_'\");"
SearchMode = Literal["hybrid", "bm25", "vector"]


@dataclass(frozen=True)
class IndexStats:
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    refused: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Prepared:
    """One file read and hashed; ``chunks`` is ``None`` when its content is what was indexed."""

    root: str
    rel: str
    size: int
    mtime_ns: int
    digest: str
    chunks: list[Chunk] | None


def _chunk_id(root: str, path: str, n: int) -> str:
    return "doc-" + hashlib.sha1(f"{root}\x00{path}\x00{n}".encode()).hexdigest()


class DocIndex:
    def __init__(self, db_path: Path, vectors: VectorIndex, embedder: Embedder) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.vectors = vectors
        self.embedder = embedder
        self._lock = threading.Lock()
        self._write = asyncio.Lock()
        self._db = connect(db_path)
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS files (root TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL, sha1 TEXT NOT NULL, PRIMARY KEY (root, path));
            CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, root TEXT NOT NULL, path TEXT NOT NULL,
                n INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
                heading TEXT NOT NULL, text TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS chunks_file ON chunks(root, path);
            """
            + FTS_SCHEMA
        )
        if self._db.execute("PRAGMA user_version").fetchone()[0] < TOKENS_VERSION:
            # postings of another tokenizer: emptied here, filled again from the chunks on the first search
            self._db.execute("DELETE FROM chunks_fts")
            self._db.execute(f"PRAGMA user_version = {int(TOKENS_VERSION)}")
        self._generation = 0
        self._fts_checked = False

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- indexing -----------------------------------------------------------------------------------
    def _file_row(self, root: str, path: str) -> tuple[int, int, str] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT size, mtime_ns, sha1 FROM files WHERE root = ? AND path = ?", (root, path)
            ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]), str(row[2]))

    async def index_file(self, target: ResolvedPath, reader: Reader = default_reader) -> tuple[bool, int]:
        """Index one guarded file if it changed; returns ``(reindexed, chunk_count)``."""
        root, rel = str(target.root), target.relative
        st = await asyncio.to_thread(os.stat, target.path)
        known = await asyncio.to_thread(self._file_row, root, rel)
        if known and known[0] == st.st_size and known[1] == st.st_mtime_ns:
            return False, await asyncio.to_thread(self._chunk_count, root, rel)
        prepared = await self._prepare(target, reader, st.st_size, st.st_mtime_ns, known[2] if known else None)
        await self._commit([prepared])
        if prepared.chunks is None:
            return False, await asyncio.to_thread(self._chunk_count, root, rel)
        return True, len(prepared.chunks)

    async def _prepare(
        self, target: ResolvedPath, reader: Reader, size: int, mtime_ns: int, known_digest: str | None
    ) -> _Prepared:
        """Read, hash and (if the content changed) chunk one file, in a worker thread (``ast.parse`` of a
        large module takes tens of ms: never on the event loop)."""

        def work() -> _Prepared:
            text = reader(target)
            digest = hashlib.sha1(text.encode()).hexdigest()
            chunks = None if digest == known_digest else chunk_document(target.relative, text)
            return _Prepared(str(target.root), target.relative, size, mtime_ns, digest, chunks)

        return await asyncio.to_thread(work)

    async def _commit(self, batch: list[_Prepared]) -> None:
        """Write prepared files: one embedding pass, one vector delete and upsert, one SQLite transaction
        for the whole batch (a Chroma upsert per file costs ~40 ms whatever its size)."""
        if not batch:
            return
        changed = [p for p in batch if p.chunks is not None]
        texts = [c.index_text for p in changed for c in p.chunks or ()]
        vectors = await self.embedder.embed(texts) if texts else []
        async with self._write:
            # every SQLite statement (and the FTS tokenising) runs in a worker thread: the event loop only
            # schedules (a batch of ~1,000 chunks is tens of ms of work)
            old_ids, ids, metas, rows = await asyncio.to_thread(self._batch_rows, changed)
            stale = sorted(set(old_ids) - set(ids))
            if stale:
                await self.vectors.delete(stale)
            if ids:
                await self.vectors.upsert(ids, vectors, metas)
            await asyncio.to_thread(self._write_batch, changed, batch, rows)
            self._generation += 1

    def _batch_rows(self, changed: list[_Prepared]
                    ) -> tuple[list[str], list[str], list[dict[str, Any]], list[tuple[Any, ...]]]:
        """The batch's old chunk ids, and its new ids, vector metadata and rows (a worker thread)."""
        old_ids: list[str] = []
        ids: list[str] = []
        metas: list[dict[str, Any]] = []
        rows: list[tuple[Any, ...]] = []
        with self._lock:
            for p in changed:
                old_ids += [
                    r[0]
                    for r in self._db.execute("SELECT id FROM chunks WHERE root = ? AND path = ?", (p.root, p.rel))
                ]
                for n, c in enumerate(p.chunks or ()):
                    cid = _chunk_id(p.root, p.rel, n)
                    ids.append(cid)
                    metas.append({"root": p.root, "path": p.rel, "start": c.start_line, "end": c.end_line})
                    rows.append((cid, p.root, p.rel, n, c.start_line, c.end_line, c.heading, c.index_text))
        return old_ids, ids, metas, rows

    def _write_batch(self, changed: list[_Prepared], batch: list[_Prepared], rows: list[tuple[Any, ...]]) -> None:
        """One SQLite transaction for the batch: chunks, their BM25 postings, the files (a worker thread)."""
        postings = [" ".join(tokenize(row[7])) for row in rows]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for p in changed:
                    self._delete_chunks(p.root, p.rel)
                for row, tokens in zip(rows, postings, strict=True):
                    rowid = self._db.execute(
                        "INSERT OR REPLACE INTO chunks(id, root, path, n, start_line, end_line, heading, text) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        row,
                    ).lastrowid
                    self._db.execute("INSERT INTO chunks_fts(rowid, tokens) VALUES (?, ?)", (rowid, tokens))
                self._db.executemany(
                    "INSERT OR REPLACE INTO files(root, path, size, mtime_ns, sha1) VALUES (?, ?, ?, ?, ?)",
                    [(p.root, p.rel, p.size, p.mtime_ns, p.digest) for p in batch],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _exec(self, sql: str, params: Sequence[Any]) -> None:
        with self._lock:
            self._db.execute(sql, params)

    def _chunk_count(self, root: str, rel: str) -> int:
        with self._lock:
            return int(
                self._db.execute(
                    "SELECT COUNT(*) FROM chunks WHERE root = ? AND path = ?", (root, rel)
                ).fetchone()[0]
            )

    def _delete_chunks(self, root: str, rel: str) -> None:
        """Delete a file's chunks and their BM25 postings (caller holds ``_lock``)."""
        self._db.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE root = ? AND path = ?)", (root, rel)
        )
        self._db.execute("DELETE FROM chunks WHERE root = ? AND path = ?", (root, rel))

    def _drop_rows(self, root: str, rel: str) -> list[str]:
        with self._lock:
            ids = [
                r[0]
                for r in self._db.execute("SELECT id FROM chunks WHERE root = ? AND path = ?", (root, rel))
            ]
            self._delete_chunks(root, rel)
            self._db.execute("DELETE FROM files WHERE root = ? AND path = ?", (root, rel))
        return ids

    async def _drop_file(self, root: str, rel: str) -> None:
        ids = await asyncio.to_thread(self._drop_rows, root, rel)
        await self.vectors.delete(ids)
        self._generation += 1

    def _digests(self, root_names: list[str]) -> dict[tuple[str, str], str]:
        if not root_names:
            return {}
        marks = ",".join("?" * len(root_names))
        with self._lock:
            rows = self._db.execute(
                f"SELECT root, path, sha1 FROM files WHERE root IN ({marks})", root_names
            ).fetchall()
        return {(r, p): str(d) for r, p, d in rows}

    def _known(self, root_names: list[str]) -> dict[tuple[str, str], tuple[int, int, int]]:
        """``(root, path) → (size, mtime_ns, chunk count)`` of every indexed file under ``root_names``."""
        if not root_names:
            return {}
        marks = ",".join("?" * len(root_names))
        with self._lock:
            files = self._db.execute(
                f"SELECT root, path, size, mtime_ns FROM files WHERE root IN ({marks})", root_names
            ).fetchall()
            counts = dict(
                ((r, p), int(c))
                for r, p, c in self._db.execute(
                    f"SELECT root, path, COUNT(*) FROM chunks WHERE root IN ({marks}) GROUP BY root, path",
                    root_names,
                )
            )
        return {(r, p): (int(size), int(mtime), counts.get((r, p), 0)) for r, p, size, mtime in files}

    async def index_workspace(
        self, roots: Sequence[Path], reader: Reader = default_reader, *, max_files: int = MAX_FILES
    ) -> IndexStats:
        """Index every document under ``roots`` that changed; drop files that are gone.

        Incremental: the indexed files' size and mtime are read in one query, so a file whose size and
        mtime match costs nothing more; only changed files are read, and of those only the ones whose
        content hash changed are chunked and embedded again (:meth:`index_file`).
        """
        paths = await asyncio.to_thread(scan_documents, roots, max_files)
        root_names = [str(r.resolve()) for r in roots]
        known = await asyncio.to_thread(self._known, root_names)
        known_digests = await asyncio.to_thread(self._digests, root_names)
        indexed = unchanged = chunks = 0
        refused: list[str] = []
        seen: set[tuple[str, str]] = set()
        pending: list[_Prepared] = []
        pending_chunks = 0
        for raw, size, mtime_ns in paths:
            if size > MAX_FILE_BYTES:
                continue
            try:
                target = resolve_in_roots(raw, roots, must_exist=True)
                key = (str(target.root), target.relative)
                row = known.get(key)
                if row is not None and row[0] == size and row[1] == mtime_ns:
                    unchanged += 1
                    chunks += row[2]
                    seen.add(key)
                    continue
                prepared = await self._prepare(target, reader, size, mtime_ns, known_digests.get(key))
            except (PathRefused, OSError) as exc:
                refused.append(f"{raw}: {exc}")
                continue
            seen.add(key)
            if prepared.chunks is None:  # touched, same content
                unchanged += 1
                chunks += row[2] if row is not None else 0
            else:
                indexed += 1
                chunks += len(prepared.chunks)
                pending_chunks += len(prepared.chunks)
            pending.append(prepared)
            if pending_chunks >= FLUSH_CHUNKS or len(pending) >= FLUSH_FILES:
                await self._commit(pending)
                pending, pending_chunks = [], 0
        await self._commit(pending)
        removed = 0
        for root, rel in known:
            if (root, rel) not in seen:
                async with self._write:
                    await self._drop_file(root, rel)
                removed += 1
        return IndexStats(
            indexed=indexed, unchanged=unchanged, removed=removed, chunks=chunks, refused=tuple(refused)
        )

    # -- search -------------------------------------------------------------------------------------
    def _ensure_fts(self) -> None:
        """Fill the BM25 table from ``chunks`` once, for an index written before it existed (caller holds
        ``_lock``)."""
        if self._fts_checked:
            return
        empty = self._db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == 0
        if empty and self._db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
            self._db.execute("BEGIN IMMEDIATE")
            rows = self._db.execute("SELECT rowid, text FROM chunks").fetchall()
            self._db.executemany(
                "INSERT INTO chunks_fts(rowid, tokens) VALUES (?, ?)",
                [(rowid, " ".join(tokenize(text))) for rowid, text in rows],
            )
            self._db.execute("COMMIT")
        self._fts_checked = True

    async def search(
        self,
        query: str,
        roots: Sequence[Path],
        *,
        path: str | None = None,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
    ) -> list[DocHit]:
        """The best chunks for ``query`` within ``roots`` (or the one file ``path``), fused by RRF.

        One worker-thread hop per search: the vector query (under the Chroma lock), the BM25 query, the
        scope check of the vector candidates and the rows of the results all run in it, the SQLite reads
        under one hold of the connection's lock (only the query's embedding is awaited before it)."""
        root_names = [str(r.resolve()) for r in roots]
        if not root_names or not query.strip():
            return []
        if mode == "bm25":
            return await asyncio.to_thread(self._search_now, query, root_names, path, None, top_k, True)
        vec = await self.embedder.embed_one(query)
        bm25 = mode == "hybrid"
        return await self.vectors.in_thread(lambda: self._search_now(query, root_names, path, vec, top_k, bm25))

    def _search_now(self, query: str, roots: list[str], path: str | None, vec: list[float] | None,
                    top_k: int, bm25: bool) -> list[DocHit]:
        """The whole search, in the calling (worker) thread; ``vec`` needs the Chroma lock held."""
        found = self._vector_candidates(vec, roots, path) if vec is not None else []
        with self._lock:
            if bm25:
                self._ensure_fts()
            lexical = bm25_ids(self._db, query, roots, path, CANDIDATES) if bm25 else []
            vector = in_scope(self._db, found, roots, path) if vec is not None else []
            wide = len(found) >= CANDIDATES * VECTOR_OVERFETCH
            if vec is None or path is not None or len(vector) >= CANDIDATES or not wide:
                return fused(self._db, lexical, vector, top_k)
        # most candidates were another folder's: ask Chroma again with the roots' filter (rare, slower)
        assert vec is not None
        vector = [i for i, _ in self.vectors.nearest_now(vec, CANDIDATES, roots_where(roots))]
        with self._lock:
            return fused(self._db, lexical, vector, top_k)

    def _vector_candidates(self, vec: list[float], roots: list[str], path: str | None) -> list[str]:
        """Chroma applies a ``where`` by scanning the metadata of the whole collection (2 s at 190k chunks,
        against 3 ms without it): a search of whole roots asks for more candidates unfiltered and keeps
        those in scope (:func:`~cortex_lsp.memory.docranking.in_scope`); one file is asked for with its filter."""
        if path is None:
            return [i for i, _ in self.vectors.nearest_now(vec, CANDIDATES * VECTOR_OVERFETCH)]
        where = {"$and": [roots_where(roots), {"path": path}]}
        return [i for i, _ in self.vectors.nearest_now(vec, CANDIDATES, where)]

    def _clear_rows(self) -> None:
        with self._lock:
            # FTS5 keeps deleted terms in its segments until they merge: drop the table instead
            self._db.execute("DROP TABLE IF EXISTS chunks_fts")
            self._db.execute(FTS_SCHEMA)
            self._db.execute("DELETE FROM chunks")
            self._db.execute("DELETE FROM files")
            scrub_sqlite(self._db)

    async def reset(self) -> None:
        """Delete the whole index: the chunk text is scrubbed from docs.db, the vectors from Chroma."""
        async with self._write:
            await asyncio.to_thread(self._clear_rows)
            await self.vectors.clear()
            self._generation += 1
