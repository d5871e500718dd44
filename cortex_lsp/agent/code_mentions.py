"""The source file a request means when it names what is in it, not the file: "what does the /health
endpoint return?", "what does `register()` give back?", "where is parse_date defined?".

:func:`mentioned_names` finds the names a request writes as code would (a URL route, a name with an
underscore or inner capital, a call, a backticked name); :func:`file_holding` looks for them in the
open folder's source files (the bounded list of :mod:`cortex_lsp.agent.project_view`) and gives the
one file that defines them, or the one that holds them. Blocking (it reads files): the classifier's
worker thread calls it. Reading only finds a slot: the route still reads the file through the tools
and every path guard.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

#: bounds of one lookup
MAX_FILE_BYTES = 256 * 1024
MAX_BYTES = 4 * 1024 * 1024
MAX_NAMES = 4

_ROUTE = re.compile(r"(?<![\w/.~-])(/[A-Za-z][\w-]*(?:/[\w<>{}:-]+)*)(?![\w/.])")
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w{2,})\(\)")
_SNAKE = re.compile(r"(?<![\w.])([a-z]\w*_\w+)(?![\w.(])")
_CAMEL = re.compile(r"(?<![\w.])([a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)(?![\w.(])")
_FILE_LIKE = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def mentioned_names(text: str) -> list[str]:
    """The names ``text`` writes as code would, in order (at most ``MAX_NAMES``); no file names."""
    found: list[str] = []
    for pattern in (_ROUTE, _BACKTICKED, _CALLED, _SNAKE, _CAMEL):
        for match in pattern.finditer(text):
            name = match.group(1)
            if len(name) >= 3 and not _FILE_LIKE.search(name) and name not in found:
                found.append(name)
    return found[:MAX_NAMES]


def _defines(name: str) -> re.Pattern[str]:
    """A definition of ``name`` (a function, class or assignment), or a route registered as ``name``."""
    if name.startswith("/"):
        return re.compile(r"""(?:route|get|post|put|delete|patch|path|url|add_url_rule|HandleFunc)\s*\(\s*["']"""
                          + re.escape(name) + r"""["']""", re.IGNORECASE)
    return re.compile(r"(?m)^\s*(?:async\s+)?(?:def|class|function|func|fn|const|let|var)\s+" + re.escape(name)
                      + r"\b|^\s*" + re.escape(name) + r"\s*=")


def _holds(name: str) -> re.Pattern[str]:
    if name.startswith("/"):
        return re.compile(r"""["'`]""" + re.escape(name) + r"""["'`/?]""")
    return re.compile(r"(?<![\w.])" + re.escape(name) + r"\b")


def _read(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        return os.read(fd, MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def file_holding(root: Path, code_files: Sequence[str], names: Sequence[str]) -> str | None:
    """The one source file of ``code_files`` (relative to ``root``) that defines the first name of
    ``names`` it can place, else the one that holds it; ``None`` when no name is in exactly one file."""
    if not names or not code_files:
        return None
    texts: dict[str, str] = {}
    spent = 0
    for rel in code_files:
        if spent >= MAX_BYTES:
            break
        text = _read(root / rel)
        if text is not None:
            texts[rel] = text
            spent += len(text)
    for name in names:
        defining = [rel for rel, text in texts.items() if _defines(name).search(text)]
        if len(defining) == 1:
            return defining[0]
        holding = [rel for rel, text in texts.items() if _holds(name).search(text)]
        if not defining and len(holding) == 1:
            return holding[0]
    return None
