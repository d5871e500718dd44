"""The hidden entries of a folder (names starting with ``.``), for the OS layers that leave them out.

Shared by bubblewrap's binds (:mod:`.isolation`, server side) and the Landlock rules (:mod:`.landlock`,
in the worker); kept free of settings and asyncio imports so the worker can use it cheaply.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

MAX_SCANNED_ENTRIES = 50_000


def hidden_entries(root: Path, limit: int = MAX_SCANNED_ENTRIES) -> list[tuple[str, bool]] | None:
    """Every hidden entry below ``root`` as ``(path, is_dir)``, not descending into hidden folders nor
    following links; ``None`` when the folder has more than ``limit`` entries."""
    found: list[tuple[str, bool]] = []
    pending = [str(root)]
    seen = 0
    while pending:
        folder = pending.pop()
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                seen += 1
                if seen > limit:
                    return None
                is_dir = entry.is_dir(follow_symlinks=False)
                if entry.name.startswith("."):
                    found.append((entry.path, is_dir))
                elif is_dir:
                    pending.append(entry.path)
    return found
