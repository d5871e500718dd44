"""The stream bounds (models/limits.py): lines, bodies, answer text and tool calls, fed hostile input."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cortex_lsp.models.base import ToolCall
from cortex_lsp.models.limits import ReplyBudget, ReplyTooLarge, StreamLimits, bounded_body, bounded_lines


async def _pieces(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def _endless(piece: bytes, seen: list[int]) -> AsyncIterator[bytes]:
    while True:
        seen.append(len(piece))
        yield piece


async def test_lines_split_across_reads_and_kept_whole() -> None:
    lines = [line async for line in bounded_lines(_pieces(b"ab", b"c\nde", b"\n\nf"), 10, "server")]
    assert lines == ["abc", "de", "", "f"]


async def test_a_line_without_end_stops_being_read_past_the_limit() -> None:
    seen: list[int] = []
    with pytest.raises(ReplyTooLarge):
        async for _ in bounded_lines(_endless(b"x" * 1000, seen), 10_000, "server"):
            pass
    assert sum(seen) <= 11_000  # one read past the bound, never the whole flood


async def test_a_long_line_inside_one_read_is_refused() -> None:
    with pytest.raises(ReplyTooLarge):
        async for _ in bounded_lines(_pieces(b"ok\n" + b"y" * 50 + b"\nz"), 20, "server"):
            pass


async def test_a_body_is_read_up_to_its_limit() -> None:
    assert await bounded_body(_pieces(b"a", b"b"), 2, "server") == b"ab"
    seen: list[int] = []
    with pytest.raises(ReplyTooLarge):
        await bounded_body(_endless(b"z" * 100, seen), 1000, "server")
    assert sum(seen) <= 1100


def test_answer_is_cut_at_its_bound_on_a_character_boundary() -> None:
    budget = ReplyBudget(StreamLimits(max_answer_bytes=1024))
    kept = "".join(budget.text("é" * 100) for _ in range(20))  # 2 bytes each: 4000 bytes offered
    assert budget.cut
    body, note = kept.split("\n\n(", 1)
    assert body == "é" * 512 and "max_answer_bytes" in note


def test_tool_calls_past_the_count_or_size_are_dropped_with_a_note() -> None:
    budget = ReplyBudget(StreamLimits(max_tool_args_bytes=1024, max_tool_calls=2))
    big = ToolCall("write_file", {"path": "a.txt", "content": "x" * 2000})
    small = [ToolCall("calculator", {"expression": f"{n}+1"}) for n in range(4)]
    kept = budget.calls((big, *small))
    assert kept == tuple(small[:2])
    closing = budget.closing()
    assert closing is not None and "max_tool_args_bytes" in closing.content and "max_tool_calls" in closing.content
