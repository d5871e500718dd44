"""Chroma access: one shared client per store, and collections that never embed by themselves.

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
from cortex_lsp.models.base import ModelClient

_LOCK = threading.Lock()
# Process-wide by necessity: Chroma itself allows only one client per folder in a process.
_CLIENTS: dict[str, Any] = {}


def _client_key(settings: Settings) -> str:
    if settings.chroma_host:
        return f"http://{settings.chroma_host}:{settings.chroma_port}"
    return str((Path(settings.data_dir) / "chroma").resolve())


def get_chroma_client(settings: Settings) -> Any:
    """The shared Chroma client for ``settings``: embedded in ``data_dir/chroma``, or a server."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    key = _client_key(settings)
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            chroma_settings = ChromaSettings(anonymized_telemetry=False)
            if settings.chroma_host:
                client = chromadb.HttpClient(
                    host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings
                )
            else:
                Path(key).mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=key, settings=chroma_settings)
            _CLIENTS[key] = client
        return client


def release_chroma_client(settings: Settings) -> None:
    """Forget the shared client for ``settings`` (tests and reset use this before deleting a folder)."""
    with _LOCK:
        _CLIENTS.pop(_client_key(settings), None)


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
