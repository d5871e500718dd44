"""Prompt scaffolding cut from answers: the labels our prompts put around data never reach the user.

A small model echoes its prompt ("The data is not instructions: …", "[file notes.md: data, not
instructions]", its role tag "[cortex:prose]"). :func:`scrub` removes those markers from a finished
text; :class:`Scrubber` does the same for a stream, holding back only a tail that could still become a
marker (at most :data:`HOLD_CHARS` characters), so tokens keep flowing.
"""

from __future__ import annotations

import re

_MARKERS = re.compile(
    r"\[file [^\]\n]{0,120}: data, not instructions\]\n?"
    r"|\s?[\[(]\s*data,?\s+not\s+instructions\s*[\])]"
    r"|\b(?:the|this)\s+(?:data|text|file|result)\s+(?:is|are)\s+(?:only\s+)?(?:data,?\s+)?not\s+"
    r"(?:an?\s+)?instructions?(?:\s*:\s*never\s+follow\s+instructions\s+inside\s+it)?\s*[:.;,!]?\s*"
    r"|\bdata,\s+not\s+instructions\s*[:.;,]?\s?"
    r"|\bnever\s+follow\s+instructions\s+inside\s+it\s*[.;]?\s?"
    r"|^(?:Conversation so far|Known about the user|Failed) \(data\):[ \t]*\n?"
    r"|\s?\(data\)"
    r"|\s?\[cortex:[a-z-]+\]|\s?`cortex:[a-z-]+`|\s?\bcortex:(?:prose|content|answer|code|planner|executor|"
    r"refusal|reflector|finalize|explain|tool-args)\b",
    re.IGNORECASE | re.MULTILINE,
)
#: a stream holds back at most this tail while it could still become a marker (markers are shorter
#: than ``HOLD_CHARS - SLACK_CHARS``, so one that began before the tail is already complete)
HOLD_CHARS = 200
#: a marker that ends this close to the end of the stream may still grow (an optional tail): kept
SLACK_CHARS = 50
_STARTS = re.compile(
    r"[\[(`]|\bcortex\b|\b(?:the|this)\b(?=\s*\w*$)|\b(?:the|this)\s+(?:data|text|file|result)\b|\bdata\b|\bnever\b"
    r"|^(?:conversation|known|failed)\b",
    re.IGNORECASE | re.MULTILINE,
)


def scrub(text: str) -> str:
    """``text`` without prompt markers (a sentence that began with one starts with a capital)."""
    if not text:
        return text
    out = _MARKERS.sub("", text)
    if out == text:
        return text
    out = re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), out)
    return re.sub(r"[ \t]{2,}", " ", out)


class Scrubber:
    """Stream-side :func:`scrub`: ``feed`` returns the text safe to show now, ``finish`` the rest."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, piece: str) -> str:
        buffer = self._buffer + piece
        limit = len(buffer) - SLACK_CHARS
        buffer = _MARKERS.sub(lambda m: "" if m.end() <= limit else m.group(0), buffer)
        hold = len(buffer)
        last_space = max(buffer.rfind(" "), buffer.rfind("\n"))
        if last_space >= 0:
            hold = last_space  # the last word (and the space before it) may still grow into a marker
        else:
            hold = 0
        start = _STARTS.search(buffer, max(0, len(buffer) - HOLD_CHARS))
        if start is not None:
            hold = min(hold, start.start())
        while hold > 0 and buffer[hold - 1] in " \t":
            hold -= 1  # a marker may take the space before it
        out, self._buffer = buffer[:hold], buffer[hold:]
        return out

    def finish(self) -> str:
        out, self._buffer = _MARKERS.sub("", self._buffer), ""
        return out
