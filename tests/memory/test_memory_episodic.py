"""Episodic memory: real SQLite in a temporary folder — turns, sessions, replay, migrations, errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cortex_lsp.memory.episodic import SCHEMA_VERSION, EpisodicStore
from cortex_lsp.memory.store import PersistentMemory


async def test_history_replays_the_last_n_turns_in_order(memory: PersistentMemory) -> None:
    sid = await memory.new_session("/work/project")
    for n in range(8):
        await memory.store_turn(sid, "user", f"question {n}")
        await memory.store_turn(sid, "tool", f"tool output {n}", tool_name="read_file")
        await memory.store_turn(sid, "assistant", f"answer {n}")
    history = await memory.history(sid, 3)
    assert [(m.role, m.content) for m in history] == [
        ("user", "question 5"), ("assistant", "answer 5"),
        ("user", "question 6"), ("assistant", "answer 6"),
        ("user", "question 7"), ("assistant", "answer 7"),
    ]
    assert await memory.history(sid, 0) == []
    # Tool results are kept in the log even though they are not replayed.
    kinds = [t.role for t in memory.episodic.turns(sid)]
    assert kinds.count("tool") == 8


async def test_sessions_are_tagged_with_their_root_and_listed_by_recency(memory: PersistentMemory) -> None:
    first = await memory.new_session("/a")
    await memory.store_turn(first, "user", "hello from a")
    second = await memory.new_session()
    await memory.store_turn(second, "user", "hello from b", root="/b")
    await memory.store_turn(second, "assistant", "hi")
    await memory.store_turn(second, "user", "again", root="/elsewhere")  # the first root sticks
    sessions = await memory.sessions()
    assert [s.id for s in sessions] == [second, first]
    assert sessions[0].root == "/b" and sessions[0].turns == 2 and sessions[0].title == "hello from b"
    assert sessions[1].root == "/a" and sessions[1].turns == 1


async def test_infrastructure_errors_are_never_replayed_as_answers(memory: PersistentMemory) -> None:
    sid = await memory.new_session()
    await memory.store_turn(sid, "user", "What is 2+2?")
    await memory.record_error(sid, "The Ollama server at http://127.0.0.1:11434 is not answering.")
    await memory.store_turn(sid, "user", "What is 2+2? (retry)")
    await memory.store_turn(sid, "assistant", "4")
    history = await memory.history(sid, 6)
    assert all("not answering" not in m.content for m in history)
    assert [m.role for m in history] == ["user", "user", "assistant"]
    roles = [t.role for t in memory.episodic.turns(sid)]
    assert roles == ["user", "error", "user", "assistant"]


async def test_a_failed_ask_is_dropped_and_an_answered_one_kept(memory: PersistentMemory) -> None:
    sid = await memory.new_session()
    await memory.store_turn(sid, "user", "Summarise notes.md")
    await memory.store_turn(sid, "assistant", "Three points.")
    await memory.store_turn(sid, "user", "Summarise notes.md")  # the same words again, and this run fails
    await memory.record_error(sid, "The model server is not answering.", ask="Summarise notes.md")
    await memory.record_error(sid, "again", ask="Summarise notes.md")  # the answered ask stays
    roles = [(t.role, t.content) for t in memory.episodic.turns(sid)]
    assert roles == [("user", "Summarise notes.md"), ("assistant", "Three points."),
                     ("error", "The model server is not answering."), ("error", "again")]
    assert [m.role for m in await memory.history(sid, 6)] == ["user", "assistant"]


async def test_a_failed_first_ask_leaves_no_title_and_no_search_hit(memory: PersistentMemory) -> None:
    sid = await memory.new_session()
    await memory.store_turn(sid, "user", "zebra quokka question")
    await memory.record_error(sid, "The model server is not answering.", ask="zebra quokka question")
    assert memory.episodic.search("zebra quokka") == []
    (session,) = [s for s in await memory.sessions() if s.id == sid]
    assert session.title == "" and session.turns == 0


async def test_a_new_store_on_the_same_folder_sees_every_turn(memory: PersistentMemory) -> None:
    sid = await memory.new_session("/r")
    await memory.store_turn(sid, "user", "persist me")
    reopened = EpisodicStore(memory.episodic.path)
    try:
        assert [m.content for m in reopened.history(sid, 6)] == ["persist me"]
    finally:
        reopened.close()


def test_schema_is_versioned_and_an_old_database_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    db = sqlite3.connect(path)
    # A version-1 database as the first release wrote it, with one turn in it.
    db.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, root TEXT NOT NULL DEFAULT '',
                               title TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
                               last_activity REAL NOT NULL);
        CREATE TABLE turns (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
                            role TEXT NOT NULL, content TEXT NOT NULL, created REAL NOT NULL);
        INSERT INTO sessions VALUES ('s1', '/old', 'old title', 1.0, 1.0);
        INSERT INTO turns(session_id, role, content, created)
            VALUES ('s1', 'user', 'kept across upgrade', 1.0);
        PRAGMA user_version = 1;
        """
    )
    db.close()
    store = EpisodicStore(path)
    try:
        assert store.schema_version == SCHEMA_VERSION
        assert [m.content for m in store.history("s1", 6)] == ["kept across upgrade"]
        store.add_turn("s1", "tool", "result", tool_name="read_file")
        assert store.turns("s1")[-1].tool_name == "read_file"
    finally:
        store.close()


def test_a_database_from_a_newer_version_is_refused_not_damaged(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.close()
    try:
        EpisodicStore(path)
    except RuntimeError as exc:
        assert "newer" in str(exc)
    else:
        raise AssertionError("a newer schema must not be opened")
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 5
    check.close()


async def test_wal_mode_and_search_and_forget_a_turn(memory: PersistentMemory) -> None:
    sid = await memory.new_session()
    await memory.store_turn(sid, "user", "The deploy script fails with ERR_QUOTA_50%")
    await memory.store_turn(sid, "assistant", "Raise the quota.")
    mode = sqlite3.connect(memory.episodic.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    hits = await memory.search("ERR_QUOTA_50%", types=["episodic"])
    assert [h.content for h in hits] == ["The deploy script fails with ERR_QUOTA_50%"]
    assert hits[0].id.startswith("turn-") and hits[0].score == 1.0
    assert await memory.search("ERR_QUOTA_5_%", types=["episodic"]) == []  # LIKE wildcards are escaped
    assert await memory.forget(hits[0].id) is True
    assert await memory.search("ERR_QUOTA_50%", types=["episodic"]) == []


async def test_reset_deletes_the_chat_history(memory: PersistentMemory) -> None:
    sid = await memory.new_session("/x")
    await memory.store_turn(sid, "user", "remember this conversation")
    await memory.reset()
    assert await memory.sessions() == []
    assert await memory.history(sid, 6) == []
