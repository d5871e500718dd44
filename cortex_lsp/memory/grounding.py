"""Checks on a fact the consolidation model proposes, on top of the provenance guards.

The user's self-statements and the one grounding check (names, numbers, content words and polarity)
live in :mod:`cortex_lsp.intent.self_talk` (``self_statements``, ``fact_backing``). Here: whether a
fact is a durable fact about the user at all (:func:`is_durable_user_fact`), and whether it would
steer every later answer (:func:`is_instruction_shaped`); those are kept only when the user asked it
of themselves (:func:`is_standing_request`).
"""

from __future__ import annotations

import re

_STANDING = re.compile(r"\b(?:always|never|from\s+now\s+on|every\s+time|in\s+future|in\s+the\s+future|"
                       r"going\s+forward|each\s+time|whenever)\b", re.IGNORECASE)
_ME = re.compile(r"\b(?:me|my|i)\b", re.IGNORECASE)


def is_standing_request(clause: str) -> bool:
    """"Always/never/from now on … me": a request the user makes about how to treat them."""
    return bool(_STANDING.search(clause) and _ME.search(clause))


_INSTRUCTION = re.compile(
    r"\b(?:every|each|all|always|never|from\s+now\s+on|must|should|whenever|end\s+(?:with|in)|"
    r"start\s+(?:with|by)|begin\s+with|include|append|add|sign\s+off|respond|reply|answer(?:s)?|"
    r"response(?:s)?|replies|format(?:ted)?|bullet)\b",
    re.IGNORECASE,
)


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
