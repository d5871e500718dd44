"""A model's reply read in a thread of its own, handed to the event loop in batches.

Read on the event loop, a reply streamed as fast as a local server sends it cost the loop per token: the
HTTP chunk's parsing (h11), the JSON line, the budget, a chunk object and a generator step — with
tens of thousands of tokens a second the loop did little else, and a code action waited behind them
(p99 68 ms). Here a reader thread does all of that (:class:`ThreadStream`: the backend's ``read``
function, given the stream to :meth:`~ThreadStream.put` chunks into), and the loop gets what has
arrived since it last looked as one chunk: one wake-up per batch, however many tokens it holds. A slow
model still gets each token to the editor at once (the loop is woken whenever it is waiting).

Leaving the stream early (a cancel, a cut answer, an error) stops the reader: its socket is shut down, so
a blocked read returns at once and nothing more of the reply is read.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from cortex_lsp.models.base import ChatChunk

_END = object()


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class ThreadStream:
    """One streamed reply: ``read(self)`` runs in a new thread and calls :meth:`put` per chunk; iterate
    :meth:`chunks` on the loop. ``read`` raises to fail the stream (the error is raised on the loop after
    the chunks before it)."""

    def __init__(self, read: Callable[[ThreadStream], None], name: str = "cortex-model-stream") -> None:
        self._read = read
        self._name = name
        self._items: collections.deque[Any] = collections.deque()
        self._lock = threading.Lock()
        self._waiting: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._socket: socket.socket | None = None
        self.stopped = False

    # -- the reader thread ---------------------------------------------------------------------------
    def opened(self, response: Any) -> None:
        """The reader's HTTP response (httpx): its socket is shut down when the loop stops the stream."""
        stream = getattr(response, "extensions", {}).get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._socket = sock if isinstance(sock, socket.socket) else None
            stopped = self.stopped
        if stopped:
            self._shut()

    def put(self, chunk: ChatChunk) -> None:
        """One chunk of the reply (from the reader thread)."""
        self._push(chunk)

    def _push(self, item: Any) -> None:
        with self._lock:
            self._items.append(item)
            waiting, self._waiting = self._waiting, None
        if waiting is not None and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is reading any more
                self._loop.call_soon_threadsafe(_wake, waiting)

    def _run(self) -> None:
        try:
            self._read(self)
        except BaseException as exc:
            self._forget_socket()
            self._push(_Failed(exc))
        else:
            self._forget_socket()
            self._push(_END)

    def _forget_socket(self) -> None:
        with self._lock:  # the connection may be back in the client's pool: never shut it down now
            self._socket = None

    # -- the event loop ------------------------------------------------------------------------------
    async def chunks(self) -> AsyncIterator[ChatChunk]:
        """The reply as it arrives: what came since the last look, joined into one chunk."""
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._run, name=self._name, daemon=True).start()
        try:
            while True:
                with self._lock:
                    if self._items:
                        batch, waiting = list(self._items), None
                        self._items.clear()
                    else:
                        batch, waiting = [], self._loop.create_future()
                        self._waiting = waiting
                if waiting is not None:
                    await waiting
                    continue
                ended = False
                failed: BaseException | None = None
                chunks: list[ChatChunk] = []
                for item in batch:
                    if item is _END:
                        ended = True
                    elif isinstance(item, _Failed):
                        failed = item.error
                    else:
                        chunks.append(item)
                if chunks:
                    yield _joined(chunks)
                if failed is not None:
                    raise failed
                if ended:
                    return
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop reading: the reader's socket is shut down (its blocked read returns), nothing more is read."""
        with self._lock:
            self.stopped = True
        self._shut()

    def _shut(self) -> None:
        with self._lock:
            if self._socket is not None:
                with contextlib.suppress(OSError):
                    self._socket.shutdown(socket.SHUT_RDWR)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _joined(chunks: list[ChatChunk]) -> ChatChunk:
    if len(chunks) == 1:
        return chunks[0]
    calls = tuple(c for chunk in chunks for c in chunk.tool_calls)
    return ChatChunk(content="".join(c.content for c in chunks), tool_calls=calls, done=chunks[-1].done,
                     pieces=sum(c.pieces for c in chunks))
