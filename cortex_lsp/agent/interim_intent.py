"""A stand-in for :mod:`cortex_lsp.guards.intent` (being built on another branch), with its API.

Built from the provenance predicates that exist today, so the router can be written and tested
against the shared ``Intent`` interface. :func:`cortex_lsp.agent.router.read_intent` prefers the real
module whenever it is importable; this file goes away once that module is merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cortex_lsp.agent.runnability import extract_code
from cortex_lsp.guards._material import FILE_NAME_RE
from cortex_lsp.guards.provenance import (
    asks_for_file_write,
    asks_for_overwrite,
    asks_to_run_code,
    asks_to_write,
    request_text,
    user_urls,
)

_VERBS = {
    "save": r"sav(?:e|es|ing)|stor(?:e|es|ing)|export|dump",
    "write": r"writ(?:e|es|ing)|put",
    "create": r"creat(?:e|es|ing)|make|generate",
    "list": r"list|ls",
    "read": r"read|open|show|cat|view|look\s+at",
    "summarize": r"summari[sz]e|summary",
    "explain": r"explain",
    "search": r"search|find|grep|look\s+for",
    "fetch": r"fetch|download|get|browse|visit",
    "run": r"run|execute|exec",
    "compute": r"calculate|compute|evaluate",
}
_VERB_RE = {verb: re.compile(rf"\b(?:{alts})\b", re.IGNORECASE) for verb, alts in _VERBS.items()}
_NEGATION = re.compile(r"\b(?:don'?t|do\s+not|never|without|no)\b[^.?!\n]{0,30}$", re.IGNORECASE)
_QUESTION = re.compile(r"\?\s*$|^\s*(?:what|who|when|where|why|how|which|is|are|does|do|can)\b", re.IGNORECASE)
_ARITH = re.compile(r"[(\d][\d\s.()]*(?:(?:\*\*|[-+*/×÷^%])\s*[(\d.][\d\s.()]*)+")


@dataclass(frozen=True)
class WriteGrant:
    create: frozenset[str]
    replace: frozenset[str]
    unnamed_create: bool

    def check(self, relative: str, *, exists: bool) -> str | None:
        return None if relative in self.create | self.replace else "the user did not name this file"

    def describe(self) -> str:
        return "may write: " + (", ".join(sorted(self.create | self.replace)) or "nothing")


@dataclass(frozen=True)
class Intent:
    words: str
    kind: str
    files: tuple[str, ...]
    urls: tuple[str, ...]
    run_code: bool
    code: str | None
    arithmetic: str | None
    grant: WriteGrant

    def wants(self, *verbs: str) -> bool:
        for verb in verbs:
            pattern = _VERB_RE.get(verb)
            if pattern is None:
                continue
            for match in pattern.finditer(self.words):
                if not _NEGATION.search(self.words[: match.start()]):
                    return True
        return False

    def targets_of(self, *verbs: str) -> tuple[str, ...]:
        if any(v in ("save", "write", "create") for v in verbs):
            return tuple(sorted(self.grant.create | self.grant.replace))
        return self.files if self.wants(*verbs) else ()

    @property
    def write_grant(self) -> WriteGrant:
        return self.grant


def parse_intent(message: str, *, selection: str | None = None) -> Intent:
    words = request_text(message)
    files = tuple(dict.fromkeys(m.group(0) for m in FILE_NAME_RE.finditer(words)))
    create: set[str] = set()
    replace: set[str] = set()
    if asks_for_file_write(words):
        for name in files:
            named = re.search(
                r"\b(?:to|into|as|called|named|file)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:file\s+)?"
                r"(?:called\s+|named\s+)?" + re.escape(name), words, re.IGNORECASE)
            if named and asks_to_write(words, name):
                (replace if asks_for_overwrite(words) else create).add(name)
    code = selection if selection and selection.strip() else extract_code(message)
    arith = _ARITH.search(words)
    expression = arith.group(0).strip() if arith else None
    return Intent(
        words=words,
        kind="question" if _QUESTION.search(words) else "instruction",
        files=files,
        urls=tuple(user_urls(message)),
        run_code=asks_to_run_code(words),
        code=code,
        arithmetic=expression,
        grant=WriteGrant(frozenset(create), frozenset(replace), asks_for_file_write(words) and not files),
    )
