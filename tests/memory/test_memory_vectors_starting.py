"""Memory opened without waiting for the vector store (as the server opens it): the turn log works at once,
recall of stored facts is refused visibly (RecallNotReady) until the vector process answers, and then the
facts an earlier store kept are recalled; nothing stored is lost meanwhile. Chroma runs in a process of its
own: that process exists and has Chroma's native library loaded. Real SQLite, real Chroma, the real client."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.memory.api import RecallNotReady
from cortex_lsp.memory.chroma import release_chroma_client, vector_process
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.ollama_client import OllamaClient
from tests.procs import alive


async def test_facts_of_an_earlier_store_are_recalled_once_the_vectors_are_up(
        mem_settings: Settings, model_client: OllamaClient) -> None:
    earlier = await PersistentMemory(mem_settings, model_client).open()
    try:
        await earlier.semantic.add("The user's name is Roydon.")
    finally:
        await earlier.aclose()
        release_chroma_client(mem_settings)

    store = await PersistentMemory(mem_settings, model_client).open(wait_for_vectors=False)
    try:
        assert not store.vectors_ready
        session = await store.new_session("/tmp")  # the turn log needs no vectors
        await store.store_turn(session, "user", "What's my name?")
        with pytest.raises(RecallNotReady) as refused:
            await store.related_facts("What's my name?")
        assert "not recalled" in str(refused.value)
        await store.vectors()  # the refusal started them; now they are up
        assert store.vectors_ready
        assert await store.related_facts("What is the user's name?") == ["The user's name is Roydon."]
        assert [m.content for m in await store.history(session, 5)] == ["What's my name?"]
        pid = vector_process().pid
        assert pid is not None and alive(pid) and pid != os.getpid()
        maps = await asyncio.to_thread(Path(f"/proc/{pid}/maps").read_text)
        assert "chromadb_rust_bindings" in maps, "Chroma runs in that process"
    finally:
        await store.aclose()
        release_chroma_client(mem_settings)


async def test_with_no_fact_stored_recall_is_empty_without_waiting(mem_settings: Settings,
                                                                   model_client: OllamaClient) -> None:
    store = await PersistentMemory(mem_settings, model_client).open(wait_for_vectors=False)
    try:
        assert await store.related_facts("What's my name?") == []  # nothing stored: nothing missed
        fid = await store.semantic.add("The user's name is Roydon.")  # waits for the vectors it needs
        assert fid is not None
    finally:
        await store.aclose()
        release_chroma_client(mem_settings)
