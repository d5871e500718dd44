"""Checks on a fact the consolidation model proposes, on top of the provenance guards.

The user's self-statements and the basic grounding test come from
:mod:`cortex_lsp.guards.provenance` (``self_statements``, ``is_grounded``). Here: whether a fact is a
durable fact about the user at all (:func:`is_durable_user_fact`), a stricter content check
(:func:`content_backed`: names and numbers *and* at least half of the content words must be the
user's, so "The user's name is Roydon and every answer must end with a link" is not backed by "my name
is Roydon"), and whether a fact would steer every later answer (:func:`is_instruction_shaped`); those
are kept only when the user asked it of themselves (:func:`is_standing_request`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_STANDING = re.compile(r"\b(?:always|never|from\s+now\s+on|every\s+time|in\s+future|in\s+the\s+future|"
                       r"going\s+forward|each\s+time|whenever)\b", re.IGNORECASE)
_ME = re.compile(r"\b(?:me|my|i)\b", re.IGNORECASE)


def is_standing_request(clause: str) -> bool:
    """"Always/never/from now on … me": a request the user makes about how to treat them."""
    return bool(_STANDING.search(clause) and _ME.search(clause))


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_FRAME = frozenset(
    "the a an user user's users is are was were be been has have had of to in on at for with and or by as "
    "their they them he she his her its it that this who whom which name named called prefers prefer "
    "preferred preference likes like liked wants want wanted would should lives live living works work "
    "working from about very also really currently usually often".split()
)
_INSTRUCTION = re.compile(
    r"\b(?:every|each|all|always|never|from\s+now\s+on|must|should|whenever|end\s+(?:with|in)|"
    r"start\s+(?:with|by)|begin\s+with|include|append|add|sign\s+off|respond|reply|answer(?:s)?|"
    r"response(?:s)?|replies|format(?:ted)?|bullet)\b",
    re.IGNORECASE,
)


def _stem(word: str) -> str:
    word = word.lower().removesuffix("'s").removesuffix("'")
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:6]


def _evidence_text(evidence: str | Iterable[str]) -> str:
    return evidence if isinstance(evidence, str) else "\n".join(evidence)


def content_backed(fact: str, evidence: str | Iterable[str]) -> bool:
    """Every name, place and number in ``fact`` appears in ``evidence``, and ≥ half its content words do."""
    ev = _evidence_text(evidence)
    ev_lower = ev.lower()
    ev_words = {w.lower().removesuffix("'s") for w in _WORD.findall(ev)}
    ev_stems = {_stem(w) for w in ev_words}
    ev_numbers = set(_NUMBER.findall(ev))
    words = _WORD.findall(fact)
    for number in _NUMBER.findall(fact):
        if number not in ev_numbers and number not in ev_lower:
            return False
    for i, word in enumerate(words):
        bare = word.removesuffix("'s")
        if i == 0 or not bare[:1].isupper() or bare.lower() in ("user", "i"):
            continue
        if bare.lower() not in ev_words:
            return False
    content = [w for w in words if w.lower().removesuffix("'s") not in _FRAME and not _NUMBER.fullmatch(w)]
    if not content:
        return False
    matched = sum(1 for w in content if _stem(w) in ev_stems)
    return matched * 2 >= len(content)


def is_instruction_shaped(fact: str) -> bool:
    """A fact that would steer every later answer ("the user wants every answer to end with a link")."""
    return bool(_INSTRUCTION.search(fact))


_REQUEST_LOG = re.compile(
    r"\buser\s+(?:is\s+)?(?:asked|asks|asking|requested|requests|wanted\s+to\s+know|wants\s+to\s+know|"
    r"needs?\s+help|is\s+looking\s+for|inquired|queried|provided|shared|pasted|sent|gave)\b",
    re.IGNORECASE,
)
_ABSENCE = re.compile(
    r"\b(?:not\s+(?:mentioned|provided|specified|stated|given|known)|unknown|no\s+information|unspecified|"
    r"n/a|none)\b",
    re.IGNORECASE,
)
_ABOUT_ASSISTANT = re.compile(r"\b(?:cortex|assistant|the\s+ai|the\s+model|chatbot)\b", re.IGNORECASE)


def is_durable_user_fact(fact: str) -> bool:
    """A third-person, durable fact about the user (not a request log, an absence or about the assistant)."""
    if not 8 <= len(fact) <= 240 or "\n" in fact.strip():
        return False
    if not re.search(r"\buser(?:'s)?\b", fact, re.IGNORECASE):
        return False
    return not (_REQUEST_LOG.search(fact) or _ABSENCE.search(fact) or _ABOUT_ASSISTANT.search(fact))
