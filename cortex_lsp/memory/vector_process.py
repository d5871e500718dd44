"""Chroma in a process of its own: the server's side of the pipe.

Chroma's native code keeps the GIL while it works: an upsert of 1,000 vectors run in a worker thread
held the whole server, event loop included, for up to 1.3 s, and importing ``chromadb`` costs seconds of
the server's own CPU on a busy machine. So every Chroma call goes to one child process
(:mod:`cortex_lsp.memory.vector_host`, started on first use): this module hands out stand-ins for a
Chroma client and its collections (:class:`RemoteClient`, :class:`RemoteCollection`) with the same
methods the vector stores call, and each call is one request and one reply over the child's stdin and
stdout. A call blocks the calling thread (always a worker thread: the vector stores run every Chroma
call through ``asyncio.to_thread``) in a pipe read, which releases the GIL; vectors cross as float32
arrays, converted a few hundred rows at a time so no single conversion holds the GIL for long.

One child serves every store of this process (each Chroma client inside it is keyed by its folder or
server, as :mod:`cortex_lsp.memory.chroma` keys them). It exits when its stdin closes: when this
process closes it (:meth:`VectorProcess.close`) or dies. A child that died is started again by the next
call (the failed call raises :class:`VectorStoreError`).
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

log = logging.getLogger("cortex.memory")

HEADER = struct.Struct(">Q")
HOST_MODULE = "cortex_lsp.memory.vector_host"
#: rows converted to float32 per step (a step holds the GIL: 256 × 768 floats is ~2 ms)
CONVERT_ROWS = 256
#: the argument names that carry vectors, sent as float32 arrays
VECTOR_ARGUMENTS = ("embeddings", "query_embeddings")


class VectorStoreError(RuntimeError):
    """A call to the vector process failed (Chroma raised, or the process is gone)."""


def write_frame(fd: int, payload: Any) -> None:
    """One message: its length, then its pickle (protocol 5: arrays are copied once, in C)."""
    body = pickle.dumps(payload, protocol=5)
    view = memoryview(HEADER.pack(len(body)) + body)
    while view:
        sent = os.write(fd, view)
        view = view[sent:]


def read_frame(fd: int) -> Any:
    """The next message, or raise EOFError when the other side has closed the pipe."""
    (size,) = HEADER.unpack(_read_exact(fd, HEADER.size))
    return pickle.loads(_read_exact(fd, size))


def _read_exact(fd: int, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            raise EOFError("the vector process closed its pipe")
        got += n
    return buffer


def float32_rows(vectors: Any) -> Any:
    """``vectors`` (rows of floats, or an array) as one C-contiguous float32 array, filled in steps."""
    import numpy as np

    if isinstance(vectors, np.ndarray):
        return np.ascontiguousarray(vectors, dtype=np.float32)
    rows = list(vectors)
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    out = np.empty((len(rows), len(rows[0])), dtype=np.float32)
    for start in range(0, len(rows), CONVERT_ROWS):
        out[start:start + CONVERT_ROWS] = rows[start:start + CONVERT_ROWS]
    return out


class VectorProcess:
    """The connection to the child process that runs Chroma (started on the first call)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def start(self) -> None:
        """Start the child now (it imports Chroma while the caller goes on); calls wait for it."""
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._closed:
            raise VectorStoreError("the vector store is closed")
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._proc is not None:
            log.warning("memory: the vector process exited (code %s); starting it again", self._proc.returncode)
        # -P: the folder it starts in is never put on the import path (it is no project's folder anyway)
        self._proc = subprocess.Popen(
            [sys.executable, "-P", "-m", HOST_MODULE, str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, cwd=os.path.expanduser("~") or "/",
            close_fds=True)
        return self._proc

    def call(self, op: str, *args: Any) -> Any:
        """Send one request and wait for its reply (thread-safe; one request at a time)."""
        with self._lock:
            proc = self._ensure()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                write_frame(proc.stdin.fileno(), (op, args))
                status, value = read_frame(proc.stdout.fileno())
            except (OSError, EOFError) as exc:
                proc.kill()
                proc.wait()
                raise VectorStoreError(f"the vector process stopped ({exc})") from None
        if status != "ok":
            raise VectorStoreError(str(value))
        return value

    def close(self, wait: float = 5.0) -> None:
        """End the child: its stdin closes and it exits once its current request is answered; killed
        if it has not after ``wait`` seconds. Never waits for the call in flight (it ends with the child)."""
        self._closed = True
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=wait)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()


class RemoteClient:
    """A Chroma client in the vector process: the methods of ``chromadb.Client`` the stores use."""

    def __init__(self, process: VectorProcess, key: str, spec: dict[str, Any]) -> None:
        self.process = process
        self.key = key
        self.spec = spec

    def call(self, op: str, *args: Any) -> Any:
        """``op`` on this client in the vector process (which opens the client first if it must: a
        restarted process has none)."""
        return self.process.call(op, self.key, self.spec, *args)

    def get_or_create_collection(self, name: str, **options: Any) -> RemoteCollection:
        options.pop("embedding_function", None)  # never embeds by itself: the host passes None
        self.call("collection", name, options)
        return RemoteCollection(self, name)

    def delete_collection(self, name: str) -> None:
        self.call("client_call", "delete_collection", {"name": name})

    def list_collections(self) -> list[str]:
        return list(self.call("client_call", "list_collections", {}))

    def get_max_batch_size(self) -> int:
        return int(self.call("client_call", "get_max_batch_size", {}))


class RemoteCollection:
    """A collection in the vector process: ``upsert``, ``query``, ``get``, ``count``, ``delete``."""

    def __init__(self, client: RemoteClient, name: str) -> None:
        self.client = client
        self.name = name

    def _call(self, method: str, **kwargs: Any) -> Any:
        for name in VECTOR_ARGUMENTS:
            if kwargs.get(name) is not None:
                kwargs[name] = float32_rows(kwargs[name])
        return self.client.call("call", self.name, method, kwargs)

    def upsert(self, **kwargs: Any) -> None:
        self._call("upsert", **kwargs)

    def query(self, **kwargs: Any) -> dict[str, Any]:
        return self._call("query", **kwargs)  # type: ignore[no-any-return]

    def get(self, **kwargs: Any) -> dict[str, Any]:
        return self._call("get", **kwargs)  # type: ignore[no-any-return]

    def count(self) -> int:
        return int(self._call("count"))

    def delete(self, *, ids: Sequence[str]) -> None:
        self._call("delete", ids=list(ids))
