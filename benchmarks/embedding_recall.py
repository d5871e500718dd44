"""Embedding recall: document search hit@1 / hit@3 with the embedded default's embedding models.

Compares, over the labelled set in tests/memory/data (exact identifiers and error messages) and a
paraphrase set below (the same corpus, asked in other words than the documents use):

- ``onnx``: all-MiniLM-L6-v2 int8 ONNX in process (:mod:`cortex_lsp.models.onnx_embedder`),
- ``chat``: the chat model's own embeddings (SmolLM2-135M through the embedded llama.cpp server),
- ``bm25``: keywords only (no embeddings).

Each embedder is measured vectors-only and hybrid (BM25 + vectors). Real SQLite and Chroma in a
temporary folder. Needs the packaged embedder and, for ``chat``, the embedded model (``scripts/setup.sh``).

    .venv/bin/python benchmarks/embedding_recall.py [--skip-chat]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cortex_lsp.config import Settings  # noqa: E402
from cortex_lsp.memory.chroma import release_chroma_client  # noqa: E402
from cortex_lsp.memory.docindex import SearchMode  # noqa: E402
from cortex_lsp.memory.store import PersistentMemory  # noqa: E402
from cortex_lsp.models.base import ChatChunk, ModelClient, ModelError  # noqa: E402
from cortex_lsp.models.local_server import (  # noqa: E402
    EmbeddedModelClient,
    LocalModelServer,
    LocalServerConfig,
    find_local_model,
)
from cortex_lsp.models.onnx_embedder import OnnxEmbedder, packaged_embedder  # noqa: E402

DATA = ROOT / "tests" / "memory" / "data"

#: the labelled corpus asked in other words than the documents use: (query, path, gold line)
PARAPHRASES: list[dict[str, str]] = [
    {"query": "the disk that holds queued changes has run out of room",
     "path": "docs/errors.md", "line": "## HB-2001 spool folder full"},
    {"query": "our machine does not trust the server's TLS identity",
     "path": "docs/errors.md", "line": "## HB-1002 certificate rejected"},
    {"query": "the computer's time is wrong so signed calls are refused",
     "path": "docs/errors.md", "line": "## ERR_CLOCK_SKEW"},
    {"query": "we used up the daily limit of writes",
     "path": "docs/errors.md", "line": "## ERR_QUOTA_EXCEEDED"},
    {"query": "how do I undo an upgrade and go back to the old release",
     "path": "docs/deploy.md", "line": "## Rolling back"},
    {"query": "where does the secret credential for a new location go",
     "path": "docs/deploy.md", "line": "## Register the site"},
    {"query": "how often does the service wake up to do its work",
     "path": "README.md", "line": "## Running the daemon"},
    {"query": "which interpreter version is required to install it",
     "path": "README.md", "line": "## Installation"},
    {"query": "who do we call when a location looks unhealthy for a long time",
     "path": "docs/ops_notes.txt",
     "line": "If a site shows a red badge for more than an hour, page the on-call engineer."},
    {"query": "the central server cannot be contacted over the network",
     "path": "docs/errors.md", "line": "## HB-1001 ledger unreachable"},
    {"query": "a damaged entry in the queue that cannot be decoded",
     "path": "docs/errors.md", "line": "## HB-2002 spool record corrupt"},
    {"query": "how long to wait between tries, growing each time",
     "path": "docs/sync_engine.py", "line": "def compute_backoff(attempt, base=2.0, ceiling=300.0):"},
]


class OnnxOnly:
    """A model client that only embeds, with the in-process ONNX embedder."""

    backend = "onnx"

    def __init__(self, embedder: OnnxEmbedder) -> None:
        self.embedder = embedder

    async def chat_stream(self, messages: Sequence[Any], **_: Any) -> AsyncIterator[ChatChunk]:
        raise ModelError("this client only embeds")
        yield ChatChunk()  # pragma: no cover

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        return await self.embedder.embed(texts)

    async def list_models(self) -> list[str]:
        return [self.embedder.name]

    async def version(self) -> str:
        return "onnxruntime"

    async def aclose(self) -> None:
        return None


async def rates(client: ModelClient, embed_model: str, tmp: Path, cases: dict[str, list[dict[str, str]]],
                modes: tuple[SearchMode, ...]) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(set, mode): (hit@1, hit@3)}`` for one embedder."""
    folder = tmp / embed_model
    root = folder / "ws"
    shutil.copytree(DATA / "doc_corpus", root)
    settings = Settings.model_validate({"data_dir": folder / "data", "embed_model": embed_model})
    memory = await PersistentMemory(settings, client).open()
    started = time.perf_counter()
    await memory.doc_index.index_workspace([root])
    print(f"  {embed_model}: indexed in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    out: dict[tuple[str, str], tuple[float, float]] = {}
    try:
        for set_name, items in cases.items():
            for mode in modes:
                at1 = at3 = 0
                for case in items:
                    lines = (root / case["path"]).read_bytes().decode().replace("\r\n", "\n").split("\n")
                    line_no = lines.index(case["line"]) + 1
                    found = await memory.doc_index.search(case["query"], [root], top_k=3, mode=mode)
                    hits = [h.path == case["path"] and h.start_line <= line_no <= h.end_line for h in found]
                    at1 += bool(hits[:1] and hits[0])
                    at3 += any(hits)
                out[(set_name, mode)] = (at1 / len(items), at3 / len(items))
    finally:
        await memory.aclose()
        release_chroma_client(settings)
    return out


async def main(skip_chat: bool) -> None:
    cases = {"labelled": json.loads((DATA / "doc_queries.json").read_text()), "paraphrase": PARAPHRASES}
    embedder = packaged_embedder()
    if embedder is None:
        raise SystemExit("the packaged embedder is not installed: run scripts/setup.sh")
    table: dict[str, dict[tuple[str, str], tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        onnx = await rates(OnnxOnly(embedder), embedder.name, tmp, cases, ("vector", "hybrid", "bm25"))
        table["bm25 (keywords only)"] = {k: v for k, v in onnx.items() if k[1] == "bm25"}
        table[f"{embedder.name} (ONNX)"] = {k: v for k, v in onnx.items() if k[1] != "bm25"}
        model_path = find_local_model(None)
        if not skip_chat and model_path is not None:
            server = await LocalModelServer(LocalServerConfig(model_path=model_path, embeddings=True)).start()
            client = EmbeddedModelClient(server)
            try:
                chat = await rates(client, client.embed_model, tmp, cases, ("vector", "hybrid"))
            finally:
                await client.aclose()
            table[f"{client.embed_model} (chat model)"] = chat
    print("| embeddings | search | labelled hit@1 | labelled hit@3 | paraphrase hit@1 | paraphrase hit@3 |")
    print("|---|---|---|---|---|---|")
    for name, values in table.items():
        for mode in ("vector", "hybrid", "bm25"):
            if ("labelled", mode) in values:
                lab, par = values[("labelled", mode)], values[("paraphrase", mode)]
                print(f"| {name} | {mode} | {lab[0]:.2f} | {lab[1]:.2f} | {par[0]:.2f} | {par[1]:.2f} |")
    print(f"\n{len(cases['labelled'])} labelled queries, {len(cases['paraphrase'])} paraphrase queries")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-chat", action="store_true", help="don't start the embedded chat model")
    asyncio.run(main(parser.parse_args().skip_chat))
