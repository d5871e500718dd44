"""The web addresses a user typed: every URL (``https://...``) and bare host (``example.com/docs``) in
their own words, as :mod:`cortex_lsp.guards.urls` compares a fetched address with them and
:mod:`cortex_lsp.intent.asks` finds the address a fetch action names. Pure; regexes compiled once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cortex_lsp.intent.patterns import SCHEME_URL

__all__ = ["user_typed_urls"]

# A bare host (with an optional port and path): labels, a letter-led top-level label.
_BARE_HOST = re.compile(
    r"(?i)(?<![\w@.\-/:])"
    r"((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{1,62})"
    r"(?::(\d{1,5}))?"
    r"(/[^\s<>\"'`]*)?"
)
# File names look like bare hosts ("notes.md", "main.py"); a name the user typed as a file is not an
# address they asked to open.
# A bare name whose top-level label is also a common file extension ("report.sh", "setup.py", "main.rs",
# "node.js") is a file unless the user wrote a scheme or "www.".
_FILE_SUFFIXES = frozenset(
    {"txt", "md", "json", "csv", "py", "pyc", "yaml", "yml", "log", "toml", "ini", "cfg", "lock", "ipynb",
     "rst", "tsv", "sqlite", "db", "sh", "bash", "zsh", "rs", "go", "js", "mjs", "cjs", "ts", "tsx", "jsx",
     "rb", "pl", "php", "java", "kt", "swift", "c", "h", "cc", "cpp", "hpp", "cs", "html", "htm", "css",
     "scss", "xml", "sql", "lua", "r", "m", "dart", "ex", "exs", "erl", "hs", "ml", "scala", "clj", "nix",
     "tf", "vue", "zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar", "exe", "dll", "so", "bin", "bat",
     "ps1", "cmd", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "png", "jpg", "jpeg", "gif",
     "svg", "ico", "mp3", "mp4", "mov", "wav", "avi", "mkv", "bak", "tmp", "dat", "env", "conf", "pem",
     "key", "crt", "jar", "war", "whl", "deb", "rpm", "iso", "img", "dmg", "apk", "mk", "gradle", "cmake",
     "proto", "diff", "patch", "srt", "tex", "bib"}
)
_TRAILING_PUNCT = ".,;:!?'\""
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim(candidate: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from the end of a URL in prose."""
    while candidate:
        last = candidate[-1]
        if last in _TRAILING_PUNCT:
            candidate = candidate[:-1]
        elif last in _CLOSERS and candidate.count(last) > candidate.count(_CLOSERS[last]):
            candidate = candidate[:-1]
        else:
            break
    return candidate


def user_typed_urls(user_turns: Iterable[str]) -> list[str]:
    """Every URL (``https://...``) and bare host (``example.com/docs``) written in ``user_turns``.

    The caller passes only the user's own words. Bare hosts are returned without a scheme.
    """
    found: list[str] = []
    for turn in user_turns:
        if not isinstance(turn, str):
            continue
        for match in SCHEME_URL.finditer(turn):
            url = _trim(match.group(0))
            if url and url not in found:
                found.append(url)
        rest = SCHEME_URL.sub(" ", turn)
        for match in _BARE_HOST.finditer(rest):
            host, port = match.group(1), match.group(2)
            label = host.rsplit(".", 1)[-1].lower()
            if label in _FILE_SUFFIXES and not host.lower().startswith("www.") and not port:
                continue
            bare = _trim(match.group(0))
            if bare and bare not in found:
                found.append(bare)
    return found
