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
from collections.abc import Sequence
from pathlib import Path

from cortex_lsp.agent.project_view import read_text

#: bounds of one lookup
MAX_FILE_BYTES = 256 * 1024
MAX_BYTES = 4 * 1024 * 1024
MAX_NAMES = 4

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


def _defines(name: str) -> re.Pattern[str]:
    """A definition of ``name`` (a function, class or assignment at a line's start), or a route
    registered as ``name`` (a decorator or a router's call)."""
    if name.startswith("/"):
        return re.compile(r"""(?:\.(?:route|get|post|put|delete|patch)|\b(?:path|re_path|url|add_url_rule|HandleFunc|"""
                          r"""Handle))\s*\(\s*["']""" + re.escape(name) + r"""["']""")
    return re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?(?:def|class|function|func|fn|const|let|var)"
                      r"[ \t]+" + re.escape(name) + r"\b|^[ \t]*" + re.escape(name) + r"[ \t]*=")


def file_holding(root: Path, code_files: Sequence[str], names: Sequence[str]) -> str | None:
    """The one source file of ``code_files`` (relative to ``root``; tests left out) that defines the
    first name of ``names`` exactly one file defines; ``None`` when none does. A name only mentioned
    (a call, an import, a comment) places nothing: the folder scan does not reach every file, and the
    file that mentions a name is seldom the one asked about."""
    if not names or not code_files:
        return None
    texts: dict[str, str] = {}
    spent = 0
    for rel in code_files:
        if spent >= MAX_BYTES:
            break
        if _TEST_FILE.search(rel):
            continue
        text = read_text(root / rel, MAX_FILE_BYTES)
        if text is not None:
            texts[rel] = text
            spent += len(text)
    for name in names:
        pattern = _defines(name)
        defining = [rel for rel, text in texts.items() if pattern.search(text)]
        if len(defining) == 1:
            return defining[0]
    return None
