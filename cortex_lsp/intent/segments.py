"""Sentences and clauses for the clause analysis (:mod:`cortex_lsp.intent.clauses`).

The tokens of the user's own words (:mod:`cortex_lsp.intent.tokens`) are split into sentences (at
``. ! ?`` and line breaks) and each sentence into clauses: at ``, ; :`` and dashes, at "but" and its
kin, and before a conditional, reason or embedded-question word (if/when/because/how/whether, in four
languages). Each clause carries what its sentence is (a question, a polite request) and how it starts
("cond", "reason", "embedded"); the clause after a hypothetical one is its consequence. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from cortex_lsp.intent import lexicon as lx
from cortex_lsp.intent.tokens import Tok, phrase_words

__all__ = ["Clause", "clauses", "line_starts", "sentences", "starts"]

_POLITE = tuple(phrase_words(p) for p in lx.POLITE_STARTS)
#: a clause starting with one of these makes the clause after it its consequence (a conditional too)
_HYPOTHETICAL = frozenset("if unless suppose supposing assuming falls wenn sofern si".split())


def starts(words: list[str], i: int, phrase: tuple[str, ...]) -> bool:
    """Does ``phrase`` stand in ``words`` at position ``i``?"""
    return tuple(words[i : i + len(phrase)]) == phrase


@dataclass
class Clause:
    """One clause of a sentence: its tokens, how it starts and what its sentence is."""

    toks: list[Tok]
    start: str = ""  # "" | "cond" | "reason" | "embedded"
    question: bool = False
    polite: bool = False
    carried_negation: bool = False
    carried_request: bool = False

    @property
    def words(self) -> list[str]:
        return [t.text for t in self.toks if t.kind == "word"]

    def text(self) -> str:
        return " ".join(t.text for t in self.toks if t.kind != "punct" or t.text not in "\n")


def sentences(toks: list[Tok]) -> list[list[Tok]]:
    """The sentences of ``toks`` (ending at ``. ! ?`` or a line break), empty ones left out."""
    out: list[list[Tok]] = [[]]
    for t in toks:
        out[-1].append(t)
        if t.kind == "punct" and t.text in ".!?\n":
            out.append([])
    return [s for s in out if any(t.kind != "punct" for t in s)]


def line_starts(toks: list[Tok]) -> list[int]:
    """The line (count of newlines before it) each sentence of :func:`sentences` starts on."""
    out: list[int] = []
    line = 0
    fresh = True
    for t in toks:
        if fresh and t.kind != "punct":
            out.append(line)
            fresh = False
        if t.kind == "punct" and t.text == "\n":
            line += 1
        if t.kind == "punct" and t.text in ".!?\n":
            fresh = True
    return out


def _skip_fillers(words: list[str]) -> int:
    i = 0
    while i < len(words) and (words[i] in lx.FILLERS or words[i] in ("go", "ahead")):
        i += 1
    return i


def _sentence_flags(sent: list[Tok]) -> tuple[bool, bool]:
    """(question, polite) for a sentence."""
    words = [t.text for t in sent if t.kind == "word"]
    if not words:
        return False, False
    i = _skip_fillers(words)
    rest = words[i:]
    polite = any(starts(rest, 0, p) for p in _POLITE) or any(starts(words, 0, p) for p in _POLITE)
    if polite:
        return False, True
    asked = any(t.kind == "punct" and t.text in "?¿" for t in sent)
    if not rest:
        return asked, False
    first = rest[0]
    second = rest[1] if len(rest) > 1 else ""
    if first in lx.STRONG_QUESTION_STARTS or (first == "por" and second == "qué"):
        return True, False
    if first in lx.SELF_MODALS | lx.INTERROGATIVE_STARTS and second in lx.SUBJECT_PRONOUNS | {"there", "you"}:
        return True, False
    return asked, False


def clauses(sent: list[Tok]) -> list[Clause]:
    """The clauses of one sentence (see the module docstring)."""
    question, polite = _sentence_flags(sent)
    clauses: list[Clause] = [Clause([], question=question, polite=polite)]
    for t in sent:
        cur = clauses[-1]
        has_words = any(x.kind == "word" for x in cur.toks)
        if t.kind == "punct" and t.text.strip() in (",", ";", ":", "—", "–", "-"):
            clauses.append(Clause([], question=question, polite=polite))
            continue
        if t.kind == "word" and has_words:
            new = ""
            if t.text in lx.COND_MARKERS:
                new = "cond"
            elif t.text in lx.REASON_MARKERS and t.text != "as":
                new = "reason"
            elif t.text in lx.MIDCLAUSE_QUESTION:
                new = "embedded"
            elif t.text in lx.SPLITTERS:
                clauses.append(Clause([], question=question, polite=polite))
                continue
            if new:
                clauses.append(Clause([t], start=new, question=question, polite=polite))
                continue
        elif t.kind == "word" and not has_words:
            if t.text in lx.COND_MARKERS:
                cur.start = "cond"
            elif t.text in lx.REASON_MARKERS and t.text != "as":
                cur.start = "reason"
            elif t.text in lx.MIDCLAUSE_QUESTION and len(clauses) > 1:
                cur.start = "embedded"
        cur.toks.append(t)
    kept = [c for c in clauses if c.toks]
    # "If the tests pass, save it to x.md": the clause after a hypothetical one is its consequence,
    # a conditional too (a temporal "when you're done, save …" stays a request)
    for before, after in pairwise(kept):
        if before.start == "cond" and before.words and before.words[0] in _HYPOTHETICAL and not after.start:
            after.start = "cond"
    return kept
