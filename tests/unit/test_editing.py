"""A block put in place of a range counts LSP positions in UTF-16 code units, so text after an emoji or
an accented letter lands where the editor showed it; a bad range is refused, never guessed."""

from __future__ import annotations

import pytest

from cortex_lsp.editing import BadRange, Position, replace_range, whole_file


def test_replace_range_in_utf16_units() -> None:
    text = "a = '😀é'; b = 1\nc = 2\n"
    # "😀" is two UTF-16 units: "b" is at unit 11 (10 code points)
    assert replace_range(text, Position(0, 11), Position(0, 16), "b = 3") == "a = '😀é'; b = 3\nc = 2\n"
    assert replace_range(text, Position(1, 0), Position(1, 5), "c = 4") == "a = '😀é'; b = 1\nc = 4\n"
    assert replace_range(text, Position(0, 0), Position(9, 0), "x\n") == "x\n"  # an end past the end: to the end


def test_bad_ranges_are_refused() -> None:
    with pytest.raises(BadRange, match="after end"):
        replace_range("a\nb\n", Position(1, 0), Position(0, 0), "x")
    with pytest.raises(BadRange, match="past the end"):
        replace_range("a\nb\n", Position(5, 0), Position(6, 0), "x")


def test_whole_file_ends_in_one_newline() -> None:
    assert whole_file("x = 1") == "x = 1\n" and whole_file("x = 1\n") == "x = 1\n" and whole_file("") == ""
