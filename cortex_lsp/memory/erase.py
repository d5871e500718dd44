"""Erasing for real: what a deleted row or vector leaves in the files, and how it is scrubbed.

SQLite keeps a deleted row's bytes in free pages and in its write-ahead log until they are reused, so
every Cortex database is opened with ``secure_delete`` (freed content is zeroed) and
``temp_store=MEMORY`` (no temporary copies on disk), and after a forget or reset it is ``VACUUM`` ed
and its WAL checkpointed with ``TRUNCATE`` (the ``-wal`` file is emptied).

Chroma (embedded) keeps each record in ``chroma.sqlite3``: in its log table ``embeddings_queue`` (the
vector and metadata of every add, until its own purge runs, which a small collection never reaches),
its metadata/full-text tables, and in the HNSW files of a per-segment folder. Deleting a record leaves
all of those. Deleting a whole *collection* does remove its rows (log included); what remains are
free pages in ``chroma.sqlite3`` and the collection's segment folder. :func:`scrub_chroma_files` removes
segment folders that no live segment owns and ``VACUUM`` s ``chroma.sqlite3``; the vector stores
(:mod:`cortex_lsp.memory.vectors`) erase by rebuilding a collection without the forgotten records.
"""

from __future__ import annotations

import logging
import re
import shutil
import sqlite3
import time
from pathlib import Path

log = logging.getLogger(__name__)

_SEGMENT_DIR = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CHROMA_DB = "chroma.sqlite3"


def connect(path: Path) -> sqlite3.Connection:
    """A Cortex SQLite database: WAL, ``synchronous=NORMAL``, ``secure_delete``, no temp files on disk."""
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA secure_delete=ON")
    db.execute("PRAGMA temp_store=MEMORY")
    return db


def scrub_sqlite(db: sqlite3.Connection) -> None:
    """Rewrite the file without free pages and empty the WAL (the caller holds the connection's lock)."""
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def scrub_chroma_files(chroma_dir: Path) -> None:
    """Drop segment folders of deleted collections and ``VACUUM`` Chroma's database.

    Runs while no Chroma call is in flight (the vector stores hold their shared lock). Reads Chroma's
    ``segments`` table (id per segment; the HNSW folder is named by it); if that ever fails the
    folders are left alone and the failure is logged.
    """
    path = chroma_dir / CHROMA_DB
    if not path.is_file():
        return
    db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA temp_store=MEMORY")
        try:
            live = {str(r[0]) for r in db.execute("SELECT id FROM segments")}
        except sqlite3.Error as exc:
            log.warning("memory: Chroma's segment table unreadable, old segment folders kept (%s)", exc)
            live = None
        if live is not None:
            for child in chroma_dir.iterdir():
                if child.is_dir() and not child.is_symlink() and _SEGMENT_DIR.fullmatch(child.name):
                    if child.name not in live:
                        shutil.rmtree(child, ignore_errors=True)
        for attempt in range(3):  # Chroma's own connections may hold the file for a moment
            try:
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                break
            except sqlite3.OperationalError as exc:
                if attempt == 2:
                    log.warning("memory: %s could not be vacuumed (%s); freed pages remain until the next "
                                "forget or reset", path, exc)
                time.sleep(0.2)
    finally:
        db.close()
