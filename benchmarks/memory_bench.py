"""Memory benchmark: fact-recall latency over 10,000 stored facts (median, p95), and document-search
hit@3 of hybrid vs vectors-only vs BM25-only on the labelled set in tests/memory/data.

Real Chroma and SQLite in a temporary folder; embeddings from the scripted model server over HTTP
(a hashed bag of words, so the numbers measure the store and the plumbing, not a real embedder).

    .venv/bin/python benchmarks/memory_bench.py [--facts 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_lsp.config import Settings  # noqa: E402
from cortex_lsp.memory.chroma import release_chroma_client  # noqa: E402
from cortex_lsp.memory.docindex import SearchMode  # noqa: E402
from cortex_lsp.memory.store import PersistentMemory  # noqa: E402
from cortex_lsp.models.ollama_client import OllamaClient  # noqa: E402
from tests.scripted_model import ScriptedModelServer  # noqa: E402

SUBJECTS = ["prefers", "uses", "likes", "works with", "is learning", "avoids", "maintains", "writes", "reads"]
OBJECTS = ["Python", "Rust", "Go", "TypeScript", "tea", "coffee", "Vim", "Emacs", "bullet points",
           "short answers", "Linux", "macOS", "PostgreSQL", "SQLite", "Kubernetes", "Docker", "jazz", "chess",
           "cycling", "Berlin"]


def make_facts(n: int, rng: random.Random) -> list[str]:
    return [f"The user {rng.choice(SUBJECTS)} {rng.choice(OBJECTS)} for project {i} "
            f"on team {rng.randint(1, 400)}" for i in range(n)]


async def doc_hit_rates(memory: PersistentMemory, tmp: Path) -> dict[str, float]:
    data = ROOT / "tests" / "memory" / "data"
    root = tmp / "ws"
    shutil.copytree(data / "doc_corpus", root)
    await memory.doc_index.index_workspace([root])
    cases = json.loads((data / "doc_queries.json").read_text())
    rates: dict[str, float] = {}
    modes: tuple[SearchMode, ...] = ("hybrid", "vector", "bm25")
    for mode in modes:
        hits = 0
        for case in cases:
            lines = (root / case["path"]).read_bytes().decode().replace("\r\n", "\n").split("\n")
            line_no = lines.index(case["line"]) + 1
            found = await memory.doc_index.search(case["query"], [root], top_k=3, mode=mode)
            hits += any(h.path == case["path"] and h.start_line <= line_no <= h.end_line for h in found)
        rates[mode] = hits / len(cases)
    return rates


async def main(n_facts: int, n_queries: int) -> None:
    rng = random.Random(7)
    with ScriptedModelServer() as server, tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        settings = Settings.model_validate({"data_dir": tmp / "data", "ollama_base_url": server.url})
        client = OllamaClient(server.url)
        memory = await PersistentMemory(settings, client).open()
        started = time.perf_counter()
        await memory.semantic.add_many(make_facts(n_facts, rng))
        load = time.perf_counter() - started
        queries = [f"What does the user think of {rng.choice(OBJECTS)} on project {rng.randint(0, n_facts)}?"
                   for _ in range(n_queries)]
        end_to_end: list[float] = []
        store_only: list[float] = []
        for query in queries:
            t0 = time.perf_counter()
            facts = await memory.related_facts(query, limit=5)
            end_to_end.append((time.perf_counter() - t0) * 1000)
            assert facts
            vec = await memory.embedder.embed_one(query)  # cached now: measures Chroma alone
            t0 = time.perf_counter()
            await memory.semantic._nearest(vec, 5)
            store_only.append((time.perf_counter() - t0) * 1000)
        rates = await doc_hit_rates(memory, tmp)
        await memory.aclose()
        await client.aclose()
        release_chroma_client(settings)

    def pct(values: list[float], q: float) -> float:
        return sorted(values)[min(len(values) - 1, int(q * len(values)))]

    print(f"facts stored: {n_facts} in {load:.1f} s (batched embeddings + Chroma upserts)")
    print(f"recall (embed query over HTTP + Chroma top-5), {n_queries} queries: "
          f"median {statistics.median(end_to_end):.2f} ms, p95 {pct(end_to_end, 0.95):.2f} ms")
    print(f"recall (Chroma top-5 only): median {statistics.median(store_only):.2f} ms, "
          f"p95 {pct(store_only, 0.95):.2f} ms")
    print("doc_search hit@3 on tests/memory/data/doc_queries.json: "
          + ", ".join(f"{mode} {rate:.2f}" for mode, rate in rates.items()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.facts, args.queries))
