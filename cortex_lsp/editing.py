"""The new text of a file when an editor command puts a block of text in it: in place of a range (LSP
positions, counted in UTF-16 code units), or as the whole file. Plain text in, plain text out."""

from __future__ import annotations

from dataclasses import dataclass


class BadRange(ValueError):
    """The range does not fit the document (the message says how)."""


@dataclass(frozen=True)
class Position:
    line: int
    character: int  # UTF-16 code units, as LSP counts them


def _index(line: str, character: int) -> int:
    """The Python index in ``line`` of the UTF-16 offset ``character`` (past the end: the end)."""
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def _offset(lines: list[str], pos: Position, what: str) -> int:
    if pos.line >= len(lines):
        raise BadRange(f"{what} line {pos.line} is past the end of the document ({len(lines)} lines)")
    return sum(len(x) + 1 for x in lines[: pos.line]) + _index(lines[pos.line], pos.character)


def replace_range(text: str, start: Position, end: Position, block: str) -> str:
    """``text`` with ``block`` in place of ``start``..``end``."""
    if (start.line, start.character) > (end.line, end.character):
        raise BadRange("start is after end")
    lines = text.split("\n")
    if end.line >= len(lines):  # an end past the last line means the end of the document
        end = Position(len(lines) - 1, len(lines[-1]) * 2)
    first, last = _offset(lines, start, "start"), _offset(lines, end, "end")
    return text[:first] + block + text[last:]


def whole_file(block: str) -> str:
    """``block`` as a file's whole text (ending in one newline, as files do)."""
    return block if block.endswith("\n") or not block else block + "\n"
