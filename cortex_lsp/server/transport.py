"""The server's stdio transport: one reader on the event loop that frames LSP messages and survives bad input.

Replaces pygls' reader, which reads stdin with a thread-pool call per header line and per body (three
thread hops a message: while a run streams, each hop waits for the GIL and a turn of the loop, and a
code action waited tens of ms) and which desynchronises for good on a frame without ``Content-Length``.

- stdin that is a pipe or socket is read by the event loop itself (``connect_read_pipe``); anything else
  (a regular file, a terminal) by one helper thread, through the same framer.
- :class:`Framer` is a sans-IO parser. On a malformed frame — no ``Content-Length``, a bad or huge length,
  a header line that is not ``Name: value``, garbage between frames, a body that is not JSON — it logs
  one error (``cortex.transport``, mirrored to the editor's log) and resynchronises on the next
  ``Content-Length:``/``Content-Type:`` header. A body that is cut short (its length says more than was
  sent) is abandoned after a quiet second if a new frame header is waiting inside it.
- A request whose JSON is valid but whose params do not fit answers an error with its id, so the client
  is never left waiting; the server then answers the next valid request.
- Nothing one frame holds ends the server: a body nested deeper than :data:`MAX_DEPTH` is refused before
  ``json.loads`` (so no recursion happens; answered ``ParseError`` with its id when one can be found), and
  any exception while decoding or structuring a frame (``RecursionError``, ``MemoryError``, a converter
  error deep in params) is answered like a malformed frame and logged.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import stat
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError

from cortex_lsp.server.nesting import MAX_DEPTH, strip_strings, too_deep
from cortex_lsp.server.writer import ThreadedWriter

if TYPE_CHECKING:
    from pygls.protocol import JsonRPCProtocol
    from pygls.server import JsonRPCServer

log = logging.getLogger("cortex.transport")

MAX_BODY_BYTES = 64 * 1024 * 1024  # a frame larger than this is refused (the editor never sends one)
MAX_HEADER_BYTES = 8 * 1024  # a header block larger than this is garbage
READ_CHUNK = 256 * 1024
STALL_SECONDS = 1.0  # a body this quiet, with a frame header inside it, was cut short
EXIT_GRACE_SECONDS = 10.0  # the process ends at most this long after the connection (stuck threads or not)
# after a completed ``shutdown`` (runs finished, memory and model closed) a worker thread still running is
# only an abandoned warm-up (an import, a model load): the process ends at most this long after ``exit``
SHUT_DOWN_GRACE_SECONDS = 1.0
_MARKER = re.compile(rb"content-(?:length|type)\s*:", re.IGNORECASE)
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_HEADER_LINE = re.compile(rb"^([A-Za-z0-9_-]+)[ \t]*:[ \t]*(.*?)[ \t]*$")
_KEEP_TAIL = 32  # bytes kept when no header marker is found (a marker may be split across reads)
_ID_VALUE = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")')


@dataclass(frozen=True)
class Frame:
    body: bytes


@dataclass(frozen=True)
class FrameError:
    message: str


class Framer:
    """Split a byte stream into LSP frames; never raises, resynchronises after anything malformed."""

    def __init__(self, *, max_body: int = MAX_BODY_BYTES) -> None:
        self._buf = bytearray()
        self._need: int | None = None  # the body length once a header block was read
        self._max_body = max_body

    @property
    def waiting_for_body(self) -> bool:
        return self._need is not None

    def feed(self, data: bytes) -> Iterator[Frame | FrameError]:
        self._buf += data
        while True:
            if self._need is not None:
                if len(self._buf) < self._need:
                    return
                body = bytes(self._buf[: self._need])
                del self._buf[: self._need]
                self._need = None
                yield Frame(body)
                continue
            item = self._header()
            if item is None:
                return
            if isinstance(item, FrameError):
                yield item

    def resync_from(self, body: bytes) -> bool:
        """A body that was not a message: if a frame header starts inside it, read again from there."""
        joined = body + bytes(self._buf[:64])  # a length a few bytes too long ate the start of the next header
        match = _MARKER.search(joined, 1)
        if match is None or match.start() >= len(body):
            return False
        self._buf[0:0] = body[match.start():]
        return True

    def stalled(self) -> FrameError | None:
        """The awaited body never completed: give it up if a new frame header waits inside it."""
        if self._need is None:
            return None
        match = _MARKER.search(self._buf)
        if match is None:
            return None
        dropped = match.start()
        del self._buf[:dropped]
        self._need = None
        return FrameError(f"a frame was shorter than its Content-Length; dropped {dropped} bytes and resynchronised")

    def _skip_to_marker(self, start: int, why: str) -> FrameError:
        match = _MARKER.search(self._buf, start)
        if match is None:
            dropped = max(len(self._buf) - _KEEP_TAIL, start)
        else:
            dropped = match.start()
        del self._buf[:dropped]
        return FrameError(f"{why}; skipped {dropped} bytes")

    def _header(self) -> FrameError | bool | None:
        """Parse one header block at the front of the buffer: True when a body is now awaited, None when
        more bytes are needed, a FrameError when something was skipped."""
        if not self._buf:
            return None
        match = _MARKER.match(self._buf)
        if match is None:
            # garbage between frames (or a stray blank line): up to the next header
            found = _MARKER.search(self._buf)
            if found is None and len(self._buf) <= _KEEP_TAIL:
                return None
            if found is None and not self._buf.strip():
                self._buf.clear()
                return None
            stripped = len(self._buf) - len(self._buf.lstrip(b"\r\n"))
            if found is not None and found.start() == stripped and stripped > 0:
                del self._buf[:stripped]  # blank lines before a header are harmless
                return False
            return self._skip_to_marker(0, "garbage between frames")
        end = _HEADER_END.search(self._buf)
        if end is None:
            if len(self._buf) > MAX_HEADER_BYTES:
                return self._skip_to_marker(1, f"a header block longer than {MAX_HEADER_BYTES} bytes")
            return None
        block = bytes(self._buf[: end.start()])
        length: int | None = None
        problem = ""
        for line in re.split(rb"\r?\n", block):
            parsed = _HEADER_LINE.match(line)
            if parsed is None:
                problem = f"a malformed header line {line[:60]!r}"
                break
            name, value = parsed.group(1).lower(), parsed.group(2)
            if name == b"content-length":
                if not value.isdigit() or len(value) > 12:
                    problem = f"a bad Content-Length {value[:40]!r}"
                    break
                length = int(value)
        if not problem and length is None:
            problem = "a frame without Content-Length"
        if not problem and length is not None and length > self._max_body:
            problem = f"a frame of {length} bytes (the limit is {self._max_body})"
        if problem:
            return self._skip_to_marker(1, problem)
        del self._buf[: end.end()]
        self._need = length
        return True


def _shallow_id(body: bytes) -> int | str | None:
    """The id of a frame that will not be parsed: a top-level ``"id"`` key, found without recursion."""
    for count, match in enumerate(_ID_VALUE.finditer(body)):
        if count >= 8:
            break
        prefix = strip_strings(body[: match.start()])
        if b'"' in prefix:  # inside a string
            continue
        depth = prefix.count(b"[") + prefix.count(b"{") - prefix.count(b"]") - prefix.count(b"}")
        if depth == 1:
            value = match.group(1)
            return value[1:-1].decode("utf-8", "replace") if value.startswith(b'"') else int(value)
    return None


def dispatch(protocol: JsonRPCProtocol, framer: Framer, frame: Frame) -> None:
    """Hand one frame to the protocol; a body that is not a message is logged (and answered if it has an id).

    Nothing raised while decoding, structuring or handling one frame escapes: the server keeps serving.
    """
    try:
        _dispatch(protocol, framer, frame)
    except Exception as exc:  # RecursionError, MemoryError (an Exception subclass), anything unforeseen
        log.error("malformed frame: could not read it (%s)", exc.__class__.__name__)
        try:
            _answer_error(protocol, _shallow_id(frame.body), JsonRpcParseError())
        except Exception:
            log.exception("could not answer a malformed frame")


def _dispatch(protocol: JsonRPCProtocol, framer: Framer, frame: Frame) -> None:
    if too_deep(frame.body):
        msg_id = _shallow_id(frame.body)
        log.error("malformed frame: nested deeper than %d levels (%d bytes); not read", MAX_DEPTH, len(frame.body))
        _answer_error(protocol, msg_id, JsonRpcParseError(f"The message nests deeper than {MAX_DEPTH} levels."))
        return
    try:
        raw = json.loads(frame.body)
    except (ValueError, RecursionError, MemoryError) as exc:  # not JSON, not UTF-8, or beyond what it can hold
        resynced = framer.resync_from(frame.body)
        log.error("malformed frame: the body is not JSON (%s)%s", exc.__class__.__name__,
                  "; resynchronised on a header inside it" if resynced else "")
        _answer_error(protocol, None if resynced else _shallow_id(frame.body), JsonRpcParseError())
        return
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        log.error("malformed frame: not a JSON-RPC 2.0 object")
        msg_id = raw.get("id") if isinstance(raw, dict) else None
        _answer_error(protocol, msg_id if isinstance(msg_id, int | str) else None, JsonRpcInvalidRequest())
        return
    try:
        message = protocol.structure_message(raw)
    except Exception as exc:  # a JsonRpcException, or a converter error deep in params (RecursionError, …)
        if not isinstance(exc, JsonRpcException):
            exc = JsonRpcInvalidParams(f"{exc.__class__.__name__} while reading the params")
        msg_id = raw.get("id")
        log.error("malformed %s: %s", raw.get("method", "message"), exc)
        if "method" in raw and isinstance(msg_id, int | str):
            _answer_error(protocol, msg_id, exc)
        elif isinstance(msg_id, int | str):  # a malformed response: fail the request waiting for it
            future = protocol._request_futures.pop(msg_id, None)
            if future is not None and not future.done():
                future.set_exception(exc)
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("unable to handle a message")


def _answer_error(protocol: JsonRPCProtocol, msg_id: int | str | None, exc: JsonRpcException) -> None:
    try:
        protocol._send_response(msg_id, error=exc.to_response_error())  # type: ignore[arg-type]
    except Exception:
        log.exception("could not answer a malformed message")


async def _pipe_reader(stdin: BinaryIO) -> Callable[[], Awaitable[bytes]] | None:
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    loop = asyncio.get_running_loop()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        return None
    return lambda: reader.read(READ_CHUNK)


def _thread_reader(stdin: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    """One daemon thread reads stdin (not a pipe) into a queue; a blocked read never delays exit."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=64)
    raw = getattr(stdin, "raw", stdin)

    def pump() -> None:
        while True:
            try:
                chunk = bytes(raw.read(READ_CHUNK) or b"")
            except (OSError, ValueError):
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(queue.put(chunk), loop).result()
            except (RuntimeError, concurrent.futures.CancelledError):  # the loop is gone
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="cortex-stdin", daemon=True).start()
    return queue.get


async def run(server: JsonRPCServer, stdin: BinaryIO, stop: threading.Event) -> None:
    """Read frames from ``stdin`` until EOF or ``stop``; one reader, on the loop when stdin is a pipe."""
    read = await _pipe_reader(stdin) or _thread_reader(stdin)
    framer = Framer()
    protocol = server.protocol
    pending: asyncio.Future[bytes] | None = None
    try:
        while not stop.is_set():
            if pending is None:
                pending = asyncio.ensure_future(read())
            # a read is never abandoned (a threaded read would lose its bytes); only the wait is bounded
            done, _ = await asyncio.wait({pending}, timeout=STALL_SECONDS if framer.waiting_for_body else None)
            if not done:
                error = framer.stalled()
                if error is not None:
                    log.error("malformed frame: %s", error.message)
                    for item in framer.feed(b""):
                        _handle(protocol, framer, item)
                continue
            chunk, pending = pending.result(), None
            if not chunk:
                log.info("stdin closed; stopping")
                break
            for item in framer.feed(chunk):
                _handle(protocol, framer, item)
    finally:
        if pending is not None:
            pending.cancel()


def _handle(protocol: JsonRPCProtocol, framer: Framer, item: Frame | FrameError) -> None:
    if isinstance(item, FrameError):
        log.error("malformed frame: %s", item.message)
    else:
        dispatch(protocol, framer, item)


def _arm_exit_watchdog(server: JsonRPCServer, grace: float) -> threading.Timer:
    """Once the connection is over, the process ends within ``grace`` seconds whatever else is running.

    After ``exit`` (or stdin closing) ``asyncio.run`` waits for every worker thread of the default
    executor, and the interpreter for every non-daemon thread, with no time limit: one call stuck in a
    thread (a blocking read, a lock) would keep the server alive after the editor let go of it. The
    timer is a daemon thread: when the normal exit finishes first, it dies with the process."""

    def force_exit() -> None:
        stuck = [t.name for t in threading.enumerate() if t is not threading.current_thread() and t.is_alive()]
        log.warning("the server did not stop within %g s of the end of the connection (threads still "
                    "running: %s); exiting now", grace, ", ".join(stuck) or "none")
        for handler in logging.getLogger().handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(0 if getattr(server.protocol, "_shutdown", False) else 1)

    timer = threading.Timer(grace, force_exit)
    timer.name = "cortex-exit-watchdog"
    timer.daemon = True
    timer.start()
    return timer


def serve_stdio(server: JsonRPCServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
                *, exit_grace: float = EXIT_GRACE_SECONDS) -> int:
    """The body of ``start_io``: our reader, pygls' writer and shutdown; the process ends at most
    ``exit_grace`` seconds after the connection does (:func:`_arm_exit_watchdog`). Returns the exit
    code: 0 after a ``shutdown``, 1 without one."""
    server._stop_event = stop = threading.Event()
    writer = ThreadedWriter(stdout or sys.stdout.buffer)  # a write never blocks the loop (server/writer.py)
    server.protocol.set_writer(writer)

    async def serve() -> None:
        try:
            await run(server, stdin or sys.stdin.buffer, stop)
        finally:  # stdin closed, or cancelled by asyncio.run's clean-up after ``exit``'s SystemExit
            shut_down = getattr(server.protocol, "_shutdown", False)
            _arm_exit_watchdog(server, min(exit_grace, SHUT_DOWN_GRACE_SECONDS) if shut_down else exit_grace)

    try:
        asyncio.run(serve())
    except BrokenPipeError:
        log.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
        writer.drain(SHUT_DOWN_GRACE_SECONDS)  # the last answers (shutdown's among them) go out first
    return 0 if getattr(server.protocol, "_shutdown", False) else 1  # LSP: exit without shutdown is 1
