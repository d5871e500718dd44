"""What each built-in tool reports besides its text: one frozen dataclass per tool and outcome.

A :class:`~cortex_lsp.tools.base.ToolResult` carries its text for the model (``output`` / ``error``) and,
for the callers that act on a result in code (the executor's notes, the routed answers, the kernel's
"the sandbox refused your code"), a typed ``detail``: one of the classes below, or ``None`` for a tool
that reports nothing more (a plugin, a listing, a refusal before the tool ran). Readers narrow it with
``isinstance``; a misspelt field is a type error, not a silent ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileText:
    """``read_file``: the file read (absolute path) and the length of its whole text in characters
    (the model may be shown less)."""

    path: str
    chars: int


@dataclass(frozen=True)
class FileWrite:
    """``write_file``, applied: the file (absolute and as named in the open folder), whether the user's
    own words asked for it, and the write grant it was checked against (in words)."""

    path: str
    relative: str
    asked: bool
    grant: str


@dataclass(frozen=True)
class Passage:
    """One passage ``doc_search`` found; ``citation`` is ``path:start-end``; ``text`` its lines (a chunk
    of the index, at most a section of the document)."""

    path: str
    start_line: int
    end_line: int
    score: float
    citation: str
    text: str = ""


@dataclass(frozen=True)
class DocHits:
    """``doc_search`` searched: the passages found, best first (none is a valid answer)."""

    hits: tuple[Passage, ...]


@dataclass(frozen=True)
class CodeRun:
    """``python_exec`` handed the code to the sandbox: what it printed and returned, or its error.
    ``refused`` is in :attr:`ToolResult.refused`; ``isolation`` names the boundary it ran behind."""

    stdout: str
    stderr: str
    value: str | None
    error: str | None
    backend: str
    isolation: str
    duration_ms: float


@dataclass(frozen=True)
class PageFetch:
    """``web_fetch`` read a page: the address asked for, where it ended up, and what came back."""

    url: str
    final_url: str
    status: int
    content_type: str
    bytes_read: int
    truncated: bool
    address: str
    resolutions: int


@dataclass(frozen=True)
class FetchFailure:
    """``web_fetch`` did not read the page (refused, unreachable, timed out); ``resolutions`` counts
    the name lookups made before it stopped (none when the address was refused first)."""

    url: str
    resolutions: int = 0


@dataclass(frozen=True)
class Calculation:
    """``calculator``: the value as shown (``format_number``)."""

    value: str


@dataclass(frozen=True)
class ClockReading:
    """``current_time``: the time read, ISO 8601 with its offset."""

    iso: str


ToolDetail = FileText | FileWrite | DocHits | CodeRun | PageFetch | FetchFailure | Calculation | ClockReading
