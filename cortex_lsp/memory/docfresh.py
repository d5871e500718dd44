"""Bring the document index up to date before a search: the changed paths only, or a walk when needed.

:func:`refresh` asks :class:`~cortex_lsp.memory.docchanges.DocChanges` what changed. Folders it says must
be walked get the incremental walk (:meth:`DocIndex.index_workspace`: stat every file, read the changed
ones); every other changed path is looked at alone:

- a file is re-read (through the same reader as the walk, so an open document's unsaved text counts) and
  re-chunked only if its content hash changed;
- a path that is gone is dropped from the index, with everything indexed under it (a deleted folder);
- a folder (created, or moved in) is walked on its own, with the walk's filters.

The filters are the walk's: hidden entries, build/vendor folders, other extensions and files over
``MAX_FILE_BYTES`` are never indexed, and every file is resolved through the path guards
(:func:`~cortex_lsp.guards.paths.resolve_in_roots`), so a path outside the folder or refused by them is
dropped, never read. Without a :class:`DocChanges` (no editor), every refresh is a walk, as before.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cortex_lsp.guards.paths import PathRefused, resolve_in_roots
from cortex_lsp.memory.docchanges import DocChanges
from cortex_lsp.memory.docindex import (
    FLUSH_FILES,
    MAX_FILE_BYTES,
    MAX_FILES,
    DocIndex,
    IndexStats,
    Reader,
    default_reader,
)


def _walk_module() -> Any:
    """Where the walk's filters live: memory/docscan.py once docindex.py is split, docindex.py before."""
    try:
        return importlib.import_module("cortex_lsp.memory.docscan")
    except ImportError:
        return importlib.import_module("cortex_lsp.memory.docindex")


DOC_EXTENSIONS: frozenset[str] = _walk_module().DOC_EXTENSIONS
SKIP_DIRS: frozenset[str] = _walk_module().SKIP_DIRS

log = logging.getLogger("cortex.docs")


@dataclass(frozen=True)
class FreshStats:
    """What one refresh did: ``walk`` is the walk's stats (``None`` when no folder was walked)."""

    walked: tuple[Path, ...]
    walk: IndexStats | None
    checked: int  # changed paths looked at alone
    reindexed: int  # of those, files whose content changed
    removed: int  # files dropped because their path is gone or no longer indexable


async def refresh(
    index: DocIndex,
    roots: Sequence[Path],
    changes: DocChanges | None,
    reader: Reader = default_reader,
    *,
    walk: bool = False,
    max_files: int = MAX_FILES,
) -> FreshStats:
    """Make the index of ``roots`` current; ``walk``: walk every root whatever ``changes`` says."""
    if changes is None:
        whole = await index.index_workspace(roots, reader, max_files=max_files)
        return FreshStats(tuple(roots), whole, 0, 0, 0)
    plan = changes.take(roots)
    empty = [r for r in plan.had_files if not await asyncio.to_thread(_has_files, index, r)]
    to_walk = tuple(roots) if walk else (*plan.walk, *empty)  # empty: reset, or another data folder
    paths = tuple(p for p in plan.paths if not walk and not any(root_of(p, [r]) for r in empty))
    stats: IndexStats | None = None
    if to_walk:
        try:
            stats = await index.index_workspace(to_walk, reader, max_files=max_files)
        except BaseException:
            changes.give_back(paths)
            raise
        with_files = [r for r in to_walk if await asyncio.to_thread(_has_files, index, r)]
        changes.walked(to_walk, stats.indexed + stats.unchanged + len(stats.refused), with_files)
    reindexed = removed = 0
    if paths:
        try:
            reindexed, removed = await _reread(index, roots, paths, reader, max_files)
        except BaseException:
            changes.give_back(paths)
            raise
        changes.checked(len(paths))
    if to_walk or paths:
        log.info("doc index refreshed: %d folder(s) walked (%d file(s)), %d changed path(s) re-read "
                 "(%d re-indexed, %d removed)", len(to_walk),
                 0 if stats is None else stats.indexed + stats.unchanged + len(stats.refused),
                 len(paths), reindexed, removed)
    return FreshStats(to_walk, stats, len(paths), reindexed, removed)


def root_of(raw: str, roots: Sequence[Path]) -> tuple[Path, str] | None:
    """The root (resolved) holding ``raw`` and ``raw`` relative to it (as the editor spelled it)."""
    for root in roots:
        for form in (str(root), str(root.resolve())):
            base = form.rstrip(os.sep)
            if raw == base:
                return root.resolve(), ""
            if raw.startswith(base + os.sep):
                return root.resolve(), PurePosixPath(Path(raw[len(base) + 1 :])).as_posix()
    return None


def may_matter(raw: str, roots: Sequence[Path]) -> bool:
    """Whether a change at ``raw`` can change the index: inside a root, under no hidden or build/vendor
    folder (a ``.git`` or ``node_modules`` burst is never recorded)."""
    place = root_of(raw, roots)
    if place is None:
        return False
    parts = PurePosixPath(place[1]).parts
    return not any(p.startswith(".") or p in SKIP_DIRS for p in parts)


def indexable(rel: str) -> bool:
    """Whether the walk would index a file at ``rel``: no hidden part, no build/vendor folder, a document
    extension (the walk's filters, applied to one path)."""
    parts = PurePosixPath(rel).parts
    if not parts or any(p.startswith(".") for p in parts) or any(p in SKIP_DIRS for p in parts[:-1]):
        return False
    return PurePosixPath(parts[-1]).suffix.lower() in DOC_EXTENSIONS


def _files_under(folder: str, max_files: int) -> list[str]:
    """Document files under ``folder`` (hidden entries and build/vendor folders skipped), as the walk."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if not name.startswith(".") and Path(name).suffix.lower() in DOC_EXTENSIONS:
                found.append(os.path.join(dirpath, name))
                if len(found) >= max_files:
                    return found
    return found


async def _reread(
    index: DocIndex, roots: Sequence[Path], paths: Sequence[str], reader: Reader, max_files: int
) -> tuple[int, int]:
    """Re-read the changed ``paths``; returns ``(files re-indexed, files removed)``."""
    files: list[str] = []
    folders: list[tuple[str, str, set[str]]] = []  # (root, rel, files found under it now)
    gone: set[tuple[str, str]] = set()  # (root, rel): drop rel and everything indexed under it
    for raw in paths:
        place = root_of(raw, roots)
        if place is None:
            continue
        root, rel = place
        if not await asyncio.to_thread(os.path.isdir, raw):
            files.append(raw)
        elif not rel or indexable(rel + "/x.md"):  # the walk never enters a hidden or build folder
            under = await asyncio.to_thread(_files_under, raw, max_files)
            files += under
            folders.append((str(root), rel, {p[1] for f in under if (p := root_of(f, roots)) is not None}))
    reindexed = 0
    batch = []
    for raw in files:
        place = root_of(raw, roots)
        if place is None:
            continue
        root, rel = place
        if not indexable(rel):
            gone.add((str(root), rel))  # e.g. a deleted folder (its path has no document extension)
            continue
        try:
            st = await asyncio.to_thread(os.stat, raw)
            if st.st_size > MAX_FILE_BYTES:
                raise PathRefused(f"{rel} is too large")
            target = resolve_in_roots(raw, roots, must_exist=True)
            row = index._file_row(str(target.root), target.relative)
            prepared = await index._prepare(target, reader, st.st_size, st.st_mtime_ns,
                                            row[2] if row is not None else None)
        except (PathRefused, OSError):
            gone.add((str(root), rel))
            continue
        reindexed += prepared.chunks is not None
        batch.append(prepared)
        if len(batch) >= FLUSH_FILES:
            await index._commit(batch)
            batch = []
    await index._commit(batch)
    drop: set[tuple[str, str]] = set()
    for root_name, rel in gone:
        drop |= {(root_name, p) for p in await asyncio.to_thread(_indexed_under, index, root_name, rel)}
    for root_name, rel, present in folders:
        indexed = await asyncio.to_thread(_indexed_under, index, root_name, rel)
        drop |= {(root_name, p) for p in indexed if p not in present}
    for root_name, path in sorted(drop):
        async with index._write:
            await index._drop_file(root_name, path)
    return reindexed, len(drop)


def _has_files(index: DocIndex, root: Path) -> bool:
    with index._lock:
        row = index._db.execute("SELECT 1 FROM files WHERE root = ? LIMIT 1", (str(root.resolve()),)).fetchone()
    return row is not None


def _indexed_under(index: DocIndex, root: str, rel: str) -> list[str]:
    """Indexed paths equal to ``rel`` or under the folder ``rel`` (all of the root when ``rel`` is empty)."""
    with index._lock:
        rows = index._db.execute(
            "SELECT path FROM files WHERE root = ? AND (path = ? OR substr(path, 1, ?) = ?)",
            (root, rel, len(rel) + 1, rel + "/" if rel else ""),
        ).fetchall()
    return [str(r[0]) for r in rows]

