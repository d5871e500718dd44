"""The text patterns every reader of the user's words shares, defined once: web addresses, invisible
characters, sentence breaks and code fences.

The intent readers (:mod:`cortex_lsp.intent`) and the resource guards that read typed words
(:mod:`cortex_lsp.guards.urls`) import them from here, so two readers never disagree about what a URL
is or which characters are hidden. Pure; regexes compiled once.
"""

from __future__ import annotations

import re

__all__ = [
    "FENCED",
    "INVISIBLE",
    "SCHEME_URL",
    "SCHEME_URL_SOURCE",
    "URL",
    "URL_SOURCE",
    "split_sentences",
    "strip_invisible",
]

#: a URL with a scheme, as written in a message: up to whitespace, a quote or an angle bracket
SCHEME_URL_SOURCE = r"\bhttps?://[^\s<>\"'`]+"
#: a URL with a scheme, or a ``www.`` host with a top-level label and an optional path
URL_SOURCE = SCHEME_URL_SOURCE + r"|\bwww\.[a-z0-9-]+\.[a-z]{2,}[^\s<>\"'`]*"
SCHEME_URL = re.compile(SCHEME_URL_SOURCE, re.IGNORECASE)
URL = re.compile(URL_SOURCE, re.IGNORECASE)

#: Invisible characters: soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers,
#: Khmer inherent vowels, Mongolian vowel separator, zero-width characters, bidi marks, embeddings and
#: isolates, word joiners, variation selectors (and their supplement), BOM and Unicode tag characters.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)

#: a fenced code block (``` or ~~~, closed by the same fence): group 1 the fence, group 2 the body
FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)

_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
_SENTENCE_BREAK_NO_SEMICOLON = re.compile(r"(?<=[.!?])\s+|\n+")


def strip_invisible(text: str) -> str:
    """``text`` without the characters of :data:`INVISIBLE`."""
    return INVISIBLE.sub("", text)


def split_sentences(text: str, *, at_semicolon: bool = True) -> list[str]:
    """The non-blank sentences of ``text``: split after ``. ! ?`` (and ``;`` unless ``at_semicolon`` is
    false) followed by whitespace, and at line breaks."""
    pattern = _SENTENCE_BREAK if at_semicolon else _SENTENCE_BREAK_NO_SEMICOLON
    return [s for s in pattern.split(text) if s.strip()]
