"""Regular expressions compiled on first use.

The word-math readers (units, motion, rates, money, interest) build patterns from long alternations of
unit and currency names in seven languages: compiling them all costs ~0.4 s of CPU, which a fresh
server's first ask would otherwise wait for even when it holds no number. A :class:`LazyPattern` is
compiled the first time it is used; :func:`compile_all` compiles every one made so far (the warm-up
calls it in its background thread once a first command's imports are in).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

_made: list[LazyPattern] = []
_lock = threading.Lock()


class LazyPattern:
    """The part of :class:`re.Pattern`'s interface the readers use, compiled on first use."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        with _lock:
            _made.append(self)

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:  # two threads may both compile it: the same pattern either way
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    @property
    def pattern(self) -> str:
        return self._source

    def search(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        return self.compiled.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        return self.compiled.match(text, pos, endpos)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        return self.compiled.fullmatch(text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, pos, endpos)

    def findall(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> list[Any]:
        return self.compiled.findall(text, pos, endpos)

    def sub(self, repl: Any, text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count)


def lazy(source: str, flags: int = 0) -> LazyPattern:
    """A pattern compiled the first time it is used."""
    return LazyPattern(source, flags)


def compile_all() -> int:
    """Compile every lazy pattern made so far; returns how many were compiled now."""
    with _lock:
        pending = [p for p in _made if p._compiled is None]
    for pattern in pending:
        _ = pattern.compiled
    return len(pending)
