"""Find a file by its name alone: "db.py" when the file is ``src/db.py``.

A request (or a small model) often names a file without its folder. When no such file is at the top of
an open folder, :func:`files_named` walks the folder, bounded (entries and depth), past hidden entries,
links and build or dependency folders, and returns every file with exactly that name. The caller
reads the one it finds only through the path guards, like any other path.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

# folders never walked (dependencies, builds, caches): the document index's; hidden entries never either
from cortex_lsp.memory.docscan import SKIP_DIRS

MAX_ENTRIES = 5000
MAX_DEPTH = 6
MAX_FOUND = 8


def bare_name(raw: str) -> str | None:
    """``raw`` when it is a plain file name (no folder, not hidden), else ``None``."""
    name = raw.strip()
    if not name or "/" in name or "\\" in name or name.startswith(".") or len(name) > 255 or "\x00" in name:
        return None
    return name


def files_named(name: str, roots: Sequence[Path]) -> list[str]:
    """Paths (relative to their open folder, ``/``-separated) of the files called ``name``, breadth
    first, at most :data:`MAX_FOUND`; blocking (a worker thread's job)."""
    found: list[str] = []
    seen = 0
    for root in roots:
        queue: deque[tuple[Path, PurePosixPath, int]] = deque([(root, PurePosixPath(), 0)])
        while queue and seen < MAX_ENTRIES and len(found) < MAX_FOUND:
            folder, rel, depth = queue.popleft()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    break
                if entry.name.startswith(".") or entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH and entry.name not in SKIP_DIRS:
                        queue.append((Path(entry.path), rel / entry.name, depth + 1))
                elif entry.name == name and depth > 0:
                    found.append((rel / entry.name).as_posix())
                    if len(found) >= MAX_FOUND:
                        break
    return found
