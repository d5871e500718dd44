"""Tokens for the clause analysis (:mod:`cortex_lsp.intent.clauses`): file names (``notes.md``,
``docs/a.md``, ``.env``, ``Makefile``), lower-cased words and clause punctuation, with URLs removed,
English contractions ("don't" → "do not") and French elisions ("n'enregistre" → "ne enregistre")
undone. Pure; regexes compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cortex_lsp.intent.patterns import URL

__all__ = ["Tok", "phrase_words", "tokens"]

_BARE_NAMES = (
    "makefile|gnumakefile|dockerfile|containerfile|jenkinsfile|vagrantfile|procfile|gemfile|rakefile|"
    "justfile|pipfile"
)
_FILE = (
    r"(?<![\w@./-])(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9_-]{0,9}(?![\w/-])"
    r"|(?<![\w@./-])\.[A-Za-z][\w-]*(?:[./][\w-]+)*(?![\w/-])"
    rf"|\b(?:{_BARE_NAMES})\b"
)
_TOKEN = re.compile(rf"(?P<file>{_FILE})|(?P<word>\w+)|(?P<punct>[?!.,;:¿¡\n]|[—–]|\s-\s)", re.IGNORECASE)
_ABBREVIATIONS = frozenset("e.g i.e z.b d.h u.a p.s a.m p.m u.s etc.pp".split())
_CONTRACTION = re.compile(r"\b(can|won|shan|ain)'t\b|(\w)n't\b", re.IGNORECASE)
_ELISION = re.compile(r"(?<![\w'])(qu|[ndljstmc])'(?=\w)", re.IGNORECASE)
_BACKSLASH_PATH = re.compile(r"(?<=\w)\\(?=\w)")


def _contraction(m: re.Match[str]) -> str:
    if m.group(1):
        word = m.group(1).lower()
        return {"can": "can not", "won": "will not", "shan": "shall not", "ain": "is not"}[word]
    return f"{m.group(2)} not"


@dataclass
class Tok:
    kind: str  # "file" | "word" | "punct"
    text: str  # as typed (files) or lower-cased (words)


def tokens(text: str) -> list[Tok]:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    text = URL.sub(" ", text)
    text = re.sub(r"(?i)\bs'il\b", "s il", text)
    text = _CONTRACTION.sub(_contraction, text)
    text = _ELISION.sub(lambda m: m.group(1) + "e ", text)
    text = _BACKSLASH_PATH.sub("/", text)
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        if m.group("file"):
            name = m.group("file")
            if name.lower() in _ABBREVIATIONS:
                out.append(Tok("word", name.lower().replace(".", "")))
            else:
                out.append(Tok("file", name))
        elif m.group("word"):
            out.append(Tok("word", m.group("word").lower()))
        else:
            out.append(Tok("punct", m.group("punct")))
    return out


def phrase_words(phrase: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t.text for t in tokens(" ".join(phrase)) if t.kind == "word")
