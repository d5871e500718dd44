"""A small collection (facts, tool sequences) is searched exactly: every query's nearest stored vector is
found, also after a forget rebuilt the collection. Chroma's HNSW graph is approximate; in a CI run it
left the one fact that answered "bees rooftop Porto" unreachable (tests/memory/test_memory_erase.py).
Real Chroma in a temporary folder; sparse bag-of-words vectors, the shape that defeats the graph."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings

from cortex_lsp.memory import vectors
from cortex_lsp.memory.vectors import VectorIndex
from tests.memory.test_memory_erase import filler
from tests.scripted_model import embed_text


def _index(folder: Path) -> VectorIndex:
    client = chromadb.PersistentClient(path=str(folder), settings=ChromaSettings(anonymized_telemetry=False))
    return VectorIndex(client, "cortex_facts_test", folder, asyncio.Lock(), small=True)


def _queries(texts: list[str], n: int) -> list[str]:
    rng = random.Random(7)
    words = sorted({w for t in texts for w in t.split() if w[-1].isdigit()})
    return [" ".join(rng.sample(words, 3)) for _ in range(n)]


def _best_exact(ids: list[str], vecs: np.ndarray, query: list[float]) -> float:
    q = np.asarray(query)
    return float(np.max(vecs @ q / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(q))))


async def test_every_query_finds_its_nearest_fact_after_a_rebuild(tmp_path: Path) -> None:
    texts = [*filler(1200, "visited"), "The user keeps bees on a rooftop in Porto"]
    ids = [f"fact-{i}" for i in range(len(texts))]
    embedded = [embed_text(t) for t in texts]
    index = _index(tmp_path / "chroma")
    await index.upsert(ids, embedded)
    await index.erase(["fact-3"])  # a forget: the collection is rebuilt from the survivors
    kept_ids = [i for i in ids if i != "fact-3"]
    kept = np.asarray([v for i, v in zip(ids, embedded, strict=True) if i != "fact-3"])
    missed = []
    for query in [*_queries(texts, 300), "bees rooftop Porto"]:
        vec = embed_text(query)
        found = await index.query(vec, 3)
        best = _best_exact(kept_ids, kept, vec)
        if not found or found[0][1] < best - 1e-5:
            missed.append((query, best, found[:1]))
    assert missed == [], f"{len(missed)} queries did not get their nearest fact: {missed[:3]}"
    assert "fact-3" not in {i for i, _ in await index.query(embedded[3], 5)}


async def test_the_exact_search_follows_writes(tmp_path: Path) -> None:
    index = _index(tmp_path / "chroma")
    await index.upsert(["a", "b"], [embed_text("alpha beta"), embed_text("gamma delta")])
    assert [i for i, _ in await index.query(embed_text("gamma"), 1)] == ["b"]
    await index.upsert(["c"], [embed_text("gamma epsilon zeta")])  # a new, nearer fact is seen at once
    assert index._exact is not None and len(index._exact[0]) == 3  # kept current, not read again
    assert [i for i, _ in await index.query(embed_text("gamma epsilon"), 1)] == ["c"]
    await index.upsert(["a"], [embed_text("gamma epsilon zeta eta")])  # a replaced vector, same id
    assert [i for i, _ in await index.query(embed_text("gamma epsilon zeta eta"), 1)] == ["a"]
    await index.erase(["c"])
    assert index._exact is not None and sorted(index._exact[0]) == ["a", "b"]
    assert [i for i, _ in await index.query(embed_text("gamma delta"), 2)] == ["b", "a"]
    await index.delete(["b"])
    assert index._exact is not None and index._exact[0] == ["a"]
    assert [i for i, _ in await index.query(embed_text("gamma epsilon"), 2)] == ["a"]
    assert await index.query(embed_text("gamma"), 0) == []


async def test_above_the_exact_limit_the_graph_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "EXACT_MAX", 2)
    index = _index(tmp_path / "chroma")
    await index.upsert(["a", "b", "c"], [embed_text("alpha"), embed_text("beta"), embed_text("gamma")])
    assert [i for i, _ in await index.query(embed_text("beta"), 1)] == ["b"]
    assert index._exact is None  # the HNSW query answered
