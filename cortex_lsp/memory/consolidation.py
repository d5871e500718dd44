"""Consolidation: turn the user's own self-statements into durable facts.

The model sees only the self-statement clauses of the user's latest message (never the conversation,
never pasted or quoted material). Whatever it returns is a claim: a fact is kept only if it is a
durable fact about the user, the user's words back it with the same polarity (one check,
:func:`cortex_lsp.intent.self_talk.fact_backing`: names, numbers and content words, and never the
opposite of what the user said), and, when it would steer later answers ("the user wants every
answer to…"), the user asked it of themselves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cortex_lsp.intent.self_talk import fact_backing, is_grounded, self_statements
from cortex_lsp.memory import grounding
from cortex_lsp.models.base import ChatOptions, Message, ModelClient, collect

MAX_FACTS = 3

CONSOLIDATION_PROMPT = (
    "You extract durable facts about a person from sentences they wrote about themselves.\n"
    "Rules:\n"
    "- Use only the sentences given. Do not guess or add anything.\n"
    '- Write each fact as one short sentence that starts with "The user" '
    '(for example: "The user\'s name is Sam.", "The user prefers Go.").\n'
    "- Keep names, places, times and numbers exactly as written.\n"
    '- Keep negations and the past: "I am not a chef" gives "The user is not a chef.", '
    '"I no longer live in Rome" gives "The user no longer lives in Rome.".\n'
    "- Skip questions, one-off requests and anything that is not about the person.\n"
    "- If there is nothing durable, return an empty list.\n"
    'Reply with JSON only: {"facts": ["..."]}'
)

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}


@dataclass(frozen=True)
class Verdict:
    fact: str
    kept: bool
    reason: str = ""


def build_messages(statements: Sequence[str]) -> list[Message]:
    lines = "\n".join(f"- {s}" for s in statements)
    return [Message("system", CONSOLIDATION_PROMPT), Message("user", f"Sentences:\n{lines}")]


_JSON_SPAN = re.compile(r"(\{[\s\S]*\}|\[[\s\S]*\])")


def parse_facts(text: str) -> list[str]:
    """Facts from the model's reply: ``{"facts": [...]}``, a bare list, fenced JSON or bullet lines."""
    text = re.sub(r"<think>[\s\S]*?</think>", "", text).strip()
    match = _JSON_SPAN.search(text)
    data: Any = None
    if match:
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError:
            data = None
    if isinstance(data, dict):
        data = data.get("facts", [])
    if isinstance(data, list):
        return [str(x).strip() for x in data if isinstance(x, str | int | float) and str(x).strip()]
    out = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*•0123456789.) ").strip()
        if line:
            out.append(line)
    return out


def judge(fact: str, statements: Sequence[str]) -> Verdict:
    """Keep ``fact`` only if the user's own ``statements`` back it."""
    fact = " ".join(fact.split()).strip().strip('"').strip()
    evidence = "\n".join(statements)
    if not grounding.is_durable_user_fact(fact):
        return Verdict(fact, False, "not a durable fact about the user")
    why_not = fact_backing(fact, evidence)
    if why_not is not None:
        return Verdict(fact, False, why_not)
    if grounding.is_instruction_shaped(fact):
        standing = [s for s in statements if grounding.is_standing_request(s) or _prefers(s)]
        if not standing or not is_grounded(fact, standing):
            return Verdict(fact, False, "an instruction the user did not ask of themselves")
    return Verdict(fact, True)


_PREFERS = re.compile(r"\bi\s+(?:prefer|like|want|need|would\s+like|'d\s+like)\b(?!\s+you\b)", re.IGNORECASE)


def _prefers(statement: str) -> bool:
    """ "I prefer short answers": the user's own preference about how to be answered."""
    return bool(_PREFERS.search(statement))


async def extract_facts(client: ModelClient, model: str, message: str) -> tuple[list[str], list[Verdict]]:
    """The facts worth keeping from the user's ``message`` (and every verdict, for logs and tests).

    Makes no model call when the message holds no self-statement.
    """
    statements = self_statements(message)
    if not statements:
        return [], []
    reply = await collect(
        client.chat_stream(
            build_messages(statements), model=model, format=FACTS_SCHEMA, options=ChatOptions(temperature=0.0)
        )
    )
    verdicts = [judge(f, statements) for f in parse_facts(reply.content)]
    kept: list[str] = []
    for v in verdicts:
        if v.kept and v.fact not in kept:
            kept.append(v.fact)
    return kept[:MAX_FACTS], verdicts
