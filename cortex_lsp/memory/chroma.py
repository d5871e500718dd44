"""Chroma access: one shared client per store, and collections that never embed by themselves.

Chroma runs in a process of its own (:mod:`cortex_lsp.memory.vector_process`: its native code holds
the GIL for seconds and its import costs seconds); this process keeps stand-ins for its clients.
Opening two ``PersistentClient`` s on one folder in one process corrupts reads ("hnsw segment reader"
errors), so :func:`get_chroma_client` hands out one client per resolved path (or per host:port when
``chroma_host`` points at a Chroma server). Collections are always created with
``embedding_function=None``: Chroma's default embedder downloads a model at run time; every vector
here comes from the model client (:class:`Embedder`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.memory.vector_process import RemoteClient, VectorProcess, VectorStoreError
from cortex_lsp.models.base import ModelClient

_LOCK = threading.Lock()
# Process-wide by necessity: Chroma itself allows only one client per folder in a process, and one
# vector process serves them all.
_CLIENTS: dict[str, Any] = {}
_PROCESS: list[VectorProcess] = []


def _client_key(settings: Settings) -> str:
    if settings.chroma_host:
        return f"http://{settings.chroma_host}:{settings.chroma_port}"
    return str((Path(settings.data_dir) / "chroma").resolve())


def vector_process() -> VectorProcess:
    """This process's vector process (created, not yet started, on first use)."""
    with _LOCK:
        if not _PROCESS:
            _PROCESS.append(VectorProcess())
        return _PROCESS[0]


def start_vector_process() -> None:
    """Start the vector process now: it imports Chroma while this process does other things."""
    vector_process().start()


def get_chroma_client(settings: Settings) -> Any:
    """The shared Chroma client for ``settings``: embedded in ``data_dir/chroma``, or a server; it lives
    in the vector process. Blocks until that process has started (call it from a worker thread)."""
    key = _client_key(settings)
    spec: dict[str, Any] = ({"host": settings.chroma_host, "port": settings.chroma_port} if settings.chroma_host
                            else {"path": key})
    process = vector_process()
    with _LOCK:
        client = _CLIENTS.get(key)
    if client is None:
        client = RemoteClient(process, key, spec)
        with _LOCK:
            client = _CLIENTS.setdefault(key, client)
    return client


def release_chroma_client(settings: Settings) -> None:
    """Forget the shared client for ``settings`` (tests and reset use this before deleting a folder)."""
    key = _client_key(settings)
    with _LOCK:
        known = _CLIENTS.pop(key, None)
    if known is not None and known.process.pid is not None:  # never started for this
        try:
            known.call("release")
        except VectorStoreError:
            pass


def close_vector_process() -> None:
    """End the vector process (at shutdown); a later store starts a new one."""
    with _LOCK:
        _CLIENTS.clear()
        process = _PROCESS.pop() if _PROCESS else None
    if process is not None:
        process.close()


def collection_name(kind: str, embed_model: str) -> str:
    """``cortex_<kind>_<model>``: vectors of different embedding models never share a collection."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", embed_model).strip("-").lower()[:40] or "default"
    return f"cortex_{kind}_{slug}"


#: A denser HNSW graph for the small collections (facts, tool sequences): a collection rebuilt by a
#: forget was measured to lose an outlier fact from the default graph (16 links, ef 100) in 5 of 35
#: rebuilds of 1,100 facts; with these settings in none of 45.
SMALL_HNSW: dict[str, Any] = {"space": "cosine", "ef_construction": 200, "max_neighbors": 32}


def open_collection(client: Any, name: str, *, small: bool = False) -> Any:
    """A cosine-space collection that takes embeddings only from us (``small``: the denser graph).

    The configuration applies when the collection is created; an existing one keeps its own.
    """
    hnsw = SMALL_HNSW if small else {"space": "cosine"}
    return client.get_or_create_collection(name, embedding_function=None, configuration={"hnsw": hnsw})


class Embedder:
    """Embeddings through the model client, in batches, with a small per-instance cache."""

    def __init__(
        self, client: ModelClient, model: str, *, batch_size: int = 64, cache_size: int = 2048
    ) -> None:
        self.client = client
        self.model = model
        self.batch_size = batch_size
        self._cache: dict[str, list[float]] = {}
        self._cache_size = cache_size

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        found = {t: self._cache[t] for t in texts if t in self._cache}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = await self.client.embed(batch, model=self.model)
            if len(vectors) != len(batch):
                raise ValueError(
                    f"the embedding model returned {len(vectors)} vectors for {len(batch)} texts"
                )
            for text, vec in zip(batch, vectors, strict=True):
                found[text] = vec
                if len(self._cache) >= self._cache_size:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[text] = vec
        return [found[t] for t in texts]

    def clear_cache(self) -> None:
        self._cache.clear()

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]
