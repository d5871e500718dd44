"""The folder's own modules a snippet imports, found and read by the server (never by the worker).

``import utils`` / ``from src.db import URL`` in a snippet name modules of the open folder. The worker
gains no file access for them: :func:`gather` (server side, off the event loop) reads the snippet's
imports from its AST, finds each name in the folders the way Python's path finder would (a package is a
folder with ``__init__.py``, found before a ``name.py`` beside it; the first folder that has the
top-level name wins), reads the file through the same path guards as the ``read_file`` tool (inside
the folder, no hidden part, links resolved and kept inside, a regular single-link text file, bounded),
then does the same for what those modules import, relative imports included, up to
:data:`~.policy.MAX_FOLDER_MODULES` modules and :data:`~.policy.MAX_FOLDER_BYTES` bytes. The texts
go to the worker with the snippet, where :mod:`.folder_loader` compiles and serves them.

A name the folder has but can't serve (a file over the size limit, a link out of the folder, a folder
without ``__init__.py``, one module too many) is sent as *unavailable*, with the reason, so the import
is refused saying why. A file named like a standard module (``json.py``) or like one of the sandbox's
own packages is never used: the result's notes say so (:func:`~.policy.workspace_name_refusal`).
"""

from __future__ import annotations

import ast
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex_lsp.guards.paths import PathRefused, read_text_file, resolve_in_roots
from cortex_lsp.tools.sandbox.policy import (
    MAX_CODE_CHARS,
    MAX_FOLDER_BYTES,
    MAX_FOLDER_MODULES,
    MAX_MODULE_BYTES,
    module_name_too_long,
    parse_code,
    prepare_module_tree,
    resolve_relative,
    workspace_name_refusal,
)

#: How many module names one snippet may make the server look up (each costs a few ``stat`` calls);
#: names past it are not looked up (nor kept: the queue holds at most this many).
MAX_LOOKUPS = 400
#: How long one search may take (a slow file system): past it, the names left are not looked up.
MAX_GATHER_SECONDS = 10.0


@dataclass(frozen=True)
class ModuleFile:
    """A module of the folder: its dotted name, its path relative to its folder, its text."""

    name: str
    path: str
    source: str
    is_package: bool
    #: where its submodules are looked up (a package's folder, as the path guard resolved it)
    folder: Path | None = None


@dataclass
class FolderImports:
    """What :func:`gather` found: the modules to send, the names the folder can't serve (with why), and
    notes for the result (files that were not used)."""

    modules: dict[str, ModuleFile] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        """The request fields the worker reads (plain data)."""
        return {
            "modules": [{"name": m.name, "path": m.path, "source": m.source, "package": m.is_package}
                        for m in self.modules.values()],
            "unavailable": dict(self.unavailable),
        }


def imported_names(tree: ast.AST, package: str | None) -> Iterator[str]:
    """Every module name an import in ``tree`` may load: each prefix of a dotted name, and for
    ``from X import a`` also ``X.a`` (a submodule, if the folder has one). Relative imports resolve
    against ``package`` (none for a snippet). Names past the length bounds
    (:func:`~.policy.module_name_too_long`) are left out, so each name yields at most
    :data:`~.policy.MAX_MODULE_NAME_PARTS` strings of at most :data:`~.policy.MAX_MODULE_NAME_CHARS`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _prefixes(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = resolve_relative(package or "", node.level, node.module or "")
                if base is None:
                    continue
            else:
                base = node.module or ""
            if not base:
                continue
            yield from _prefixes(base)
            if module_name_too_long(base):
                continue
            for alias in node.names:
                if alias.name != "*" and not module_name_too_long(alias.name):
                    yield f"{base}.{alias.name}"


def _prefixes(name: str) -> Iterator[str]:
    """``a``, ``a.b``, ``a.b.c`` for ``a.b.c``, stopping at the first prefix past the length bounds."""
    end = name.find(".")
    while True:
        prefix = name if end < 0 else name[:end]
        if module_name_too_long(prefix):
            return
        yield prefix
        if end < 0:
            return
        end = name.find(".", end + 1)


def parse_module(source: str, name: str) -> ast.Module | None:
    """A module's tree as the sandbox will run it (``None`` when it does not parse: the worker says so)."""
    try:
        return prepare_module_tree(parse_code(source, name))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class _Finder:
    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.found = FolderImports()
        self.looked: set[str] = set()
        self.total = 0

    def _candidates(self, name: str) -> list[tuple[Path, Path, bool]]:
        """(file, its folder, is a package) to try for ``name``, in the finder's order."""
        parent, _, last = name.rpartition(".")
        if parent:
            module = self.found.modules.get(parent)
            if module is None or module.folder is None:
                return []  # the parent is not a package the folder serves
            bases = [module.folder]
        else:
            bases = self.roots
        out: list[tuple[Path, Path, bool]] = []
        for base in bases:
            out += [(base / last / "__init__.py", base / last, True), (base / f"{last}.py", base, False)]
        return out

    def _no_init(self, name: str) -> str | None:
        """A folder named like the module that has no ``__init__.py`` (only regular packages are served)."""
        parent, _, last = name.rpartition(".")
        bases = self.roots if not parent else [m.folder for m in (self.found.modules.get(parent),) if m and m.folder]
        for base in bases:
            folder = base / last
            try:
                if self._inside(folder) and folder.is_dir():
                    return f"{last}/ in the folder has no __init__.py (only packages with one can be imported)"
            except OSError:
                continue
        return None

    def _inside(self, path: Path) -> bool:
        """Does ``path``, its links resolved, stay inside the folders? (A link out of them is refused
        without asking whether its target exists: the answer must not tell.)"""
        real = Path(os.path.realpath(path))
        return any(real == root or real.is_relative_to(root) for root in self.roots)

    def look(self, name: str) -> ModuleFile | None:
        if name in self.looked or len(self.looked) >= MAX_LOOKUPS:
            return None
        self.looked.add(name)
        if workspace_name_refusal(name) is not None:
            self._note_shadowed(name)
            return None
        parent = name.rpartition(".")[0]
        if parent and (parent in self.found.unavailable or parent not in self.found.modules):
            return None
        for path, folder, is_package in self._candidates(name):
            try:
                if self._inside(path) and not path.is_file():
                    continue
            except OSError:  # a name the file system can't take (too long): not there
                continue
            # a file of the folder, or a link out of it (refused by the path guard, whatever it points at)
            return self._read(name, path, folder, is_package)
        if not parent:
            why = self._no_init(name)
            if why:
                self.found.unavailable[name] = why
        return None

    def _read(self, name: str, path: Path, folder: Path, is_package: bool) -> ModuleFile | None:
        shown = self._shown(path)
        if len(self.found.modules) >= MAX_FOLDER_MODULES:
            self.found.unavailable[name] = (f"the snippet imports more than {MAX_FOLDER_MODULES} modules from the "
                                            "folder")
            return None
        try:
            target = resolve_in_roots(str(path), self.roots)
            size = target.path.stat().st_size
            if self.total + size > MAX_FOLDER_BYTES:
                raise PathRefused(f"the modules it imports from the folder are over {MAX_FOLDER_BYTES} bytes together")
            text = read_text_file(target, max_bytes=MAX_MODULE_BYTES)
            real_folder = resolve_in_roots(str(folder), self.roots).path if is_package else None
        except (PathRefused, OSError) as exc:
            self.found.unavailable[name] = f"{shown}: {exc}"
            return None
        self.total += len(text.encode("utf-8"))
        module = ModuleFile(name=name, path=shown, source=text, is_package=is_package, folder=real_folder)
        self.found.modules[name] = module
        return module

    def _shown(self, path: Path) -> str:
        for root in self.roots:
            try:
                return path.relative_to(root).as_posix()
            except ValueError:
                continue
        return path.name

    def _note_shadowed(self, name: str) -> None:
        if "." in name or module_name_too_long(name):
            return
        for root in self.roots:
            for path in (root / f"{name}.py", root / name / "__init__.py"):
                try:  # a link counts as a file there whatever it points at (no answer depends on it)
                    there = os.path.lexists(path) or not self._inside(path)
                except (OSError, ValueError):
                    continue
                if there:
                    why = workspace_name_refusal(name)
                    self.found.notes.append(f"{self._shown(path)} in the folder was not used: {why}.")
                    return


def _queue(pending: deque[str], queued: set[str], names: Iterable[str]) -> None:
    """Add ``names`` not queued before, until :data:`MAX_LOOKUPS` names were queued in all (the rest are
    not read: the work and the memory are bounded by that count, whatever the code holds)."""
    for name in names:
        if len(queued) >= MAX_LOOKUPS:
            return
        if name not in queued:
            queued.add(name)
            pending.append(name)


def gather(code: str, roots: Sequence[Path], stop: threading.Event | None = None) -> FolderImports:
    """The folder modules ``code`` imports, directly or through each other (see the module docstring).

    At most :data:`MAX_LOOKUPS` names are looked up, each at most
    :data:`~.policy.MAX_MODULE_NAME_CHARS` long; ``stop`` (set by a caller that no longer waits) and
    :data:`MAX_GATHER_SECONDS` end the search early, with what was found so far."""
    finder = _Finder(roots)
    if not roots or len(code) > MAX_CODE_CHARS:
        return finder.found
    try:
        tree = parse_code(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return finder.found
    deadline = time.monotonic() + MAX_GATHER_SECONDS
    pending: deque[str] = deque()
    queued: set[str] = set()
    _queue(pending, queued, imported_names(tree, None))
    while pending:
        if (stop is not None and stop.is_set()) or time.monotonic() > deadline:
            finder.found.notes.append("finding the folder's modules took too long: some were not looked up")
            break
        module = finder.look(pending.popleft())
        if module is None:
            continue
        parsed = parse_module(module.source, module.path)
        if parsed is None:
            continue
        package = module.name if module.is_package else module.name.rpartition(".")[0]
        _queue(pending, queued, imported_names(parsed, package))
    return finder.found
