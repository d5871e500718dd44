"""Which workspace files changed since the document index last looked: a plain record the editor fills.

The server turns the editor's notifications (a file saved, an open document edited or closed, a watched
file created/changed/deleted) into plain path events (:meth:`DocChanges.changed`); the document index
reads them before a search (:mod:`~cortex_lsp.memory.docfresh`) and re-reads only those paths instead of
walking the whole folder. A whole walk still happens when it is the only way to be sure:

- the folder has never been walked by this process (changes made while nobody watched are unknown),
  or the index holds nothing for it (a reset; checked by :func:`~cortex_lsp.memory.docfresh.refresh`);
- the editor cannot report file changes (:attr:`DocChanges.watching` is false: every search walks, as
  before);
- more than :data:`MAX_PENDING` distinct paths changed since the last search (a branch switch, a build):
  the paths are dropped and one walk replaces them, so a burst costs one bounded walk, never more;
- the last walk of the folder is older than :data:`FULL_WALK_SECONDS` (changes the editor did not see:
  another program, a watcher that dropped events).

Nothing here knows about LSP or reads the disk.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: a folder is walked again when its last walk is older than this (seconds), even when watched
FULL_WALK_SECONDS = 300.0
#: more distinct changed paths than this between two searches: one walk instead of the paths
MAX_PENDING = 256


@dataclass(frozen=True)
class Refresh:
    """What a search must look at first: the folders to walk whole and the changed paths to re-read."""

    walk: tuple[Path, ...]
    paths: tuple[str, ...]
    had_files: tuple[Path, ...] = ()  # not walked now, but their last walk found documents


@dataclass(frozen=True)
class FreshnessCounters:
    """Work done to keep the index fresh, since the server started (what tests and benchmarks read)."""

    events: int  # path events received
    walks: int  # whole-folder walks (one per folder walked)
    files_walked: int  # files the walks looked at (stat'ed)
    paths_checked: int  # changed paths re-read instead of a walk
    overflows: int  # bursts of more than MAX_PENDING paths turned into one walk


class DocChanges:
    """Paths changed since the last refresh, and when each folder was last walked whole.

    Thread-safe (a lock around a set and a dict); the clock is injectable for tests."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        full_walk_seconds: float = FULL_WALK_SECONDS,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._clock = clock
        self.full_walk_seconds = full_walk_seconds
        self.max_pending = max_pending
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._overflow = False
        self._walked: dict[str, float] = {}
        self._had_files: set[str] = set()
        self.watching = False
        self._events = self._walks = self._files_walked = self._checked = self._overflows = 0

    # -- the editor's side ---------------------------------------------------------------------------
    def changed(self, paths: Iterable[str | Path]) -> None:
        """Record changed paths (absolute; a folder stands for everything under it)."""
        with self._lock:
            for raw in paths:
                self._events += 1
                if self._overflow:
                    continue
                self._pending.add(os.path.normpath(str(raw)))
                if len(self._pending) > self.max_pending:
                    self._pending.clear()
                    self._overflow = True
                    self._overflows += 1

    # -- the index's side ----------------------------------------------------------------------------
    def take(self, roots: Sequence[Path]) -> Refresh:
        """What to do before a search of ``roots``; the pending paths are handed over (and forgotten)."""
        now = self._clock()
        with self._lock:
            walk_all = not self.watching or self._overflow
            walk = tuple(
                r for r in roots
                if walk_all or (last := self._walked.get(str(r.resolve()))) is None
                or now - last > self.full_walk_seconds
            )
            inside = _forms(roots)
            walked = _forms(walk)
            paths = tuple(sorted(p for p in self._pending if any(_within(p, n) for n in inside)
                                 and not any(_within(p, w) for w in walked)))
            self._pending.clear()  # outside every root: nothing to index (a folder added later is walked)
            if walk_all:
                self._overflow = False
            had = tuple(r for r in roots if r not in walk and str(r.resolve()) in self._had_files)
            return Refresh(walk=walk, paths=paths, had_files=had)

    def start_watching(self) -> None:
        """The editor watches files from now on: trust its events, after one more walk of every folder
        (a change between the last walk and the watcher's start was reported to nobody)."""
        with self._lock:
            self.watching = True
            self._walked.clear()

    def give_back(self, paths: Iterable[str]) -> None:
        """A refresh failed before these paths were re-read: keep them for the next one."""
        self.changed(paths)

    def walked(self, roots: Sequence[Path], files: int, with_files: Sequence[Path] = ()) -> None:
        """``roots`` were walked whole just now, looking at ``files`` files; ``with_files``: those of them
        that hold indexed documents (an index found empty for one of these later was reset)."""
        now = self._clock()
        with self._lock:
            for root in roots:
                self._walked[str(root.resolve())] = now
                self._had_files.discard(str(root.resolve()))
            self._had_files |= {str(r.resolve()) for r in with_files}
            self._walks += len(roots)
            self._files_walked += files

    def checked(self, count: int) -> None:
        with self._lock:
            self._checked += count

    def forget_walks(self) -> None:
        """The index was emptied (memory reset): every folder must be walked again."""
        with self._lock:
            self._walked.clear()

    @property
    def counters(self) -> FreshnessCounters:
        with self._lock:
            return FreshnessCounters(events=self._events, walks=self._walks, files_walked=self._files_walked,
                                     paths_checked=self._checked, overflows=self._overflows)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)


def _forms(roots: Sequence[Path]) -> set[str]:
    """Each root as the editor spells it and resolved (an editor reports paths under a linked folder
    by the link's name)."""
    return {str(r) for r in roots} | {str(r.resolve()) for r in roots}


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
