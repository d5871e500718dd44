"""Bounds on what a model may send, enforced while its reply streams in (never after).

A model server is not trusted to stop: a reply of 150 MB, a tool call whose arguments are a whole disk
image, or thousands of tool calls would otherwise be buffered whole, parsed on the event loop and sent
on to the editor. Every backend reads its stream through :func:`bounded_lines` (no line, and so no
single JSON message, grows past :attr:`StreamLimits.max_line_bytes`) and passes each chunk through a
:class:`ReplyBudget`:

* the answer's text stops at ``max_answer_bytes``: the reply ends there with a note saying it was cut;
* a tool call whose arguments exceed ``max_tool_args_bytes`` is dropped, with a note, and never run;
* at most ``max_tool_calls`` calls are kept from one reply (the run's own count is the agent's).

Leaving the stream early closes the HTTP response, so the rest is never read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from cortex_lsp.models.base import ChatChunk, ModelError, ToolCall

DEFAULT_MAX_ANSWER_BYTES = 256 * 1024
DEFAULT_MAX_TOOL_ARGS_BYTES = 1024 * 1024
DEFAULT_MAX_TOOL_CALLS = 20
#: room for a line's JSON around its payload (the message envelope, escapes of a short text)
_LINE_SLACK = 64 * 1024


@dataclass(frozen=True)
class StreamLimits:
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    max_tool_args_bytes: int = DEFAULT_MAX_TOOL_ARGS_BYTES
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS

    @property
    def max_line_bytes(self) -> int:
        """The longest line (one NDJSON message or SSE event) read from a model server: an answer's or a
        call's payload, JSON-escaped (up to 6 bytes per byte in the worst case), plus the envelope."""
        return 6 * max(self.max_answer_bytes, self.max_tool_args_bytes) + _LINE_SLACK


class ReplyTooLarge(ModelError):
    """The model sent one piece larger than any bound allows; the stream was cut there."""

    kind = "too_large"


def cut_note(limits: StreamLimits) -> str:
    return (f"\n\n(Cortex cut the answer here: the model sent more than {_size(limits.max_answer_bytes)} "
            "(max_answer_bytes).)")


def _size(count: int) -> str:
    return f"{count // (1024 * 1024)} MB" if count % (1024 * 1024) == 0 else f"{count // 1024} KB"


class LineSplitter:
    """Splits a byte stream into lines of at most ``limit`` bytes: a longer one raises
    :class:`ReplyTooLarge` before it is held whole (the buffer never exceeds ``limit`` plus one read)."""

    __slots__ = ("buffer", "limit", "what")

    def __init__(self, limit: int, what: str) -> None:
        self.buffer = bytearray()
        self.limit = limit
        self.what = what

    def _too_large(self) -> ReplyTooLarge:
        return ReplyTooLarge(f"The {self.what} sent a single message over {_size(self.limit)}; Cortex stopped "
                             "reading it.", "The model's reply was cut; ask for something shorter.")

    def feed(self, data: bytes) -> list[str]:
        """The lines ``data`` completes (a partial last line is kept for the next read)."""
        buffer = self.buffer
        start = len(buffer)
        buffer += data
        cut = buffer.find(b"\n", start)
        if cut < 0:
            if len(buffer) > self.limit:
                raise self._too_large()
            return []
        lines: list[str] = []
        begin = 0
        while cut >= 0:
            if cut - begin > self.limit:
                raise self._too_large()
            lines.append(buffer[begin:cut].decode("utf-8", errors="replace"))
            begin = cut + 1
            cut = buffer.find(b"\n", begin)
        del buffer[:begin]
        if len(buffer) > self.limit:
            raise self._too_large()
        return lines

    def finish(self) -> str | None:
        """The last line, if the stream did not end with a newline."""
        return self.buffer.decode("utf-8", errors="replace") if self.buffer else None


async def bounded_lines(chunks: AsyncIterator[bytes], limit: int, what: str) -> AsyncIterator[str]:
    """The lines of a byte stream, each at most ``limit`` bytes (:class:`LineSplitter`)."""
    splitter = LineSplitter(limit, what)
    async for data in chunks:
        for line in splitter.feed(data):
            yield line
    if (last := splitter.finish()) is not None:
        yield last


def bounded_lines_sync(chunks: Iterator[bytes], limit: int, what: str) -> Iterator[str]:
    """:func:`bounded_lines` for a blocking byte stream (a reader thread)."""
    splitter = LineSplitter(limit, what)
    for data in chunks:
        yield from splitter.feed(data)
    if (last := splitter.finish()) is not None:
        yield last


async def bounded_body(chunks: AsyncIterator[bytes], limit: int, what: str) -> bytes:
    """A whole (non-streamed) body, read up to ``limit`` bytes: a longer one raises :class:`ReplyTooLarge`."""
    body = bytearray()
    async for data in chunks:
        body += data
        if len(body) > limit:
            raise _body_too_large(limit, what)
    return bytes(body)


def bounded_body_sync(chunks: Iterator[bytes], limit: int, what: str) -> bytes:
    """:func:`bounded_body` for a blocking byte stream."""
    body = bytearray()
    for data in chunks:
        body += data
        if len(body) > limit:
            raise _body_too_large(limit, what)
    return bytes(body)


def _body_too_large(limit: int, what: str) -> ReplyTooLarge:
    return ReplyTooLarge(f"The {what} sent a reply over {_size(limit)}; Cortex stopped reading it.",
                         "Ask for something shorter.")


class ReplyBudget:
    """One reply's running totals; :meth:`text` and :meth:`calls` apply the bounds chunk by chunk."""

    __slots__ = ("_answer", "_calls", "cut", "limits", "notes")

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits
        self._answer = 0
        self._calls = 0
        self.cut = False  # the answer reached its bound: the caller ends the stream
        self.notes: list[str] = []

    def text(self, content: str) -> str:
        """``content`` as far as the answer's bound allows (the cut note appended when it is reached)."""
        if not content:
            return content
        size = len(content) if content.isascii() else len(content.encode("utf-8"))
        self._answer += size
        if self._answer <= self.limits.max_answer_bytes:
            return content
        room = self.limits.max_answer_bytes - (self._answer - size)
        self.cut = True
        kept = content.encode("utf-8")[: max(room, 0)].decode("utf-8", errors="ignore")
        return kept + cut_note(self.limits)

    def calls(self, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        """The calls within the bounds: an oversized call or one past the count is dropped, with a note."""
        if not calls:
            return calls
        kept: list[ToolCall] = []
        for call in calls:
            if self._calls >= self.limits.max_tool_calls:
                self.notes.append(f"The model asked for more than {self.limits.max_tool_calls} tool calls in one "
                                  "reply (max_tool_calls); the rest were not run.")
                break
            size = len(json.dumps(call.arguments, ensure_ascii=False).encode("utf-8"))
            if size > self.limits.max_tool_args_bytes:
                self.notes.append(f"The model's {call.name} call had arguments over "
                                  f"{_size(self.limits.max_tool_args_bytes)} (max_tool_args_bytes); it was not run.")
                continue
            self._calls += 1
            kept.append(call)
        return tuple(kept)

    def closing(self) -> ChatChunk | None:
        """A last chunk telling the user what was dropped, if anything was."""
        if not self.notes:
            return None
        return ChatChunk(content="\n\n(" + " ".join(self.notes) + ")")
