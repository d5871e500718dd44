"""The source file a request means when it names what is in it, not the file: "what does the /health
endpoint return?", "what does `register()` give back?", "where is parse_date defined?".

:func:`mentioned_names` finds the names a request writes as code would (a URL route, a name with an
underscore or inner capital, a call, a backticked name); :func:`file_holding` looks for them in the
open folder's source files (the bounded list of :mod:`cortex_lsp.agent.project_view`) and gives the
one file that defines them (tests left out). Blocking (it reads files): the classifier's worker
thread calls it, with the user's own words (material they hand over names nothing). Reading only
finds a slot: the route still reads the file through the tools and every path guard.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path

from cortex_lsp.agent.project_view import read_text

#: bounds of one lookup
MAX_FILE_BYTES = 256 * 1024
MAX_BYTES = 4 * 1024 * 1024
MAX_NAMES = 4
#: files whose names an index keeps (all folders)
MAX_INDEXED = 2000

_ROUTE = re.compile(r"(?<![\w/.~-])(/[A-Za-z][\w-]{0,60}(?:/[\w<>{}:-]{1,60}){0,8})(?![\w/.])")
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]{0,80})(?:\(\))?`")
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w{2,80})\(\)")
#: a word as code writes it; kept when it has an inner underscore or capital (bounded: no backtracking
#: over a long run of underscores)
_WORD = re.compile(r"(?<![\w.])([A-Za-z]\w{2,80})(?![\w.(])")
_CODE_SHAPED = re.compile(r"^[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9]$|^[a-z]+[A-Z]\w*$|^[A-Z][a-z]+[A-Z]\w*$")
_FILE_LIKE = re.compile(r"\.[A-Za-z0-9]{1,8}$")
#: tests call routes and functions; they are not where a request's name is defined
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|spec|specs|__tests__)/|(?:^|/)test_[^/]*$|_test\.[^/]+$"
                        r"|\.(?:test|spec)\.[^/]+$")


def mentioned_names(text: str) -> list[str]:
    """The names ``text`` writes as code would, in order (at most ``MAX_NAMES``); no file names."""
    found: list[str] = []
    for pattern in (_ROUTE, _BACKTICKED, _CALLED, _WORD):
        for match in pattern.finditer(text):
            name = match.group(1)
            if pattern is _WORD and not _CODE_SHAPED.match(name):
                continue
            if len(name) >= 3 and not _FILE_LIKE.search(name) and name not in found:
                found.append(name)
    return found[:MAX_NAMES]


#: what a source file defines: a function, class or assignment at a line's start, or a route registered by
#: a decorator or a router's call (one pass over the file, kept while it does not change)
_DEFINED = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?(?:def|class|function|func|fn|const|let|var)"
                      r"[ \t]+([A-Za-z_]\w*)|^[ \t]*([A-Za-z_][\w.]*)[ \t]*=")
_REGISTERED = re.compile(r"""(?:\.(?:route|get|post|put|delete|patch)|\b(?:path|re_path|url|add_url_rule|"""
                         r"""HandleFunc|Handle))\s*\(\s*["']([^"'\n]{1,600})["']""")


def defined_names(text: str) -> frozenset[str]:
    """The names and routes ``text`` defines."""
    found = {m.group(1) or m.group(2) for m in _DEFINED.finditer(text)}
    return frozenset(found | {m.group(1) for m in _REGISTERED.finditer(text)})


class SourceIndex:
    """What each source file defines, by path, kept while its (mtime, size) stay the same: an ask that
    names code stats the folder's source files and reads only those that changed. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[Path, tuple[tuple[int, int], int, frozenset[str]]] = {}

    def defined(self, path: Path) -> tuple[int, frozenset[str]] | None:
        """(the text's length, the names it defines) of the file at ``path``; ``None`` when unreadable."""
        try:
            info = path.lstat()
        except OSError:
            return None
        signature = (info.st_mtime_ns, info.st_size)
        with self._lock:
            known = self._known.get(path)
        if known is not None and known[0] == signature:
            return known[1], known[2]
        text = read_text(path, MAX_FILE_BYTES)
        if text is None:
            return None
        entry = (signature, len(text), defined_names(text))
        with self._lock:
            if len(self._known) >= MAX_INDEXED:
                self._known.clear()
            self._known[path] = entry
        return entry[1], entry[2]

    def folder(self, root: Path, code_files: Sequence[str]) -> dict[str, frozenset[str]]:
        """What each of ``code_files`` (relative to ``root``; tests left out) defines, up to
        ``MAX_BYTES`` of source text in all."""
        defined: dict[str, frozenset[str]] = {}
        spent = 0
        for rel in code_files:
            if spent >= MAX_BYTES:
                break
            if _TEST_FILE.search(rel):
                continue
            found = self.defined(root / rel)
            if found is not None:
                defined[rel] = found[1]
                spent += found[0]
        return defined


def file_holding(root: Path, code_files: Sequence[str], names: Sequence[str],
                 index: SourceIndex | None = None) -> str | None:
    """The one source file of ``code_files`` (relative to ``root``; tests left out) that defines the
    first name of ``names`` exactly one file defines; ``None`` when none does. A name only mentioned
    (a call, an import, a comment) places nothing: the folder scan does not reach every file, and the
    file that mentions a name is seldom the one asked about. ``index``: files read before (else all
    are read now)."""
    if not names or not code_files:
        return None
    defined = (index if index is not None else SourceIndex()).folder(root, code_files)
    for name in names:
        defining = [rel for rel, names_there in defined.items() if name in names_there]
        if len(defining) == 1:
            return defining[0]
    return None
