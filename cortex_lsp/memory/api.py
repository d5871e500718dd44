"""The memory interface the agent and server use, and a process-local implementation.

The full store (SQLite episodic + Chroma semantic/procedural) implements the same :class:`Memory`
protocol; :class:`InProcessMemory` keeps a session's turns in memory only (used when the persistent
store can't open, and in unit tests).
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal, Protocol

from cortex_lsp.models.base import Message

MemoryType = Literal["semantic", "procedural", "episodic"]


class RecallNotReady(Exception):
    """Facts are stored but can't be recalled yet (the vector store is still starting): the run goes on
    without them and says so in its notes; nothing stored is lost."""


@dataclass(frozen=True)
class MemoryHit:
    id: str
    type: MemoryType
    content: str
    score: float
    metadata: dict[str, str | int | float] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionInfo:
    id: str
    root: str
    title: str
    turns: int
    last_activity: float


@dataclass(frozen=True)
class SessionTurn:
    """One message of a session as a chat view shows it again."""

    role: Literal["user", "assistant"]
    text: str
    created_at: float


@dataclass(frozen=True)
class SessionTranscript:
    """A session's title and its user and assistant messages, oldest first."""

    session_id: str
    title: str
    turns: tuple[SessionTurn, ...]


@dataclass(frozen=True)
class ToolPattern:
    task: str
    tools: tuple[str, ...]
    steps: int
    score: float

    def hint(self) -> str:
        """The planner hint: tool names and a step count only (nothing from the earlier task)."""
        steps = f"{self.steps} step" + ("" if self.steps == 1 else "s")
        return f"A similar task used these tools in order: {', '.join(self.tools)} (took {steps})."


class Memory(Protocol):
    async def new_session(self, root: str = "") -> str: ...

    async def history(self, session_id: str, turns: int) -> list[Message]: ...

    async def drop_last_exchange(self, session_id: str) -> int:
        """Delete the session's last exchange (a regenerated answer replaces it); returns the turns gone."""
        ...

    async def store_turn(self, session_id: str, role: Literal["user", "assistant", "tool"], content: str,
                         *, root: str = "", tool_name: str | None = None) -> None: ...

    async def record_error(self, session_id: str, message: str, *, root: str = "", ask: str = "") -> None:
        """An infrastructure error in a run: kept with the session, never stored or replayed as an answer;
        ``ask`` (the failed run's user message) is not kept either."""
        ...

    async def related_facts(self, query: str, *, limit: int = 5, min_relevance: float = 0.0) -> list[str]:
        """Stored facts relevant to ``query``; raises :class:`RecallNotReady` when facts are stored but
        the store can't search them yet."""
        ...

    async def tool_hints(self, task: str, *, min_relevance: float = 0.6) -> list[ToolPattern]: ...

    async def record_tool_pattern(self, task: str, tools: list[str], steps: int, *, hinted: bool = False,
                                  steered: bool = False) -> None:
        """Learn a successful run's tool names; a ``hinted`` or data-``steered`` run is never learned."""
        ...

    def schedule_consolidation(self, session_id: str, user_message: str) -> None: ...

    async def search(self, query: str, types: list[MemoryType] | None = None,
                     limit: int = 10) -> list[MemoryHit]: ...

    async def sessions(self) -> list[SessionInfo]: ...

    async def transcript(self, session_id: str) -> SessionTranscript | None:
        """The session's messages for a reopened chat, or ``None`` for an unknown session."""
        ...

    async def forget(self, memory_id: str) -> bool: ...

    async def reset(self) -> None: ...

    async def aclose(self) -> None: ...


class InProcessMemory:
    """Turns kept in this process only; no facts, no patterns."""

    def __init__(self) -> None:
        self._turns: dict[str, list[Message]] = defaultdict(list)
        self._meta: dict[str, tuple[str, float]] = {}

    async def new_session(self, root: str = "") -> str:
        sid = str(uuid.uuid4())
        self._meta[sid] = (root, time.time())
        return sid

    async def history(self, session_id: str, turns: int) -> list[Message]:
        if turns <= 0:
            return []
        return list(self._turns.get(session_id, [])[-2 * turns :])

    async def drop_last_exchange(self, session_id: str) -> int:
        turns = self._turns.get(session_id, [])
        last = max((i for i, m in enumerate(turns) if m.role == "user"), default=None)
        if last is None:
            return 0
        gone = len(turns) - last
        del turns[last:]
        return gone

    async def store_turn(self, session_id: str, role: Literal["user", "assistant", "tool"], content: str,
                         *, root: str = "", tool_name: str | None = None) -> None:
        if role == "tool":
            return
        self._turns[session_id].append(Message(role=role, content=content))
        prev_root = self._meta.get(session_id, (root, 0.0))[0]
        self._meta[session_id] = (prev_root or root, time.time())

    async def related_facts(self, query: str, *, limit: int = 5, min_relevance: float = 0.0) -> list[str]:
        return []

    async def tool_hints(self, task: str, *, min_relevance: float = 0.6) -> list[ToolPattern]:
        return []

    async def record_error(self, session_id: str, message: str, *, root: str = "", ask: str = "") -> None:
        turns = self._turns.get(session_id, [])
        if ask and turns and turns[-1].role == "user" and turns[-1].content == ask:
            turns.pop()  # a failed ask is not replayed

    async def record_tool_pattern(self, task: str, tools: list[str], steps: int, *, hinted: bool = False,
                                  steered: bool = False) -> None:
        return None

    def schedule_consolidation(self, session_id: str, user_message: str) -> None:
        return None

    async def search(self, query: str, types: list[MemoryType] | None = None,
                     limit: int = 10) -> list[MemoryHit]:
        hits = []
        if types is None or "episodic" in types:
            for sid, turns in self._turns.items():
                for i, m in enumerate(turns):
                    if query.lower() in m.content.lower():
                        hits.append(MemoryHit(id=f"turn-{sid}-{i}", type="episodic", content=m.content,
                                              score=1.0))
        return hits[:limit]

    async def sessions(self) -> list[SessionInfo]:
        out = []
        for sid, (root, last) in self._meta.items():
            turns = self._turns.get(sid, [])
            title = next((m.content[:60] for m in turns if m.role == "user"), "")
            out.append(SessionInfo(id=sid, root=root, title=title, turns=len(turns) // 2, last_activity=last))
        return sorted(out, key=lambda s: s.last_activity, reverse=True)

    async def transcript(self, session_id: str) -> SessionTranscript | None:
        if session_id not in self._meta and session_id not in self._turns:
            return None
        turns = self._turns.get(session_id, [])
        title = next((" ".join(m.content.split())[:60] for m in turns if m.role == "user"), "")
        created = self._meta.get(session_id, ("", 0.0))[1]
        return SessionTranscript(session_id, title, tuple(
            SessionTurn(role="user" if m.role == "user" else "assistant", text=m.content, created_at=created)
            for m in turns if m.role in ("user", "assistant")))

    async def forget(self, memory_id: str) -> bool:
        return False

    async def reset(self) -> None:
        self._turns.clear()
        self._meta.clear()

    async def aclose(self) -> None:
        return None
