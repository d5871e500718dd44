"""Vectors in Chroma: ids, vectors and (for the document index) path metadata, never text.

The text of a fact, a tool sequence's task or a document chunk lives in our SQLite, where erasing it
is ours to guarantee. :meth:`VectorIndex.erase` makes a vector really gone: Chroma's delete leaves the
record in its log table and HNSW files, so the collection is rebuilt without it (the survivors are
copied into a fresh collection of the same name) and Chroma's files are scrubbed
(:func:`~cortex_lsp.memory.erase.scrub_chroma_files`). All Chroma calls of one store go through one
lock, so a scrub never runs beside a query.
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
        self.collection: Any = open_collection(client, name, small=small)
        try:
            self.batch = max(1, min(BATCH, int(client.get_max_batch_size())))
        except Exception:  # a client without the call (or a server that does not answer it): the old size
            self.batch = 1000

    async def upsert(
        self, ids: list[str], vectors: list[list[float]], metadatas: list[dict[str, Any]] | None = None
    ) -> None:
        async with self.lock:
            await asyncio.to_thread(self._upsert, ids, vectors, metadatas)

    def _upsert(self, ids: list[str], vectors: list[list[float]], metadatas: list[dict[str, Any]] | None) -> None:
        for start in range(0, len(ids), self.batch):
            end = start + self.batch
            if metadatas is None:
                self.collection.upsert(ids=ids[start:end], embeddings=vectors[start:end])
            else:
                self.collection.upsert(
                    ids=ids[start:end], embeddings=vectors[start:end], metadatas=metadatas[start:end]
                )

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
        res = self.collection.query(query_embeddings=[vector], n_results=n, where=where, include=["distances"])
        if not res["ids"] or not res["ids"][0]:
            return []
        dists = (res.get("distances") or [[]])[0] or []
        return [(i, max(0.0, 1.0 - float(d))) for i, d in zip(res["ids"][0], dists, strict=False)]

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run ``work`` in one worker thread while holding the Chroma lock: for a caller that mixes
        :meth:`nearest_now` with its own SQLite reads in a single thread hop (a document search)."""
        async with self.lock:
            return await asyncio.to_thread(work)

    async def ids(self) -> list[str]:
        async with self.lock:
            return list((await asyncio.to_thread(self.collection.get, include=[]))["ids"])

    async def count(self) -> int:
        async with self.lock:
            return int(await asyncio.to_thread(self.collection.count))

    async def delete(self, ids: Sequence[str]) -> None:
        """Chroma's own delete (the record stays in its files): for replacing a record, not for erasing."""
        if not ids:
            return
        async with self.lock:
            for start in range(0, len(ids), self.batch):
                await asyncio.to_thread(self.collection.delete, ids=list(ids[start : start + self.batch]))

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
            probe = await asyncio.to_thread(self.collection.get, limit=1, include=["documents"])
            if not any(d is not None for d in probe.get("documents") or []):
                return []  # collections are converted whole: one record without text means all are
            found = await asyncio.to_thread(self.collection.get, include=["documents", "metadatas"])
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
        self.client.delete_collection(self.name)
        self.collection = open_collection(self.client, self.name, small=self.small)
        self._upsert(keep_ids, keep_vecs, keep_meta if self.metadata else None)
        if self.chroma_dir is not None:
            scrub_chroma_files(self.chroma_dir)
