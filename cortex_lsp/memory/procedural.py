"""Procedural memory: the tool sequences of successful runs, offered back for near-duplicate tasks.

Only tool names are stored and offered (never arguments, outputs or file text); the task's text (the
key for near-duplicates) lives in SQLite, its vector in Chroma (ids and vectors only). A run whose tool
choice was steered by a file or page, or that was itself hinted by this memory, is never learned:
the first would let data pick tools for later tasks, the second would reinforce its own hint.
Hints are offered only for tasks at least ``procedural_min_relevance`` similar (cosine).
:func:`material_steers` is the other half of "steered": a request that carried a selection, a
diagnostic or pasted material naming a tool or an action is never learned either, whatever the run did.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cortex_lsp.intent.provenance import normalize, request_text
from cortex_lsp.memory.api import ToolPattern
from cortex_lsp.memory.chroma import Embedder
from cortex_lsp.memory.texts import TaskText, TaskTexts
from cortex_lsp.memory.vectors import VectorIndex

_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_TOOLS = 10


def pattern_id(task: str) -> str:
    return "proc-" + hashlib.sha1(" ".join(task.lower().split()).encode()).hexdigest()


def clean_tools(tools: list[str], known: set[str] | None = None) -> list[str]:
    """Tool names only: identifiers, optionally only registered ones; at most :data:`MAX_TOOLS`."""
    out = [t for t in tools if isinstance(t, str) and _TOOL_NAME.match(t) and (known is None or t in known)]
    return out[:MAX_TOOLS]


# Words that name an action a tool could take; a tool's own name and its parts count too.
ACTION_WORDS = frozenset(
    """run runs execute exec eval call invoke use fetch download upload browse visit open read write save
    store create delete remove rm rename move copy search grep find list ls compute calculate install
    curl wget post send query http https tool tools""".split()
)
_TOKEN = re.compile(r"[a-z][a-z0-9_]*")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for token in _TOKEN.findall(normalize(text).lower()):
        out.append(token)
        if "_" in token:  # fetch_all, os_system: the parts name actions too
            out.extend(part for part in token.split("_") if part)
    return out


def material_steers(
    message: str, *, selection: str | None = None, diagnostic: str | None = None, tools: Iterable[str] = ()
) -> bool:
    """Did the request carry material (a selection, a diagnostic, or pasted/quoted text in the message)
    that names a tool (``tools``, or a part of one: ``web_fetch`` → "fetch") or an action verb?

    Such a run is not learned: data could otherwise pick the tools of later tasks. The message's
    material is what :func:`~cortex_lsp.intent.provenance.request_text` leaves out of the user's words.
    """
    names = set(ACTION_WORDS)
    for tool in tools:
        names.add(tool.lower())
        names.update(part for part in tool.lower().split("_") if len(part) > 2)
    pasted = Counter(_tokens(message)) - Counter(_tokens(request_text(message)))
    material = list(pasted.elements()) + _tokens(selection or "") + _tokens(diagnostic or "")
    return any(word in names for word in material)


@dataclass(frozen=True)
class LearnDecision:
    learned: bool
    reason: str = ""
    id: str = ""


class ProceduralMemory:
    def __init__(
        self, index: VectorIndex, texts: TaskTexts, embedder: Embedder, *, known_tools: set[str] | None = None
    ) -> None:
        self.index = index
        self.texts = texts
        self.embedder = embedder
        self.known_tools = known_tools

    async def record(
        self,
        task: str,
        tools: list[str],
        steps: int,
        *,
        success: bool = True,
        hinted: bool = False,
        steered: bool = False,
    ) -> LearnDecision:
        if not success:
            return LearnDecision(False, "the run did not succeed")
        if hinted:
            return LearnDecision(False, "the run was hinted by procedural memory")
        if steered:
            return LearnDecision(False, "a file or page steered the tool choice")
        names = clean_tools(tools, self.known_tools)
        if not names or len(names) != len(tools[:MAX_TOOLS]):
            return LearnDecision(False, "no valid tool names")
        task = " ".join(task.split())[:500]
        if not task:
            return LearnDecision(False, "no task text")
        pid = pattern_id(task)
        vec = await self.embedder.embed_one(task)
        await self.texts.put(TaskText(pid, task, json.dumps(names), int(max(1, steps)), time.time()))
        await self.index.upsert([pid], [vec])
        return LearnDecision(True, id=pid)

    async def hints(
        self, task: str, *, min_relevance: float = 0.6, limit: int = 1
    ) -> list[tuple[str, ToolPattern]]:
        """``(id, pattern)`` for stored tasks at least ``min_relevance`` similar to ``task``, best first."""
        if limit <= 0:
            return []
        count = await self.index.count()
        if count == 0:
            return []
        vec = await self.embedder.embed_one(task)
        found = await self.index.query(vec, min(limit, count))
        rows = await self.texts.get([i for i, _ in found])
        out = []
        for pid, score in found:
            row = rows.get(pid)
            if row is None or score < min_relevance:
                continue
            try:
                tools = clean_tools(list(json.loads(row.tools)), self.known_tools)
            except (json.JSONDecodeError, TypeError):
                continue
            if tools:
                out.append((pid, ToolPattern(task=row.task, tools=tuple(tools), steps=row.steps, score=score)))
        return out

    async def all(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [(r.id, r.task, r.metadata) for r in (await self.texts.get()).values()]

    async def delete(self, pid: str) -> bool:
        """Forget one tool sequence: its task text and vector are erased from every file."""
        return bool(await self.delete_many([pid]))

    async def delete_many(self, ids: list[str]) -> list[str]:
        """Forget tool sequences: one transaction and scrub for the texts, one rebuild for the vectors."""
        found = await self.texts.delete_many(ids)
        if found:
            await self.index.erase(found)
        return found
