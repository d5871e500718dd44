"""The text of facts and of tool-sequence tasks, in our SQLite (``memory.db``), keyed like their vectors.

Chroma holds only ids and vectors (:mod:`cortex_lsp.memory.vectors`); here is what they mean. A
deleted text is scrubbed from the file (``secure_delete``, ``VACUUM``, WAL truncated).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from cortex_lsp.memory.episodic import EpisodicStore


@dataclass(frozen=True)
class FactText:
    id: str
    content: str
    session_id: str
    source: str
    updated: float

    @property
    def metadata(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "source": self.source, "updated": self.updated}


@dataclass(frozen=True)
class TaskText:
    id: str
    task: str
    tools: str  # JSON list of tool names
    steps: int
    updated: float

    @property
    def metadata(self) -> dict[str, Any]:
        return {"tools": self.tools, "steps": self.steps, "updated": self.updated}


def _marks(n: int) -> str:
    return ",".join("?" * n)


class FactTexts:
    def __init__(self, db: EpisodicStore) -> None:
        self.db = db

    async def put(self, rows: list[FactText]) -> None:
        await asyncio.to_thread(
            self.db.write,
            "INSERT INTO facts(id, content, session_id, source, updated) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET content = excluded.content, session_id = excluded.session_id, "
            "source = excluded.source, updated = excluded.updated",
            [(r.id, r.content, r.session_id, r.source, r.updated) for r in rows],
        )

    async def get(self, ids: list[str] | None = None) -> dict[str, FactText]:
        """The rows for ``ids`` (all rows when ``None``), by id."""
        return await asyncio.to_thread(self.get_now, ids)

    def get_now(self, ids: list[str] | None = None) -> dict[str, FactText]:
        """:meth:`get` in the calling thread (for a lookup that shares a thread hop with a query)."""
        sql = "SELECT id, content, session_id, source, updated FROM facts"
        found: list[tuple[Any, ...]] = []
        if ids is None:
            found = self.db.read(sql + " ORDER BY updated, id")
        else:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                found += self.db.read(sql + f" WHERE id IN ({_marks(len(part))})", part)
        return {r[0]: FactText(str(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4])) for r in found}

    async def count(self) -> int:
        """How many facts are stored (SQLite alone: answers while the vector store still starts)."""
        rows = await asyncio.to_thread(self.db.read, "SELECT count(*) FROM facts")
        return int(rows[0][0])

    async def delete(self, fid: str) -> bool:
        return bool(await self.delete_many([fid]))

    async def delete_many(self, ids: list[str]) -> list[str]:
        """Delete the rows of ``ids`` in one transaction and scrub the file once; returns the ids that existed."""
        return await asyncio.to_thread(_delete_many, self.db, "facts", ids)


class TaskTexts:
    def __init__(self, db: EpisodicStore) -> None:
        self.db = db

    async def put(self, row: TaskText) -> None:
        await asyncio.to_thread(
            self.db.write,
            "INSERT INTO procedures(id, task, tools, steps, updated) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET task = excluded.task, tools = excluded.tools, "
            "steps = excluded.steps, updated = excluded.updated",
            [(row.id, row.task, row.tools, row.steps, row.updated)],
        )

    async def get(self, ids: list[str] | None = None) -> dict[str, TaskText]:
        sql = "SELECT id, task, tools, steps, updated FROM procedures"
        found: list[tuple[Any, ...]] = []
        if ids is None:
            found = await asyncio.to_thread(self.db.read, sql + " ORDER BY updated, id")
        else:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                found += await asyncio.to_thread(self.db.read, sql + f" WHERE id IN ({_marks(len(part))})", part)
        return {r[0]: TaskText(str(r[0]), str(r[1]), str(r[2]), int(r[3]), float(r[4])) for r in found}

    async def delete(self, pid: str) -> bool:
        return bool(await self.delete_many([pid]))

    async def delete_many(self, ids: list[str]) -> list[str]:
        """Delete the rows of ``ids`` in one transaction and scrub the file once; returns the ids that existed."""
        return await asyncio.to_thread(_delete_many, self.db, "procedures", ids)


def _delete_many(db: EpisodicStore, table: str, ids: list[str]) -> list[str]:
    """Delete the rows of ``ids`` in one transaction, then ``VACUUM`` once (not once per id)."""
    unique = list(dict.fromkeys(ids))
    found: list[str] = []
    for start in range(0, len(unique), 500):
        part = unique[start : start + 500]
        found += [str(r[0]) for r in db.read(f"SELECT id FROM {table} WHERE id IN ({_marks(len(part))})", part)]
    if found:
        db.write(f"DELETE FROM {table} WHERE id = ?", [(i,) for i in found])
        db.scrub()
    return found
