"""Forget and reset erase: after them, the bytes of EVERY file in the data folder (SQLite
files with their -wal/-shm, Chroma's database and segment folders) are grepped for the forgotten text
and for its vector. Real SQLite and real Chroma in a temporary folder; the data folder is private."""

from __future__ import annotations

import json
import os
import random
import stat
from pathlib import Path

from cortex_lsp.config import Settings
from cortex_lsp.memory.chroma import release_chroma_client
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.ollama_client import OllamaClient
from tests.memory.disk import all_files, files_holding, files_holding_vector
from tests.scripted_model import Reply, ScriptedModelServer, embed_text

PIN = "90417253"
API_KEY = "sk-live-QX7Z9WqR2mVv"
SECRET_TURN = f"My PIN is {PIN} and my API key is {API_KEY}."
SECRET_FACT = f"The user's PIN is {PIN} and API key {API_KEY}"
KEEP_FACT = "The user keeps bees on a rooftop in Porto"


def filler(n: int, topic: str) -> list[str]:
    """``n`` varied facts (distinct words each, as real facts are), so the HNSW index is not degenerate."""
    rng = random.Random(n)
    words = [f"{topic}{i}" for i in range(400)]
    return [f"The user {topic} note {i}: " + " ".join(rng.sample(words, 4)) for i in range(n)]


async def _open(settings: Settings, client: OllamaClient) -> PersistentMemory:
    return await PersistentMemory(settings, client).open()


async def _close(store: PersistentMemory, settings: Settings) -> None:
    await store.aclose()
    release_chroma_client(settings)


async def test_forget_erases_a_fact_and_a_turn_from_every_file(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer
) -> None:
    data = mem_settings.data_dir
    store = await _open(mem_settings, model_client)
    try:
        sid = await store.new_session("/ws")
        await store.store_turn(sid, "user", SECRET_TURN)  # the first turn: the session's title
        await store.store_turn(sid, "assistant", "Noted.")
        await store.store_turn(sid, "user", "What is the capital of Japan?")
        fid = await store.semantic.add(SECRET_FACT, session_id=sid)
        keep = await store.semantic.add(KEEP_FACT)
        # enough vectors that Chroma writes its HNSW files to disk (its sync threshold is 1000)
        await store.semantic.add_many(filler(1100, "visited"))
        assert files_holding(data, PIN, API_KEY), "the secret was on disk before the forget"
        assert files_holding_vector(data, embed_text(SECRET_FACT))
        turn = next(h for h in await store.search(PIN, types=["episodic"]) if PIN in h.content)
        assert fid is not None and await store.forget(fid) is True
        assert await store.forget(turn.id) is True
        assert files_holding(data, PIN, API_KEY) == {}
        assert files_holding_vector(data, embed_text(SECRET_FACT)) == []
        sessions = await store.sessions()
        assert [s.title for s in sessions if s.id == sid] == ["What is the capital of Japan?"]
        assert KEEP_FACT in await store.related_facts("bees rooftop Porto", limit=3)
        assert keep in {f.id for f in await store.semantic.all()}
        assert len(await store.semantic.all()) == 1101
    finally:
        await _close(store, mem_settings)
    assert files_holding(data, PIN, API_KEY) == {}
    assert files_holding_vector(data, embed_text(SECRET_FACT)) == []
    # a fresh process on the same folder sees the survivors, not the forgotten fact
    again = await _open(mem_settings, model_client)
    try:
        assert KEEP_FACT in await again.related_facts("bees rooftop Porto", limit=3)
        assert not [h for h in await again.search(PIN, limit=50) if PIN in h.content]
    finally:
        await _close(again, mem_settings)


async def test_reset_leaves_no_fact_task_turn_or_document_text_anywhere(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    data = mem_settings.data_dir
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("# Notes\n\nThe quokka ledger lives in drawer ZEBRA_17.\n")
    store = await _open(mem_settings, model_client)
    try:
        sid = await store.new_session(str(workspace))
        await store.store_turn(sid, "user", "My llama is called Bartholomew.")
        await store.semantic.add("The user's llama is called Bartholomew")
        await store.semantic.add_many([*filler(1049, "stamp"), "The user collected stamp number 7"])
        assert (await store.learn_tool_pattern("tally the pangolin invoices in notes.md", ["read_file"], 1)).learned
        await store.doc_index.index_workspace([workspace])
        needles = ("Bartholomew", "pangolin", "quokka", "ZEBRA_17", "stamp number 7")
        assert set(files_holding(data, *needles)) == set(needles)
        await store.reset()
        assert files_holding(data, *needles) == {}
        assert files_holding_vector(data, embed_text("The user's llama is called Bartholomew")) == []
        assert files_holding_vector(data, embed_text("tally the pangolin invoices in notes.md")) == []
        assert await store.semantic.all() == [] and await store.procedural.all() == []
        assert await store.sessions() == []
        # the store still works after a reset
        assert await store.semantic.add(KEEP_FACT)
        assert await store.related_facts("bees Porto", limit=1) == [KEEP_FACT]
    finally:
        await _close(store, mem_settings)
    assert files_holding(data, *needles) == {}


async def test_facts_from_an_older_layout_move_out_of_chroma(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer
) -> None:
    store = await _open(mem_settings, model_client)
    vec = embed_text("The user's cat is called Mortimer")
    # what an older Cortex wrote: the text and metadata inside Chroma
    store.semantic.collection.upsert(
        ids=["fact-legacy"], embeddings=[vec], documents=["The user's cat is called Mortimer"],
        metadatas=[{"session_id": "s", "source": "consolidation", "updated": 1.0}],
    )
    await _close(store, mem_settings)
    again = await _open(mem_settings, model_client)
    try:
        assert [f.content for f in await again.semantic.all()] == ["The user's cat is called Mortimer"]
        assert files_holding(mem_settings.data_dir / "chroma", "Mortimer") == {}
        assert await again.related_facts("my cat Mortimer", limit=1) == ["The user's cat is called Mortimer"]
    finally:
        await _close(again, mem_settings)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


async def test_a_new_data_folder_is_private(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer
) -> None:
    model_server.on(Reply(content=json.dumps({"facts": ["The user's name is Roydon."]})), times=None)
    store = await _open(mem_settings, model_client)
    try:
        assert store.notices == []
        await store.store_turn(await store.new_session(), "user", "My name is Roydon")
        await store.semantic.add_many(filler(1050, "book"))
    finally:
        await _close(store, mem_settings)
    data = mem_settings.data_dir
    assert _mode(data) == 0o700
    dirs = [Path(d) for d, _, _ in os.walk(data)]
    assert all(_mode(d) == 0o700 for d in dirs)
    assert len(dirs) >= 3  # data, chroma, a segment folder
    assert all(_mode(f) == 0o600 for f in all_files(data))


async def test_an_open_data_folder_is_tightened_with_a_message(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer
) -> None:
    data = mem_settings.data_dir
    data.mkdir(parents=True)
    os.chmod(data, 0o755)
    (data / "memory.db").write_bytes(b"")
    os.chmod(data / "memory.db", 0o644)
    store = await _open(mem_settings, model_client)
    try:
        assert len(store.notices) == 1 and str(data) in store.notices[0] and "0700" in store.notices[0]
        assert _mode(data) == 0o700 and _mode(data / "memory.db") == 0o600
    finally:
        await _close(store, mem_settings)
    again = await _open(mem_settings, model_client)
    try:
        assert again.notices == []
    finally:
        await _close(again, mem_settings)
