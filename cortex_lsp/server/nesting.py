"""Linear-time checks on a JSON body before ``json.loads``: strings cut out, nesting depth measured.

Used by the stdio transport (:mod:`cortex_lsp.server.transport`) on every frame, on the event loop, so
every step here is bounded by a small constant number of C-speed passes over the body (the body may
be as large as ``MAX_BODY_BYTES``): no regex that retries at each position, no pass per nesting level.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate

MAX_DEPTH = 256  # JSON nesting deeper than this is refused unread (LSP messages nest a dozen levels)

# A terminated string is cut; an unterminated one (it runs to the end of the body) is kept as it is,
# matched once instead of being retried from every quote inside it (which was quadratic).
_STRING_OR_TAIL = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|("[^"\\]*(?:\\.[^"\\]*)*\\?\Z)', re.DOTALL)
_KEEP = bytes(range(256)).translate(None, b"[]{}")  # every byte but the brackets
_SQUARE = bytes.maketrans(b"{}", b"[]")  # one bracket kind: depth counts both alike
_STEPS = bytes.maketrans(b"[]", b"\x01\xff")  # as signed bytes: +1, -1
_CHUNK = 64 * 1024
_EXACT = 256  # pieces this small are measured position by position
_SHRINK_PASSES = 16  # at most this many cheap pair-removal passes, and only while they shrink the text


def strip_strings(body: bytes) -> bytes:
    """``body`` without its JSON strings (an unterminated string at the end is left in place)."""
    return _STRING_OR_TAIL.sub(rb"\1", body)


def _exact_excess(chunk: bytes, depth: int, limit: int) -> int | None:
    """Depth after ``chunk`` (``[``/``]`` only), or None when it passes ``limit`` or goes below zero."""
    steps = array("b", chunk.translate(_STEPS))  # +1 for an open, -1 for a close
    opens = chunk.count(b"[")
    after = depth + opens - (len(chunk) - opens)
    # running depth, in C: one pass for the highest point, one for the lowest only when it could be < 0
    if max(accumulate(steps, initial=depth)) > limit:
        return None
    if depth - (len(chunk) - opens) < 0 and min(accumulate(steps, initial=depth)) < 0:
        return None
    return after


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when ``body`` nests arrays/objects deeper than ``limit`` or its brackets do not balance.

    A body with no more than ``limit`` opening brackets is answered at once (``False``). Otherwise
    strings are cut (one regex pass), every byte but a bracket is dropped and ``{}`` counted as ``[]``
    (``bytes.translate``). A few ``bytes.replace`` passes remove innermost ``[]`` pairs while that
    shrinks the text (each lowers every peak by one, so the limit drops by one a pass). The rest is
    walked in chunks: a chunk whose counts alone show it stays within ``0..limit`` is passed with one
    ``bytes.count``; another is halved (down to ``_EXACT`` bytes, then measured position by position
    with C iterators), so each byte is counted at most ~10 times and measured at most once. Mismatched kinds
    (``[}``) are left to ``json.loads``, which then fails within ``limit`` levels.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    rest = strip_strings(body).translate(_SQUARE, _KEEP)
    for _ in range(_SHRINK_PASSES):
        shorter = rest.replace(b"[]", b"")
        if len(shorter) == len(rest):
            break
        limit -= 1
        shrunk_enough = len(shorter) * 4 <= len(rest) * 3
        rest = shorter
        if not shrunk_enough or not rest or limit < 0:
            break
    if limit < 0:
        return True  # more levels than the limit were peeled off
    if not rest:
        return False
    depth = 0
    for start in range(0, len(rest), _CHUNK):
        after = _walk(rest[start:start + _CHUNK], depth, limit)
        if after is None:
            return True
        depth = after
    return depth != 0


def _walk(piece: bytes, depth: int, limit: int) -> int | None:
    """Depth after ``piece``, or None past ``limit``/below zero: halves a piece its counts can't clear."""
    opens = piece.count(b"[")
    closes = len(piece) - opens
    if depth + opens <= limit and depth - closes >= 0:
        return depth + opens - closes
    if depth + opens - closes > limit or depth + opens - closes < 0:
        return None
    if len(piece) <= _EXACT:
        return _exact_excess(piece, depth, limit)
    half = len(piece) // 2
    middle = _walk(piece[:half], depth, limit)
    return None if middle is None else _walk(piece[half:], middle, limit)
