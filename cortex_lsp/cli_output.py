"""What the CLI prints: ``--json`` results, and plain-text tables for ``memory search`` and ``memory sessions``.

Columns are padded to their widest cell; the last column (the memory's text, a session's title) is cut
to the terminal's width, on one line per row.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any


def print_json(value: Any) -> None:
    """The raw result, as indented JSON (``--json``)."""
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _one_line(value: object) -> str:
    return " ".join(str(value if value is not None else "").split())


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = None) -> str:
    width = width or shutil.get_terminal_size((100, 24)).columns
    fixed = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(len(headers) - 1)]
    room = max(20, width - sum(fixed) - 2 * len(fixed))

    def line(cells: Sequence[str]) -> str:
        last = cells[-1] if len(cells[-1]) <= room else cells[-1][: room - 1] + "…"
        return "  ".join([*(c.ljust(w) for c, w in zip(cells[:-1], fixed, strict=True)), last]).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])


def memory_table(results: Sequence[Mapping[str, Any]], query: str, width: int | None = None) -> str:
    """``memory search`` results as a table: id, type, score, content."""
    if not results:
        return f"No memories match {query!r}."
    rows = [[_one_line(r.get("id")), _one_line(r.get("type")), f"{float(r.get('score') or 0):.2f}",
             _one_line(r.get("content"))] for r in results]
    return _table(["ID", "TYPE", "SCORE", "CONTENT"], rows, width)


def _when(value: object) -> str:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return _one_line(value)


def sessions_table(sessions: Sequence[Mapping[str, Any]], width: int | None = None) -> str:
    """``memory sessions`` as a table: id, turns, last activity, folder, title."""
    if not sessions:
        return "No sessions yet."
    rows = [[_one_line(s.get("id")), str(s.get("turns") or 0), _when(s.get("last_activity")),
             _one_line(s.get("root")), _one_line(s.get("title"))] for s in sessions]
    return _table(["ID", "TURNS", "LAST ACTIVITY", "FOLDER", "TITLE"], rows, width)
