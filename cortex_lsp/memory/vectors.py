"""Vectors in Chroma: ids, vectors and (for the document index) path metadata, never text.

The text of a fact, a tool sequence's task or a document chunk lives in our SQLite, where erasing it
is ours to guarantee. :meth:`VectorIndex.erase` makes a vector really gone: Chroma's delete leaves the
record in its log table and HNSW files, so the collection is rebuilt without it (the survivors are
copied into a fresh collection of the same name) and Chroma's files are scrubbed
(:func:`~cortex_lsp.memory.erase.scrub_chroma_files`). All Chroma calls of one store go through one
lock, so a scrub never runs beside a query.

A small collection (facts, tool sequences: at most :data:`EXACT_MAX` vectors) is searched exactly, over
all its vectors, not through Chroma's HNSW graph: the graph is approximate, and after a rebuild it was
seen to leave a fact unreachable, so the one fact that answered a question was never recalled (the
query's true nearest neighbour at similarity 0.58 missed for three at 0.38). The vectors are read from
Chroma once and kept until this index writes (or another process changes the count).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from cortex_lsp.memory.chroma import open_collection
from cortex_lsp.memory.erase import scrub_chroma_files

#: records per Chroma upsert/delete call: each call has a fixed cost, so a rebuild (forget) of 10k vectors in
#: batches of 5,000 took 1.6–3.0 s against 2.8–4.2 s in batches of 1,000; never above the client's own limit
BATCH = 5000
#: a small collection up to this many vectors is searched exactly (10k × 768 float32 = 30 MB, ~5 ms a query)
EXACT_MAX = 10_000
T = TypeVar("T")


@dataclass(frozen=True)
class LegacyRecord:
    """A record written by an older Cortex, with its text still in Chroma (moved out on open)."""

    id: str
    document: str
    metadata: dict[str, Any]


class VectorIndex:
    def __init__(
        self,
        client: Any,
        name: str,
        chroma_dir: Path | None,
        lock: asyncio.Lock,
        *,
        metadata: bool = False,
        small: bool = True,
    ) -> None:
        self.client = client
        self.name = name
        self.chroma_dir = chroma_dir
        self.lock = lock
        #: whether records carry metadata (the document index's root/path filters); facts and tasks don't
        self.metadata = metadata
        #: a small collection (facts, tasks) gets the denser HNSW graph (chroma.SMALL_HNSW)
        self.small = small
        #: opened on first use (in a worker thread: the vector process may still be starting)
        self._collection: Any = None
        self._batch = 0
        #: (ids, unit vectors) of a small collection for the exact search; None until read or after a write
        self._exact: tuple[list[str], Any] | None = None

    @property
    def collection(self) -> Any:
        """The Chroma collection, opened on first use (blocks until the vector process answers)."""
        if self._collection is None:
            self._collection = open_collection(self.client, self.name, small=self.small)
        return self._collection

    @collection.setter
    def collection(self, value: Any) -> None:
        self._collection = value

    @property
    def batch(self) -> int:
        """Records per upsert/delete call: :data:`BATCH`, or less when the client allows less."""
        if not self._batch:
            try:
                self._batch = max(1, min(BATCH, int(self.client.get_max_batch_size())))
            except Exception:  # a client without the call (or a server that does not answer it): the old size
                self._batch = 1000
        return self._batch

    async def upsert(
        self, ids: list[str], vectors: list[list[float]], metadatas: list[dict[str, Any]] | None = None
    ) -> None:
        async with self.lock:
            await asyncio.to_thread(self._upsert, ids, vectors, metadatas)

    def _upsert(self, ids: list[str], vectors: list[list[float]], metadatas: list[dict[str, Any]] | None) -> None:
        cached, self._exact = self._exact, None  # no cache while Chroma may hold only part of the write
        for start in range(0, len(ids), self.batch):
            end = start + self.batch
            if metadatas is None:
                self.collection.upsert(ids=ids[start:end], embeddings=vectors[start:end])
            else:
                self.collection.upsert(
                    ids=ids[start:end], embeddings=vectors[start:end], metadatas=metadatas[start:end]
                )
        if cached is not None and self.small:  # re-reading every vector after each new fact costs 0.7 s at 10k
            self._exact = _with_rows(cached, ids, vectors)

    async def query(
        self, vector: list[float], n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """``(id, cosine similarity)`` of the ``n`` nearest, best first."""
        return (await self.query_then(vector, n, lambda ids: None, where))[0]

    async def query_then(
        self,
        vector: list[float],
        n: int,
        lookup: Callable[[list[str]], T],
        where: dict[str, Any] | None = None,
    ) -> tuple[list[tuple[str, float]], T | None]:
        """:meth:`query`, then ``lookup(ids)`` (e.g. their text from SQLite) in the same thread hop."""
        if n <= 0:
            return [], None
        async with self.lock:
            return await asyncio.to_thread(self._query_then, vector, n, lookup, where)

    def _query_then(
        self, vector: list[float], n: int, lookup: Callable[[list[str]], T], where: dict[str, Any] | None
    ) -> tuple[list[tuple[str, float]], T | None]:
        found = self.nearest_now(vector, n, where)
        if not found:
            return [], None
        return found, lookup([i for i, _ in found])

    def nearest_now(self, vector: list[float], n: int, where: dict[str, Any] | None = None) -> list[tuple[str, float]]:
        """:meth:`query` in the calling thread: only inside :meth:`in_thread` (or under :attr:`lock`)."""
        if n <= 0:
            return []
        if self.small and where is None:
            exact = self._exact_vectors()
            if exact is not None:
                return _nearest_exact(exact, vector, n)
        res = self.collection.query(query_embeddings=[vector], n_results=n, where=where, include=["distances"])
        if not res["ids"] or not res["ids"][0]:
            return []
        dists = (res.get("distances") or [[]])[0] or []
        return [(i, max(0.0, 1.0 - float(d))) for i, d in zip(res["ids"][0], dists, strict=False)]

    def _exact_vectors(self) -> tuple[list[str], Any] | None:
        """All vectors of a small collection, normalised (None above :data:`EXACT_MAX`: HNSW then)."""
        count = int(self.collection.count())
        if count > EXACT_MAX:
            self._exact = None
            return None
        if self._exact is None or len(self._exact[0]) != count:  # another process may have added some
            found = self.collection.get(include=["embeddings"])
            ids = list(found["ids"])
            embeddings = found.get("embeddings")
            read = _with_rows(([], None), ids, embeddings) if ids and embeddings is not None else None
            self._exact = read or ([], None)
        return self._exact

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run ``work`` in one worker thread while holding the Chroma lock: for a caller that mixes
        :meth:`nearest_now` with its own SQLite reads in a single thread hop (a document search)."""
        async with self.lock:
            return await asyncio.to_thread(work)

    async def ids(self) -> list[str]:
        async with self.lock:
            return list((await asyncio.to_thread(lambda: self.collection.get(include=[])))["ids"])

    async def count(self) -> int:
        async with self.lock:
            return int(await asyncio.to_thread(lambda: self.collection.count()))

    async def delete(self, ids: Sequence[str]) -> None:
        """Chroma's own delete (the record stays in its files): for replacing a record, not for erasing."""
        if not ids:
            return
        async with self.lock:
            await asyncio.to_thread(self._delete, list(ids))

    def _delete(self, ids: list[str]) -> None:
        if self._exact is not None:
            gone = set(ids)
            keep = [k for k, i in enumerate(self._exact[0]) if i not in gone]
            self._exact = ([self._exact[0][k] for k in keep], self._exact[1][keep])
        for start in range(0, len(ids), self.batch):
            self.collection.delete(ids=ids[start : start + self.batch])

    async def erase(self, ids: Sequence[str]) -> None:
        """Make the vectors of ``ids`` gone from every file: rebuild the collection without them."""
        gone = set(ids)
        async with self.lock:
            await asyncio.to_thread(self._rebuild, gone, False)

    async def clear(self) -> None:
        """Erase every record (reset)."""
        async with self.lock:
            await asyncio.to_thread(self._rebuild, None, False)

    async def take_legacy_text(self) -> list[LegacyRecord]:
        """Move text an older Cortex stored in Chroma out: returns it, and rebuilds the collection without."""
        async with self.lock:
            probe = await asyncio.to_thread(lambda: self.collection.get(limit=1, include=["documents"]))
            if not any(d is not None for d in probe.get("documents") or []):
                return []  # collections are converted whole: one record without text means all are
            found = await asyncio.to_thread(lambda: self.collection.get(include=["documents", "metadatas"]))
            docs = found.get("documents") or [None] * len(found["ids"])
            metas = found.get("metadatas") or [None] * len(found["ids"])
            records = [
                LegacyRecord(i, str(d), dict(m or {}))
                for i, d, m in zip(found["ids"], docs, metas, strict=False)
                if d is not None
            ]
            if records:
                await asyncio.to_thread(self._rebuild, set(), True)
        return records

    def _rebuild(self, gone: set[str] | None, drop_text: bool) -> None:
        keep_ids: list[str] = []
        keep_vecs: list[list[float]] = []
        keep_meta: list[dict[str, Any]] = []
        if gone is not None:
            include = ["embeddings", "metadatas"] if self.metadata else ["embeddings"]
            found = self.collection.get(include=include)
            if not drop_text and not gone & set(found["ids"]):
                return
            embeddings = found.get("embeddings")
            metas = found.get("metadatas") or [None] * len(found["ids"])
            for i, rid in enumerate(found["ids"]):
                if rid in gone or embeddings is None:
                    continue
                keep_ids.append(rid)
                keep_vecs.append([float(x) for x in embeddings[i]])
                keep_meta.append(dict(metas[i] or {}))
        self._exact = None
        self.client.delete_collection(self.name)
        self.collection = open_collection(self.client, self.name, small=self.small)
        self._upsert(keep_ids, keep_vecs, keep_meta if self.metadata else None)
        if self.small and gone is not None and len(keep_ids) <= EXACT_MAX:  # the survivors are in hand
            self._exact = _with_rows(([], None), keep_ids, keep_vecs)
        if self.chroma_dir is not None:
            scrub_chroma_files(self.chroma_dir)


def _nearest_exact(exact: tuple[list[str], Any], vector: list[float], n: int) -> list[tuple[str, float]]:
    """``(id, cosine similarity)`` of the ``n`` nearest by a scan of every vector, best first (ties by id
    order, as stored)."""
    import numpy as np

    ids, unit = exact
    if not ids:
        return []
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    if unit.shape[1] != query.shape[0] or norm == 0.0:
        return []
    sims = unit @ (query / norm)
    k = min(n, len(ids))
    top = np.argpartition(-sims, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
    top = top[np.lexsort((top, -sims[top]))]
    return [(ids[i], max(0.0, float(sims[i]))) for i in top]


def _with_rows(
    exact: tuple[list[str], Any], ids: list[str], vectors: list[list[float]]
) -> tuple[list[str], Any] | None:
    """``exact`` with the rows of ``ids`` replaced or added (normalised); None (read again) when the
    dimensions differ or the result would pass :data:`EXACT_MAX`."""
    import numpy as np

    known, unit = exact
    if not ids:
        return exact if unit is not None else None
    raw = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    rows: Any = raw / np.where(norms == 0, 1.0, norms)
    if unit is None or not known:
        unit = np.zeros((0, rows.shape[1]), dtype=np.float32)
    if unit.shape[1] != rows.shape[1]:
        return None
    where = {i: k for k, i in enumerate(known)}
    out_ids = list(known)
    out = unit.copy()
    extra: list[int] = []
    for r, rid in enumerate(ids):
        k = where.get(rid)
        if k is None:
            where[rid] = len(out_ids)
            out_ids.append(rid)
            extra.append(r)
        else:
            out[k] = rows[r]
    if extra:
        out = np.vstack([out, rows[extra]])
    return (out_ids, out) if len(out_ids) <= EXACT_MAX else None
