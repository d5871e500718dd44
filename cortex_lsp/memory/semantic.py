"""Semantic memory: facts about the user, retrieved by relevance into each request.

The fact's text lives in SQLite (:class:`~cortex_lsp.memory.texts.FactTexts`), its vector in Chroma
(:class:`~cortex_lsp.memory.vectors.VectorIndex`, ids and vectors only); forgetting a fact deletes and
scrubs both.

Facts are keyed by their normalised content (``fact-<sha1>``), so relearning a fact updates it; a fact
that is a near-duplicate of one already stored (cosine ≥ :data:`NEAR_DUPLICATE`) is not added again.
What may be learned at all is decided in :mod:`cortex_lsp.memory.consolidation`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from dataclasses import dataclass
from typing import Any

from cortex_lsp.memory.chroma import Embedder
from cortex_lsp.memory.texts import FactText, FactTexts
from cortex_lsp.memory.vectors import VectorIndex

NEAR_DUPLICATE = 0.92


def normalise_fact(text: str) -> str:
    text = " ".join(text.split()).strip().rstrip(".!").strip()
    return re.sub(r"\s+", " ", text.lower())


def fact_id(text: str) -> str:
    return "fact-" + hashlib.sha1(normalise_fact(text).encode()).hexdigest()


@dataclass(frozen=True)
class StoredFact:
    id: str
    content: str
    score: float
    metadata: dict[str, Any]


class SemanticMemory:
    def __init__(self, index: VectorIndex, texts: FactTexts, embedder: Embedder) -> None:
        self.index = index
        self.texts = texts
        self.embedder = embedder
        self._pending: set[asyncio.Future[Any]] = set()  # query embeddings left to finish (:meth:`related`)

    @property
    def collection(self) -> Any:
        """The Chroma collection of the vectors (benchmarks)."""
        return self.index.collection

    async def add(self, fact: str, *, session_id: str = "", source: str = "consolidation") -> str | None:
        """Store ``fact``; returns its id, or ``None`` when a near-duplicate already holds it."""
        fact = " ".join(fact.split()).strip()
        fid = fact_id(fact)
        vec = await self.embedder.embed_one(fact)
        nearest = await self._nearest(vec, 1)
        if nearest and nearest[0].id != fid and nearest[0].score >= NEAR_DUPLICATE:
            return None
        await self.texts.put([FactText(fid, fact, session_id, source, time.time())])
        await self.index.upsert([fid], [vec])
        return fid

    async def add_many(self, facts: list[str], *, source: str = "import") -> list[str]:
        """Bulk insert (benchmarks, imports): one batched embedding call, no duplicate check."""
        if not facts:
            return []
        vectors = await self.embedder.embed(facts)
        ids = [fact_id(f) for f in facts]
        now = time.time()
        await self.texts.put([FactText(i, f, "", source, now) for i, f in zip(ids, facts, strict=True)])
        await self.index.upsert(ids, vectors)
        return ids

    async def _nearest(self, vec: list[float], limit: int) -> list[StoredFact]:
        found, rows = await self.index.query_then(vec, limit, self.texts.get_now)
        if not found or rows is None:
            return []
        return [
            StoredFact(id=i, content=rows[i].content, score=score, metadata=rows[i].metadata)
            for i, score in found
            if i in rows
        ]

    def _background(self, task: asyncio.Future[Any]) -> None:
        """Let ``task`` finish unawaited (kept referenced; its failure, if any, is read and dropped)."""
        def done(t: asyncio.Future[Any]) -> None:
            self._pending.discard(t)
            if not t.cancelled():
                t.exception()

        self._pending.add(task)
        task.add_done_callback(done)

    async def related(self, query: str, *, limit: int = 5, min_relevance: float = 0.0) -> list[StoredFact]:
        """Facts relevant to ``query`` (score = cosine similarity), best first."""
        if limit <= 0:
            return []
        # The query's embedding and the count side by side: with no fact stored (a new user, or memory
        # that learned nothing yet) the answer is known without waiting for the embedding model. The
        # embedding still finishes in the background (the embedder caches it). The count is SQLite's (a
        # fact's text is written before its vector): no call to the vector process.
        embedding = asyncio.ensure_future(self.embedder.embed_one(query))
        try:
            if await self.texts.count() == 0:
                self._background(embedding)
                return []
        except BaseException:
            self._background(embedding)
            raise
        vec = await embedding
        return [f for f in await self._nearest(vec, limit) if f.score >= min_relevance]

    async def all(self) -> list[StoredFact]:
        return [
            StoredFact(id=r.id, content=r.content, score=1.0, metadata=r.metadata)
            for r in (await self.texts.get()).values()
        ]

    async def delete(self, fid: str) -> bool:
        """Forget one fact: its text and its vector are erased from every file."""
        return bool(await self.delete_many([fid]))

    async def delete_many(self, ids: list[str]) -> list[str]:
        """Forget facts: their texts go in one transaction and one scrub, their vectors in one rebuild of
        the collection (a rebuild re-inserts every survivor: per id, forgetting k facts cost k rebuilds)."""
        found = await self.texts.delete_many(ids)
        if found:
            await self.index.erase(found)
        return found

