"""ACP's stdio as asyncio streams, whatever stdin and stdout are.

The SDK's ``stdio_streams`` hands both to the event loop as pipes; that fails when stdin is not a pipe or
a socket (``/dev/null``, a regular file: the loop cannot watch it) or stdout is a regular file (a log a
client redirects to). Here a pipe or socket is read and written by the loop itself, anything else by one
helper thread (stdin) or by plain blocking writes (stdout), so ``cortex-lsp acp </dev/null`` ends at once
and ``cortex-lsp acp >log`` works.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
import threading
from typing import Any, BinaryIO, cast

READ_CHUNK = 256 * 1024


def _streamable(fd: int, *, char_device: bool) -> bool:
    """``fd`` is something the event loop can watch (a pipe or socket; a terminal for writing)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (char_device and os.isatty(fd))


class _DrainProtocol(asyncio.BaseProtocol):
    """The protocol behind a ``StreamWriter``: pauses ``drain`` while the pipe is full."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._resumed: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        if self._resumed is None:
            self._resumed = self._loop.create_future()

    def resume_writing(self) -> None:
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)
        self._resumed = None

    async def _drain_helper(self) -> None:
        if self._resumed is not None:
            await self._resumed


class _BlockingWriteTransport(asyncio.WriteTransport):
    """Writes straight to a file (stdout redirected to a regular file never blocks for long)."""

    def __init__(self, out: BinaryIO) -> None:
        super().__init__()
        self._out = out
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._out.write(data)
            self._out.flush()

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(Exception):
            self._out.flush()

    def abort(self) -> None:
        self.close()


def _feed_from_thread(loop: asyncio.AbstractEventLoop, source: BinaryIO, reader: asyncio.StreamReader) -> None:
    def pump() -> None:
        try:
            while data := source.read1(READ_CHUNK) if hasattr(source, "read1") else source.read(READ_CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, data)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(RuntimeError):  # the loop closed first
                loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="cortex-acp-stdin", daemon=True).start()


async def stdio_streams(limit: int, stdin: BinaryIO | None = None,
                        stdout: BinaryIO | None = None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    source = stdin or sys.stdin.buffer
    sink = stdout or sys.stdout.buffer
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    if _streamable(source.fileno(), char_device=False):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), source)
    else:
        _feed_from_thread(loop, source, reader)
    protocol = _DrainProtocol(loop)
    transport: Any
    if _streamable(sink.fileno(), char_device=True):
        transport, _ = await loop.connect_write_pipe(lambda: protocol, sink)
    else:
        transport = _BlockingWriteTransport(sink)
    return reader, asyncio.StreamWriter(cast(asyncio.WriteTransport, transport), protocol, None, loop)
