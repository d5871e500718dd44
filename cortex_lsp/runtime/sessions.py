"""Sessions and their history, as every front lists, starts and reopens them (episodic memory).

A reopened chat replays the user's messages and the answers (never tool output or errors), oldest
first, at most :data:`MAX_REPLAY_TURNS` exchanges.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cortex_lsp.memory.api import Memory, SessionInfo

#: the most exchanges (a message and its answer) a reopened session replays
MAX_REPLAY_TURNS = 200


@dataclass(frozen=True)
class ReplayedTurn:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class Transcript:
    info: SessionInfo
    turns: tuple[ReplayedTurn, ...]


async def new_session(memory: Memory, root: Path | None) -> str:
    return await memory.new_session(str(root) if root is not None else "")


async def list_sessions(memory: Memory, root: Path | None = None) -> list[SessionInfo]:
    """The sessions, newest first; with ``root``, only those started in that folder."""
    sessions = await memory.sessions()
    if root is None:
        return sessions
    return [s for s in sessions if s.root and _same(s.root, root)]


async def find_session(memory: Memory, session_id: str) -> SessionInfo | None:
    return next((s for s in await memory.sessions() if s.id == session_id), None)


async def transcript(memory: Memory, session_id: str, limit: int = MAX_REPLAY_TURNS) -> Transcript | None:
    """The session's messages and answers, oldest first, or ``None`` for a session memory does not know."""
    info = await find_session(memory, session_id)
    if info is None:
        return None
    messages = await memory.history(session_id, limit)
    turns = tuple(ReplayedTurn("user" if m.role == "user" else "assistant", m.content)
                  for m in messages if m.role in ("user", "assistant") and m.content.strip())
    return Transcript(info, turns)


def _same(stored: str, root: Path) -> bool:
    try:
        return Path(stored).resolve() == root.resolve()
    except (OSError, RuntimeError):
        return False
