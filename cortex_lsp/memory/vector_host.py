"""The vector process: runs Chroma for the server (``python -P -m cortex_lsp.memory.vector_host <parent pid>``).

It reads requests from stdin and writes replies to stdout (:mod:`cortex_lsp.memory.vector_process` says
why Chroma lives here and frames both), one at a time, until stdin closes; it also exits when its
parent is gone. A request names a Chroma client (its folder, or a Chroma server), opened on first use
the way :mod:`cortex_lsp.memory.chroma` always opened them, and a collection; Chroma's exceptions are
sent back as text. Replies hold plain values only (lists, numbers, text, float32 arrays), so the server
never needs Chroma's types to read them. Anything Chroma prints goes to stderr: stdout carries frames.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from cortex_lsp.memory.vector_process import read_frame, write_frame

#: what a request may call on a client and on a collection
CLIENT_METHODS = frozenset({"delete_collection", "list_collections", "get_max_batch_size"})
COLLECTION_METHODS = frozenset({"upsert", "query", "get", "count", "delete"})


class Host:
    def __init__(self) -> None:
        self.clients: dict[str, Any] = {}
        self.collections: dict[tuple[str, str], Any] = {}

    def client(self, key: str, spec: dict[str, Any]) -> Any:
        """The client for ``key`` (opened on first use: also after this process was restarted)."""
        if key in self.clients:
            return self.clients[key]
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        settings = ChromaSettings(anonymized_telemetry=False)
        if spec.get("host"):
            self.clients[key] = chromadb.HttpClient(host=spec["host"], port=int(spec["port"]), settings=settings)
        else:
            Path(spec["path"]).mkdir(parents=True, exist_ok=True)
            self.clients[key] = chromadb.PersistentClient(path=spec["path"], settings=settings)
        return self.clients[key]

    def release(self, key: str, spec: dict[str, Any]) -> None:
        self.clients.pop(key, None)
        for pair in [p for p in self.collections if p[0] == key]:
            del self.collections[pair]

    def collection(self, key: str, spec: dict[str, Any], name: str, options: dict[str, Any]) -> None:
        self.collections[(key, name)] = self.client(key, spec).get_or_create_collection(
            name, embedding_function=None, **options)

    def client_call(self, key: str, spec: dict[str, Any], method: str, kwargs: dict[str, Any]) -> Any:
        if method not in CLIENT_METHODS:
            raise ValueError(f"not a client method the vector process offers: {method}")
        result = getattr(self.client(key, spec), method)(**kwargs)
        if method == "delete_collection":
            self.collections.pop((key, kwargs["name"]), None)
        if method == "list_collections":
            return [c if isinstance(c, str) else getattr(c, "name", "") for c in result]
        return result

    def call(self, key: str, spec: dict[str, Any], name: str, method: str, kwargs: dict[str, Any]) -> Any:
        if method not in COLLECTION_METHODS:
            raise ValueError(f"not a collection method the vector process offers: {method}")
        collection = self.collections.get((key, name))
        if collection is None:  # re-created by another handle after a delete, or a restarted process
            collection = self.collections[(key, name)] = self.client(key, spec).get_collection(name)
        return plain(getattr(collection, method)(**kwargs))


def plain(value: Any) -> Any:
    """Chroma's result as plain values: dicts, lists, numbers, text; a 2-D vector block as float32."""
    import numpy as np

    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "embeddings" and v is not None and len(v) and not isinstance(v[0], list | tuple):
                out[k] = np.asarray(v, dtype=np.float32)  # get(): one row per record
            else:
                out[k] = plain(v)
        return out
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Enum):
        return value.value
    return value


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def main(argv: list[str]) -> int:
    parent = int(argv[0]) if argv else os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except Exception:
            pass
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    replies = os.dup(1)  # frames go out on the original stdout; anything printed goes to stderr
    os.dup2(2, 1)
    requests = sys.stdin.fileno()
    import chromadb  # noqa: F401  (while the server is still starting, not at its first request)

    host = Host()
    handlers: dict[str, Callable[..., Any]] = {"release": host.release, "collection": host.collection,
                "client_call": host.client_call, "call": host.call, "ping": lambda: "pong"}
    while True:
        try:
            op, args = read_frame(requests)
        except EOFError:
            return 0
        try:
            reply: tuple[str, Any] = ("ok", handlers[op](*args))
        except Exception as exc:
            reply = ("error", f"{exc.__class__.__name__}: {exc}")
        write_frame(replies, reply)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
