"""The user's own words, parsed once into a typed intent that every guard reads.

:func:`parse_intent` first applies the provenance cuts (:class:`~cortex_lsp.intent.provenance.UserTurn`:
the selection, quoted, fenced and pasted material are data), then a small clause analysis in code:

1. the words are split into sentences and clauses (at ``, ; :``, "but", and before a conditional,
   reason or embedded-question word such as if/when/because/how/whether, in four languages);
2. each clause's verbs are looked up in the lemma tables of :mod:`cortex_lsp.intent.lexicon`
   (English, German, French, Spanish, with colloquial idioms such as "jot down", "put it in");
3. each verb gets a polarity (a negator before it, or a clause-wide one such as "nicht", "pas",
   "nothing"; "don't forget to" is a request), a mood (imperative, request, question, past,
   conditional, statement) and its targets (the file names of its clause, sources such as
   "from x.csv" left out).

Only an :class:`Action` that is not negated and is an imperative or a request ``grants`` anything; the
:class:`~cortex_lsp.intent.grants.WriteGrant` collects the files such actions name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from cortex_lsp.intent.about import prepare, settle
from cortex_lsp.intent.clauses import CREATE_VERBS, REPLACE_VERBS, Action, analyse
from cortex_lsp.intent.cues import Cues, read_cues, urls_in
from cortex_lsp.intent.grants import WriteGrant, path_key
from cortex_lsp.intent.patterns import FENCED
from cortex_lsp.intent.provenance import UserTurn, instruction_text, request_text

__all__ = ["Action", "Cues", "Intent", "WriteGrant", "parse_intent"]


@dataclass(frozen=True)
class Intent:
    """What the user's own words ask for (see the module docstring)."""

    words: str
    kind: str
    actions: tuple[Action, ...]
    files: tuple[str, ...]
    urls: tuple[str, ...]
    run_code: bool
    code: str | None
    arithmetic: str | None
    #: the user asked to save, named no file, and the clause said "a file" (or used a save verb)
    unnamed_save: bool = field(default=False, repr=False)
    #: the keyword readings of the same words (:mod:`cortex_lsp.intent.cues`): web, run, Python, tools …
    cues: Cues = field(default=Cues(), repr=False)
    #: the message as given to :func:`parse_intent`, before any cut
    message: str = field(default="", repr=False, compare=False)

    @cached_property
    def wide_reading(self) -> Intent:
        """The same message read more widely, once: quotes, fences and pasted material still cut, but
        not hand-overs or reported speech ("tell me what notes.md says" asks for a tool). Whether a
        request is plain chat may read this; no side effect does."""
        return _read(instruction_text(self.message), None)

    def wants(self, *verbs: str) -> bool:
        """Is there a granting action with one of these verbs?"""
        return any(a.grants and a.verb in verbs for a in self.actions)

    def targets_of(self, *verbs: str) -> tuple[str, ...]:
        """The files named by granting actions with one of these verbs, in order, without repeats."""
        out: list[str] = []
        for a in self.actions:
            if a.grants and a.verb in verbs:
                out.extend(t for t in a.targets if t not in out)
        return tuple(out)

    def refuses(self, *verbs: str) -> bool:
        """Did the user say *not* to do one of these ("don't overwrite", "never save")?"""
        return any(a.negated and a.verb in verbs for a in self.actions)

    @property
    def asks_delete(self) -> bool:
        """A delete request: delete words (:attr:`Cues.delete`), unless every delete verb in them is
        negated, a question, past or conditional ("don't delete anything", "how do I delete…?")."""
        return self.cues.delete and self._granted_if_any("delete")

    @property
    def asks_move(self) -> bool:
        """A rename/move request (:attr:`Cues.move`), read like :attr:`asks_delete`."""
        return self.cues.move and self._granted_if_any("rename", "move")

    def _granted_if_any(self, *verbs: str) -> bool:
        found = [a for a in self.actions if a.verb in verbs]
        return not found or any(a.grants for a in found)

    @property
    def tools(self) -> frozenset[str]:
        """The tools the user's words call for, read strictly (``write_file`` only with a write grant)."""
        return self.cues.tools | ({"write_file"} if not self.write_grant.empty else set())

    @property
    def hinted_tools(self) -> frozenset[str]:
        """The tools the user's words may need, read widely (recovery nudges, procedural learning)."""
        extra = {"write_file"} if not self.write_grant.empty else set()
        if self.run_code:
            extra.add("python_exec")
        return self.cues.hints | extra

    @property
    def write_grant(self) -> WriteGrant:
        return WriteGrant(
            create=frozenset(self.targets_of(*CREATE_VERBS)),
            replace=frozenset(self.targets_of(*REPLACE_VERBS)),
            unnamed_create=self.unnamed_save,
        )


# ------------------------------------------------------------------------------------------------
# code and arithmetic

_ARITH = re.compile(r"[-(]?\s*\d[\d.,]*(?:\s*(?:\*\*|[-+*/×÷^%x])\s*\(?\s*-?\d[\d.,]*\)?)+\)?")
_ARITH_WORDS = (
    (re.compile(r"\s+(?:times|multiplied\s+by|mal)\s+", re.IGNORECASE), "*"),
    (re.compile(r"\s+(?:divided\s+by|geteilt\s+durch)\s+", re.IGNORECASE), "/"),
    (re.compile(r"\s+(?:plus)\s+", re.IGNORECASE), "+"),
    (re.compile(r"\s+(?:minus)\s+", re.IGNORECASE), "-"),
)


def _code_at_hand(message: str, selection: str | None) -> str | None:
    if selection and selection.strip():
        return selection
    blocks = FENCED.findall(message)
    return blocks[-1][1] if blocks else None


_DATE = re.compile(r"\d{1,4}([-/.])\d{1,2}\1\d{1,4}")


_HEX = re.compile(r"\b0x[0-9a-f]+\b", re.IGNORECASE)


def _arithmetic(words: str) -> str | None:
    text = _HEX.sub(" ", words)  # 0x1F is a number written in hexadecimal, not 0 times 1
    for pattern, op in _ARITH_WORDS:
        text = pattern.sub(op, text)
    text = re.sub(r"(?<=\d)\s*x\s*(?=\d)", "*", text)
    best = ""
    for m in _ARITH.finditer(text):
        if _DATE.fullmatch(m.group(0).strip()):
            continue  # 2024-05-01, 5/12/2024: a date, not a sum
        if len(m.group(0)) > len(best):
            best = m.group(0)
    if not best:
        return None
    expr = best.replace("×", "*").replace("÷", "/").replace("^", "**").replace(" ", "")
    expr = expr.strip(",.")
    if expr.count("(") != expr.count(")"):
        expr = expr.replace("(", "").replace(")", "")
    return expr or None


# ------------------------------------------------------------------------------------------------


def parse_intent(message: str, *, selection: str | None = None) -> Intent:
    """Parse the user's own words (after the provenance cuts) into an :class:`Intent`."""
    return _read(message, selection)


def _read(message: str, selection: str | None) -> Intent:
    if len(message) > 32_768:
        return _parse(message, selection)
    return _parse_cached(message, selection)


@lru_cache(maxsize=256)
def _parse_cached(message: str, selection: str | None) -> Intent:
    return _parse(message, selection)


def _parse(message: str, selection: str | None) -> Intent:
    words = UserTurn(words=message, selection=selection).own_words
    words = request_text(words)
    found = settle(analyse(prepare(words)), message)
    cues = read_cues(words)
    granting = any(a.grants for a in found.actions)
    kind = "question" if found.any_question and not granting else "instruction"
    # only a granting run of code or "use Python to …" (intent/asks.py): not "run me through", not a
    # negated or questioned "run", not the word "Python"
    run = cues.run or cues.python
    return Intent(
        words=words,
        kind=kind,
        actions=found.actions,
        files=found.files,
        urls=tuple(urls_in(words)),
        run_code=run,
        code=_code_at_hand(message, selection) if run else None,
        arithmetic=_arithmetic(words),
        unnamed_save=found.unnamed_save,
        cues=cues,
        message=message,
    )


def describe_actions(intent: Intent) -> str:
    """A compact, human-readable rendering of the actions (for notes and test failures)."""
    return "; ".join(
        f"{'not ' if a.negated else ''}{a.verb}[{a.mood}]{'->' + ','.join(a.targets) if a.targets else ''}"
        for a in intent.actions
    )


def grant_key(path: str) -> str:
    """Re-exported :func:`~cortex_lsp.intent.grants.path_key` for callers of this module."""
    return path_key(path)
