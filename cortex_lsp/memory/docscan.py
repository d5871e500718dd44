"""Which workspace files the document index reads, and how: the walk and the guarded reader.

:func:`scan_documents` walks the opened folders for document-like files (by extension; hidden entries
and build/vendor folders skipped) and stats them in the walking thread; :func:`default_reader` reads one
as untrusted text (regular file, no link, capped, not binary). Neither touches the index's database.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from cortex_lsp.guards.paths import PathRefused, ResolvedPath
from cortex_lsp.guards.workspace_files import UnsafeFile, read_untrusted_text

DOC_EXTENSIONS = frozenset(
    {
        ".md",
        ".markdown",
        ".mdx",
        ".rst",
        ".txt",
        ".py",
        ".pyi",
        ".toml",
        ".yaml",
        ".yml",
        ".json",
        ".cfg",
        ".ini",
        ".csv",
        ".html",
        ".js",
        ".ts",
        ".go",
        ".rs",
        ".java",
        ".c",
        ".h",
        ".cpp",
        ".sh",
        ".sql",
        ".log",
        ".adoc",
        ".org",
        ".tex",
    }
)
SKIP_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "env", "build", "dist", "site-packages", "target", "vendor",
     "third_party"}
)
MAX_FILES = 2000
MAX_FILE_BYTES = 1024 * 1024
Reader = Callable[[ResolvedPath], str]


def default_reader(target: ResolvedPath) -> str:
    """A document from an opened folder, read as untrusted (regular file, no link, non-blocking, capped)."""
    try:
        text = read_untrusted_text(target.path, max_bytes=MAX_FILE_BYTES, strict=False)
    except UnsafeFile as exc:
        raise PathRefused(f"Cannot read {target.relative}: {exc}.") from None
    if "\x00" in text[:4096]:
        raise PathRefused(f"Cannot read {target.relative}: it is a binary file.")
    return text


def scan_documents(roots: Sequence[Path], max_files: int = MAX_FILES) -> list[tuple[str, int, int]]:
    """``(path, size, mtime_ns)`` of indexable files under ``roots`` (hidden entries skipped), stat'd here
    (in the walking thread) so an unchanged file costs no further system call or thread hop."""
    found: list[tuple[str, int, int]] = []
    for root in roots:
        base = root.resolve()
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
            for name in sorted(filenames):
                if name.startswith(".") or Path(name).suffix.lower() not in DOC_EXTENSIONS:
                    continue
                full = os.path.join(dirpath, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                found.append((full, st.st_size, st.st_mtime_ns))
                if len(found) >= max_files:
                    return found
    return found
