"""The size limits every front applies to what a user sends, before anything reads it."""

from __future__ import annotations

#: the longest request message (characters)
MAX_MESSAGE = 8192
#: the most of a selection or attached document (UTF-8 bytes) sent to a model
MAX_SELECTION_BYTES = 64 * 1024


def cap_selection(text: str) -> tuple[str, str | None]:
    """``text`` cut to :data:`MAX_SELECTION_BYTES`, and the note that says so (``None`` when whole)."""
    if len(text) <= MAX_SELECTION_BYTES // 4:
        return text, None
    encoded = text.encode("utf-8")
    if len(encoded) <= MAX_SELECTION_BYTES:
        return text, None
    cut = encoded[:MAX_SELECTION_BYTES].decode("utf-8", errors="ignore")
    return cut, (f"The selection was truncated to its first {MAX_SELECTION_BYTES // 1024} KB "
                 f"(it was {len(encoded) // 1024} KB); the answer covers only that part.")
