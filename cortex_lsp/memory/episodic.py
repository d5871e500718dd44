"""Episodic memory: every message, tool result and answer of every session, in SQLite.

One database file in ``data_dir`` (WAL, ``synchronous=NORMAL``, ``secure_delete``): each turn is its own committed
transaction, so a process killed mid-run (SIGKILL) keeps every turn it had committed (in WAL mode
NORMAL loses nothing when the process dies; only a power cut may drop the last few turns, and it
saves an fsync per turn). Sessions are
tagged with their workspace root. The schema is versioned with ``PRAGMA user_version`` and migrated
forward on open. Infrastructure errors are stored as ``error`` events, never as assistant turns, and
are never replayed into a request. The same file holds the text of facts and tool-sequence tasks
(:mod:`cortex_lsp.memory.texts`; Chroma holds only their vectors). Deleting a turn recomputes its
session's title (the first remaining user turn) and scrubs the file
(:func:`~cortex_lsp.memory.erase.scrub_sqlite`), so a forgotten turn's text is nowhere on disk.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cortex_lsp.memory.api import SessionInfo, SessionTranscript, SessionTurn
from cortex_lsp.memory.erase import connect, scrub_sqlite
from cortex_lsp.models.base import Message

TurnRole = Literal["user", "assistant", "tool", "error"]
SCHEMA_VERSION = 3
TITLE_CHARS = 60


def _v1(db: sqlite3.Connection) -> None:
    # One statement at a time: ``executescript`` would commit the migration's transaction early.
    db.execute(
        "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, root TEXT NOT NULL DEFAULT '', "
        "title TEXT NOT NULL DEFAULT '', created REAL NOT NULL, last_activity REAL NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS turns (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, role TEXT NOT NULL, "
        "content TEXT NOT NULL, created REAL NOT NULL)"
    )
    db.execute("CREATE INDEX IF NOT EXISTS turns_session ON turns(session_id, id)")


def _v2(db: sqlite3.Connection) -> None:
    # Tool results keep the tool's name; sessions can be listed by recency quickly.
    db.execute("ALTER TABLE turns ADD COLUMN tool_name TEXT")
    db.execute("CREATE INDEX IF NOT EXISTS sessions_recent ON sessions(last_activity)")


def _v3(db: sqlite3.Connection) -> None:
    # The text of facts and tool-sequence tasks moves out of Chroma: erasing it is ours to guarantee.
    db.execute(
        "CREATE TABLE IF NOT EXISTS facts (id TEXT PRIMARY KEY, content TEXT NOT NULL, "
        "session_id TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '', updated REAL NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS procedures (id TEXT PRIMARY KEY, task TEXT NOT NULL, "
        "tools TEXT NOT NULL, steps INTEGER NOT NULL, updated REAL NOT NULL)"
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3]


@dataclass(frozen=True)
class Turn:
    id: int
    session_id: str
    role: TurnRole
    content: str
    created: float
    tool_name: str | None = None


#: the turn log's file name in the data folder
EPISODIC_DB = "memory.db"


def read_sessions(path: Path) -> list[SessionInfo]:
    """The sessions in the turn log at ``path``, newest first, without opening the rest of memory (no
    vector store, no model): ``[]`` when there is no log yet (nothing is created)."""
    if not path.is_file():
        return []
    store = EpisodicStore(path)
    try:
        return store.sessions()
    finally:
        store.close()


class EpisodicStore:
    """The SQLite turn log. Thread-safe (one connection, one lock); callers run it off the event loop."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = connect(path)
        self._migrate()

    def _migrate(self) -> None:
        with self._lock:
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            if version > len(MIGRATIONS):
                raise RuntimeError(
                    f"{self.path} was written by a newer Cortex (schema {version}; this one knows "
                    f"{len(MIGRATIONS)}). Upgrade Cortex or move the file away."
                )
            for number in range(version, len(MIGRATIONS)):
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    MIGRATIONS[number](self._db)
                    self._db.execute(f"PRAGMA user_version={number + 1}")
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- sessions ----------------------------------------------------------------------------------
    def new_session(self, root: str = "") -> str:
        sid = str(uuid.uuid4())
        self._ensure_session(sid, root)
        return sid

    def _ensure_session(self, sid: str, root: str) -> None:
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT INTO sessions(id, root, created, last_activity) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET root = CASE WHEN sessions.root = '' THEN excluded.root "
                "ELSE sessions.root END",
                (sid, root, now, now),
            )

    def sessions(self) -> list[SessionInfo]:
        with self._lock:
            rows = self._db.execute(
                "SELECT s.id, s.root, s.title, s.last_activity, "
                "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id AND t.role = 'user') "
                "FROM sessions s ORDER BY s.last_activity DESC"
            ).fetchall()
        return [
            SessionInfo(id=r[0], root=r[1], title=r[2], turns=int(r[4]), last_activity=float(r[3]))
            for r in rows
        ]

    # -- turns -------------------------------------------------------------------------------------
    def add_turn(
        self, session_id: str, role: TurnRole, content: str, *, root: str = "", tool_name: str | None = None
    ) -> int:
        """Append one turn in its own transaction; returns its id once it is durable."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO sessions(id, root, created, last_activity) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET last_activity = excluded.last_activity, "
                    "root = CASE WHEN sessions.root = '' THEN excluded.root ELSE sessions.root END",
                    (session_id, root, now, now),
                )
                if role == "user":
                    self._db.execute(
                        "UPDATE sessions SET title = ? WHERE id = ? AND title = ''",
                        (" ".join(content.split())[:TITLE_CHARS], session_id),
                    )
                cur = self._db.execute(
                    "INSERT INTO turns(session_id, role, content, created, tool_name) VALUES (?, ?, ?, ?, ?)",
                    (session_id, role, content, now, tool_name),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return int(cur.lastrowid or 0)

    def turns(self, session_id: str) -> list[Turn]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, session_id, role, content, created, tool_name FROM turns WHERE session_id = ? "
                "ORDER BY id",
                (session_id,),
            ).fetchall()
        return [
            Turn(id=r[0], session_id=r[1], role=r[2], content=r[3], created=r[4], tool_name=r[5])
            for r in rows
        ]

    def transcript(self, session_id: str) -> SessionTranscript | None:
        """The session's title and its user and assistant turns, oldest first; ``None`` if unknown."""
        with self._lock:
            row = self._db.execute("SELECT title FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                return None
            rows = self._db.execute(
                "SELECT role, content, created FROM turns WHERE session_id = ? AND role IN ('user', 'assistant') "
                "ORDER BY id",
                (session_id,),
            ).fetchall()
        return SessionTranscript(session_id=session_id, title=str(row[0]), turns=tuple(
            SessionTurn(role=r[0], text=r[1], created_at=float(r[2])) for r in rows))

    def history(self, session_id: str, turns: int) -> list[Message]:
        """The last ``turns`` exchanges (a user message and what answered it) as chat messages.

        Tool results and error events are not replayed; only the user's messages and real answers are.
        """
        if turns <= 0:
            return []
        with self._lock:
            starts = self._db.execute(
                "SELECT id FROM turns WHERE session_id = ? AND role = 'user' ORDER BY id DESC LIMIT ?",
                (session_id, turns),
            ).fetchall()
            if not starts:
                return []
            first = min(r[0] for r in starts)
            rows = self._db.execute(
                "SELECT role, content FROM turns WHERE session_id = ? AND id >= ? "
                "AND role IN ('user', 'assistant') ORDER BY id",
                (session_id, first),
            ).fetchall()
        return [Message(role=r[0], content=r[1]) for r in rows if r[1].strip()]

    def drop_last_exchange(self, session_id: str) -> int:
        """Delete the session's last exchange (its last user message and every turn after it), as a
        regenerated answer replaces it; returns how many turns went. The title is recomputed and the
        file scrubbed."""
        with self._lock:
            last = self._db.execute(
                "SELECT MAX(id) FROM turns WHERE session_id = ? AND role = 'user'", (session_id,)).fetchone()
            if last is None or last[0] is None:
                return 0
            self._db.execute("BEGIN IMMEDIATE")
            try:
                gone = self._db.execute("DELETE FROM turns WHERE session_id = ? AND id >= ?",
                                        (session_id, last[0])).rowcount
                first = self._db.execute(
                    "SELECT content FROM turns WHERE session_id = ? AND role = 'user' ORDER BY id LIMIT 1",
                    (session_id,),
                ).fetchone()
                title = "" if first is None else " ".join(str(first[0]).split())[:TITLE_CHARS]
                self._db.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            scrub_sqlite(self._db)
        return int(gone)

    def latest_user_message(self, session_id: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT content FROM turns WHERE session_id = ? AND role = 'user' ORDER BY id DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        return None if row is None else str(row[0])

    def search(self, query: str, limit: int = 10) -> list[tuple[Turn, float]]:
        """Turns sharing words with ``query``; the score is the share of query words present."""
        words = [w for w in query.lower().split() if len(w) > 1][:8]
        if not words:
            return []
        clause = " OR ".join("lower(content) LIKE ? ESCAPE '\\'" for _ in words)
        params = ["%" + w.replace("%", "\\%").replace("_", "\\_") + "%" for w in words]
        with self._lock:
            rows = self._db.execute(
                "SELECT id, session_id, role, content, created, tool_name FROM turns "
                f"WHERE role IN ('user', 'assistant') AND ({clause}) ORDER BY id DESC LIMIT 500",
                params,
            ).fetchall()
        scored = []
        for r in rows:
            text = r[3].lower()
            score = sum(1 for w in words if w in text) / len(words)
            scored.append(
                (Turn(id=r[0], session_id=r[1], role=r[2], content=r[3], created=r[4], tool_name=r[5]), score)
            )
        scored.sort(key=lambda item: (-item[1], -item[0].id))
        return scored[:limit]

    def delete_turn(self, turn_id: int) -> bool:
        """Delete one turn; its session's title is recomputed and the file scrubbed."""
        with self._lock:
            row = self._db.execute("SELECT session_id FROM turns WHERE id = ?", (turn_id,)).fetchone()
            if row is None:
                return False
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("DELETE FROM turns WHERE id = ?", (turn_id,))
                first = self._db.execute(
                    "SELECT content FROM turns WHERE session_id = ? AND role = 'user' ORDER BY id LIMIT 1",
                    (row[0],),
                ).fetchone()
                title = "" if first is None else " ".join(str(first[0]).split())[:TITLE_CHARS]
                self._db.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, row[0]))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            scrub_sqlite(self._db)
        return True

    def reset(self) -> None:
        """Delete every turn, session, fact text and task text; scrub the file."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            for table in ("turns", "sessions", "facts", "procedures"):
                self._db.execute(f"DELETE FROM {table}")
            self._db.execute("COMMIT")
            scrub_sqlite(self._db)

    # -- plain access for the text tables (memory.texts) ---------------------------------------------
    def read(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._db.execute(sql, params).fetchall())

    def write(self, sql: str, rows: list[tuple[Any, ...]]) -> int:
        """Run ``sql`` for each of ``rows`` in one transaction; returns the rows changed."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                changed = 0
                for params in rows:
                    changed += self._db.execute(sql, params).rowcount
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return changed

    def scrub(self) -> None:
        with self._lock:
            scrub_sqlite(self._db)
