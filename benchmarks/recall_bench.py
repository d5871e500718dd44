"""Semantic recall at 1k / 10k / 50k facts: Cortex's ``SemanticMemory.related`` vs Chroma's own
``collection.query`` on the same collection with the same query vector.

Facts are embedded directly with the scripted embedder (``tests.scripted_model.embed_text``) and
added in batches to the store's collection, so loading 50k facts is bounded by Chroma, not HTTP.
The query's embedding is cached in the store's embedder first, so both sides measure retrieval; the
end-to-end figure (query embedded over HTTP by the scripted model process) is reported as well.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Row, med, ms, pct
from benchmarks.model_proc import ModelProcess
from cortex_lsp.config import Settings
from cortex_lsp.memory.chroma import release_chroma_client
from cortex_lsp.memory.semantic import SemanticMemory, fact_id
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.memory.texts import FactText
from cortex_lsp.models.ollama_client import OllamaClient
from tests.scripted_model import embed_text

SUBJECTS = ["prefers", "uses", "likes", "works with", "is learning", "avoids", "maintains", "writes"]
OBJECTS = ["Python", "Rust", "Go", "TypeScript", "tea", "coffee", "Vim", "Emacs", "Linux", "macOS",
           "PostgreSQL", "SQLite", "Docker", "jazz", "chess", "cycling", "Berlin"]
INCLUDE = ["documents", "distances", "metadatas"]


def _fact(i: int, rng: random.Random) -> str:
    return f"The user {rng.choice(SUBJECTS)} {rng.choice(OBJECTS)} for project {i} on team {rng.randint(1, 400)}"


def _embed_all(facts: list[str]) -> list[list[float]]:
    return [embed_text(f) for f in facts]


async def _fill(semantic: SemanticMemory, start: int, end: int, rng: random.Random) -> None:
    """Store facts as the store does (text in SQLite, vector in Chroma), embedded in-process."""
    for lo in range(start, end, 2000):
        facts = [_fact(i, rng) for i in range(lo, min(end, lo + 2000))]
        ids = [fact_id(f) + f"-{lo + k}" for k, f in enumerate(facts)]
        await semantic.texts.put([FactText(i, f, "", "bench", 0.0) for i, f in zip(ids, facts, strict=True)])
        await semantic.index.upsert(ids, await asyncio.to_thread(_embed_all, facts))


async def recall(sizes: list[int], queries: int, load_budget_s: float, plot: Path | None) -> tuple[Row, dict[str, Any]]:
    rng = random.Random(11)
    curve: dict[str, Any] = {"size": [], "cortex": [], "chroma": [], "e2e": [], "load_s": []}
    with ModelProcess() as model, tempfile.TemporaryDirectory() as folder:
        settings = Settings.model_validate({"data_dir": Path(folder) / "data", "ollama_base_url": model.url})
        client = OllamaClient(model.url)
        memory = await PersistentMemory(settings, client).open()
        collection = memory.semantic.collection
        stored = 0
        load_total = 0.0
        try:
            for size in sizes:
                t0 = time.perf_counter()
                await _fill(memory.semantic, stored, size, rng)
                load_total += time.perf_counter() - t0
                stored = size
                qs = [f"What does the user think of {rng.choice(OBJECTS)} on project {rng.randint(0, size)}?"
                      for _ in range(queries)]
                cortex: list[float] = []
                chroma: list[float] = []
                e2e: list[float] = []
                for q in qs:
                    t = time.perf_counter()
                    await memory.semantic.related(q, limit=5)  # first time: embedded over HTTP
                    e2e.append((time.perf_counter() - t) * 1000)
                    vec = await memory.embedder.embed_one(q)
                    t = time.perf_counter()
                    collection.query(query_embeddings=[vec], n_results=5, include=INCLUDE)
                    chroma.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    found = await memory.semantic.related(q, limit=5)  # cached embedding: retrieval only
                    cortex.append((time.perf_counter() - t) * 1000)
                    assert found
                curve["size"].append(size)
                curve["cortex"].append((med(cortex), pct(cortex, 0.99)))
                curve["chroma"].append((med(chroma), pct(chroma, 0.99)))
                curve["e2e"].append((med(e2e), pct(e2e, 0.99)))
                curve["load_s"].append(load_total)
                if load_total > load_budget_s:
                    break
        finally:
            await memory.aclose()
            await client.aclose()
            release_chroma_client(settings)
    if plot is not None:
        _plot(curve, plot)
    parts = [f"{s // 1000}k: {ms(c[0])}/{ms(c[1])}" for s, c in zip(curve["size"], curve["cortex"], strict=True)]
    refs = [f"{s // 1000}k: {ms(c[0])}/{ms(c[1])}" for s, c in zip(curve["size"], curve["chroma"], strict=True)]
    ratios = [c[0] / h[0] for c, h in zip(curve["cortex"], curve["chroma"], strict=True)]
    missing = [s for s in sizes if s not in curve["size"]]
    note = f"not reached in the load time box: {missing}" if missing else ""
    row = Row("semantic recall (top 5) at " + " / ".join(f"{s // 1000}k" for s in curve["size"]) + " facts",
              "; ".join(parts), "Chroma `query`: " + "; ".join(refs), " / ".join(f"{r:.2f}×" for r in ratios),
              "≤ 1.3×; plot vs size", all(r <= 1.3 for r in ratios) and not missing, note=note, raw=curve)
    return row, curve


def _plot(curve: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (("cortex", "Cortex SemanticMemory.related"), ("chroma", "Chroma collection.query"),
                       ("e2e", "Cortex incl. query embedding (HTTP)")):
        ax.plot(curve["size"], [v[0] for v in curve[key]], marker="o", label=f"{label} (median)")
    ax.set_xscale("log")
    ax.set_xlabel("facts stored")
    ax.set_ylabel("latency (ms)")
    ax.set_title("Semantic recall latency vs facts stored")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
