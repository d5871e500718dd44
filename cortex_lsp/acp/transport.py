"""ACP's newline-delimited JSON-RPC on stdio, with a guard in front of the SDK's connection.

The SDK's own reader logs a line that is not JSON and goes on, and a frame that is not an object
(``[1]``, ``42``) or a response whose id is not a number or string would stop its receive loop. Here
every frame is checked first: bad JSON answers a JSON-RPC Parse error (``-32700``, id ``null``),
anything else that is not a JSON-RPC message an Invalid Request (``-32600``), a frame over
:data:`MAX_FRAME_BYTES` is skipped whole with an error, and a request that comes before ``initialize``
is refused (``-32600``, nothing runs; a notification is dropped). The connection stays open.

``$/cancel_request`` for a ``session/prompt`` in flight cancels that session's run, as
``session/cancel`` does (the prompt still answers, with ``stopReason: cancelled``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("cortex.acp")

#: the largest frame read (a prompt with embedded files); a bigger one is skipped whole and answered
MAX_FRAME_BYTES = 16 * 1024 * 1024
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class GuardedTransport:
    """The SDK's :class:`acp._transport.Transport` (``send``, ``receive``, ``close``) over stdio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False
        self.initialized = False
        #: ``session/prompt`` requests in flight: request id → session id
        self._prompts: dict[Any, str] = {}
        #: called with a session id when the client cancels its prompt request (``$/cancel_request``)
        self.on_cancel: Callable[[str], None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            self._prompts.pop(message.get("id"), None)
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the client went away")
            self._writer.write(data)
            await self._writer.drain()

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except Exception:
                pass

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line, too_long = await self._read_line()
            if line is None:
                return None
            if too_long:
                await self._error(None, INVALID_REQUEST, f"Invalid request: a frame over {MAX_FRAME_BYTES} bytes")
                continue
            text = line.strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except ValueError as exc:
                await self._error(None, PARSE_ERROR, f"Parse error: {exc}")
                continue
            if (refused := self._check(message)) is not None:
                await self._error(*refused)
                continue
            return message  # type: ignore[no-any-return]

    def _check(self, message: Any) -> tuple[Any, int, str] | None:
        """Why ``message`` is refused (id, code, text), else ``None`` (and ``initialize`` is noted)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None, INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 object"
        msg_id = message.get("id")
        if "id" in message and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str | None)):
            return None, INVALID_REQUEST, "Invalid request: id must be a number or a string"
        if "method" not in message:
            if "id" in message and ("result" in message or "error" in message):
                return None  # a response to one of our requests
            return msg_id, INVALID_REQUEST, "Invalid request: no method"
        method = message["method"]
        is_request = "id" in message
        if not isinstance(method, str):
            return msg_id, INVALID_REQUEST, "Invalid request: method must be a string"
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return (msg_id, -32602, "Invalid params: params must be an object") if is_request else (None, 0, "")
        if method == "$/cancel_request" and not is_request:
            session = self._prompts.get((params or {}).get("requestId"))
            if session is not None and self.on_cancel is not None:
                self.on_cancel(session)
            return None, 0, ""  # handled here (or nothing to cancel): the SDK has no route for it
        if method == "session/prompt" and is_request and isinstance((params or {}).get("sessionId"), str):
            self._prompts[msg_id] = (params or {})["sessionId"]
        if method == "initialize":
            self.initialized = True
        elif not self.initialized:
            if is_request:
                return msg_id, INVALID_REQUEST, f"Invalid request: {method} before initialize"
            log.warning("dropped %s before initialize", method)
            return None, 0, ""
        return None

    async def _error(self, msg_id: Any, code: int, text: str) -> None:
        if code == 0:  # a notification refused: nothing is sent
            return
        log.warning("refused frame: %s", text)
        try:
            await self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}})
        except ConnectionError:
            pass

    async def _read_line(self) -> tuple[bytes | None, bool]:
        """One frame (``None`` at end of input); ``True`` when it was too long and was skipped."""
        chunks: list[bytes] = []
        size = 0
        too_long = False
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                piece = await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError as exc:
                if not exc.partial and not chunks:
                    return None, False
                piece = exc.partial
                if not too_long:
                    chunks.append(piece)
                return b"".join(chunks), too_long
            else:
                if not too_long:
                    chunks.append(line)
                return b"".join(chunks), too_long
            size += len(piece)
            if size > MAX_FRAME_BYTES:
                too_long, chunks = True, []
            elif not too_long:
                chunks.append(piece)
