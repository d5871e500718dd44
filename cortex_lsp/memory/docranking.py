"""How the document index ranks chunks: BM25 over FTS5, the scope check, reciprocal rank fusion.

Plain functions over the index's SQLite connection (``docs.db``: tables ``chunks`` and ``chunks_fts``,
see :class:`~cortex_lsp.memory.docindex.DocIndex`); every one expects the caller to hold the
connection's lock. The vector side (Chroma) stays with the index: this module only filters and fuses
the ids it found.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from cortex_lsp.memory.chunking import tokenize

RRF_K = 60
#: a search asks Chroma for this many times the candidates without a filter, then keeps those in scope
VECTOR_OVERFETCH = 4
CANDIDATES = 50


@dataclass(frozen=True)
class DocHit:
    path: str
    start_line: int
    end_line: int
    text: str
    score: float
    root: str = ""

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


def roots_where(roots: list[str]) -> dict[str, Any]:
    """The Chroma ``where`` filter of chunks inside ``roots``."""
    return {"root": roots[0]} if len(roots) == 1 else {"root": {"$in": roots}}


def bm25_ids(db: sqlite3.Connection, query: str, roots: list[str], path: str | None, limit: int) -> list[str]:
    """The ``limit`` best chunk ids by BM25 (SQLite FTS5: k1 1.2, b 0.75, over the same tokens as
    :func:`~cortex_lsp.memory.chunking.tokenize`), persisted and updated per file — never rebuilt.

    An identifier's sub-words (``default``, ``on``, ``in``) match thousands of chunks, and joining
    every match with ``chunks`` to check its root cost more than the ranking itself (33 ms vs 15 at
    130k chunks): FTS5 ranks alone, the best ``limit × VECTOR_OVERFETCH`` are joined and kept if in
    scope, and only when too few are (another folder's chunks ranked first) is the filtered join asked."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms:
        return []
    match = " OR ".join(f'"{t}"' for t in terms)
    if path is None:
        wide = limit * VECTOR_OVERFETCH
        ranked = db.execute(
            "SELECT c.id, c.root FROM (SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid "
            "ORDER BY f.score",
            [match, wide],
        ).fetchall()
        inside = [r[0] for r in ranked if r[1] in roots]
        if len(inside) >= limit or len(ranked) < wide:
            return inside[:limit]
    marks = ",".join("?" * len(roots))
    sql = (
        "SELECT c.id FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
        f"WHERE chunks_fts MATCH ? AND c.root IN ({marks})"
    )
    params: list[Any] = [match, *roots]
    if path is not None:
        sql += " AND c.path = ?"
        params.append(path)
    return [r[0] for r in db.execute(sql + " ORDER BY bm25(chunks_fts) LIMIT ?", [*params, limit])]


def in_scope(db: sqlite3.Connection, ids: list[str], roots: list[str], path: str | None) -> list[str]:
    """The ids (in order) whose chunk is inside ``roots`` (the vector candidates of a whole-roots search)."""
    if path is not None or not ids:
        return ids[:CANDIDATES]
    marks = ",".join("?" * len(ids))
    root_of = {r[0]: r[1] for r in db.execute(f"SELECT id, root FROM chunks WHERE id IN ({marks})", ids)}
    return [i for i in ids if root_of.get(i) in roots][:CANDIDATES]


def fused(db: sqlite3.Connection, lexical: list[str], vector: list[str], top_k: int) -> list[DocHit]:
    """Reciprocal rank fusion, then the rows of the best ``top_k`` only."""
    ranks: dict[str, float] = {}
    for ranking in (lexical, vector):
        for rank, cid in enumerate(ranking):
            ranks[cid] = ranks.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    best = sorted(ranks.items(), key=lambda kv: -kv[1])
    want = max(1, top_k)
    hits: list[DocHit] = []
    for start in range(0, len(best), want):  # a vector whose chunk row is gone is skipped
        page = best[start : start + want]
        by_id = _rows(db, [cid for cid, _ in page])
        hits += [DocHit(path=by_id[cid][2], start_line=int(by_id[cid][3]), end_line=int(by_id[cid][4]),
                        text=str(by_id[cid][5]), score=score, root=str(by_id[cid][1]))
                 for cid, score in page if cid in by_id]
        if len(hits) >= want:
            break
    return hits[:want]


def _rows(db: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[Any, ...]]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = db.execute(
        f"SELECT id, root, path, start_line, end_line, text FROM chunks WHERE id IN ({marks})", ids
    ).fetchall()
    return {r[0]: r for r in rows}
