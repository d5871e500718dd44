"""Semantic memory: facts about the user in Chroma, retrieved by relevance into each request.

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
    def __init__(self, collection: Any, embedder: Embedder) -> None:
        self.collection = collection
        self.embedder = embedder

    async def add(self, fact: str, *, session_id: str = "", source: str = "consolidation") -> str | None:
        """Store ``fact``; returns its id, or ``None`` when a near-duplicate already holds it."""
        fact = " ".join(fact.split()).strip()
        fid = fact_id(fact)
        vec = await self.embedder.embed_one(fact)
        nearest = await self._nearest(vec, 1)
        if nearest and nearest[0].id != fid and nearest[0].score >= NEAR_DUPLICATE:
            return None
        now = time.time()
        meta: dict[str, Any] = {"session_id": session_id, "source": source, "updated": now}
        await asyncio.to_thread(
            self.collection.upsert, ids=[fid], embeddings=[vec], documents=[fact], metadatas=[meta]
        )
        return fid

    async def add_many(self, facts: list[str], *, source: str = "import") -> list[str]:
        """Bulk insert (benchmarks, imports): one batched embedding call, no duplicate check."""
        if not facts:
            return []
        vectors = await self.embedder.embed(facts)
        ids = [fact_id(f) for f in facts]
        metas: list[dict[str, Any]] = [
            {"session_id": "", "source": source, "updated": time.time()} for _ in facts
        ]
        for start in range(0, len(facts), 1000):
            end = start + 1000
            await asyncio.to_thread(
                self.collection.upsert,
                ids=ids[start:end],
                embeddings=vectors[start:end],
                documents=facts[start:end],
                metadatas=metas[start:end],
            )
        return ids

    async def _nearest(self, vec: list[float], limit: int) -> list[StoredFact]:
        # One thread hop, no ``count()``: Chroma (>= 1.0) answers an empty collection or a limit above
        # the count with fewer results. The extra count cost a second hop + a Rust call per recall.
        res = await asyncio.to_thread(
            self.collection.query,
            query_embeddings=[vec],
            n_results=limit,
            include=["documents", "distances", "metadatas"],
        )
        if not res["ids"] or not res["ids"][0]:
            return []
        ids = res["ids"][0]
        docs = (res.get("documents") or [[]])[0] or []
        dists = (res.get("distances") or [[]])[0] or []
        metas = (res.get("metadatas") or [[]])[0] or []
        return [
            StoredFact(id=i, content=str(d), score=max(0.0, 1.0 - float(s)), metadata=dict(m or {}))
            for i, d, s, m in zip(ids, docs, dists, metas, strict=False)
        ]

    async def related(self, query: str, *, limit: int = 5, min_relevance: float = 0.0) -> list[StoredFact]:
        """Facts relevant to ``query`` (score = cosine similarity), best first."""
        if limit <= 0:
            return []
        vec = await self.embedder.embed_one(query)
        return [f for f in await self._nearest(vec, limit) if f.score >= min_relevance]

    async def all(self) -> list[StoredFact]:
        res = await asyncio.to_thread(self.collection.get, include=["documents", "metadatas"])
        return [
            StoredFact(id=i, content=str(d), score=1.0, metadata=dict(m or {}))
            for i, d, m in zip(
                res["ids"], res.get("documents") or [], res.get("metadatas") or [], strict=False
            )
        ]

    async def delete(self, fid: str) -> bool:
        found = await asyncio.to_thread(self.collection.get, ids=[fid])
        if not found["ids"]:
            return False
        await asyncio.to_thread(self.collection.delete, ids=[fid])
        return True
