"""Recall with nothing stored does not wait for the query's embedding (the count answers it); with facts
stored it does. Real SQLite and Chroma, the real Ollama client; the scripted model holds embeddings back."""

from __future__ import annotations

import asyncio

from cortex_lsp.memory.store import PersistentMemory
from tests.scripted_model import ScriptedModelServer


async def _embed_requested(model: ScriptedModelServer, count: int) -> None:
    """Until the model server (a thread of this process) has received ``count`` embedding requests."""
    def wait() -> None:
        while len(model.embed_requests) < count and not model.wait(0.01):  # ends when the server stops
            pass

    await asyncio.to_thread(wait)


async def test_no_facts_answers_without_the_embedding(memory: PersistentMemory,
                                                      model_server: ScriptedModelServer) -> None:
    model_server.embed_gate.clear()
    try:
        facts = await asyncio.wait_for(memory.related_facts("What is the capital of Japan?"), timeout=20)
        assert facts == []
        await asyncio.wait_for(_embed_requested(model_server, 1), timeout=20)  # it was asked all the same
    finally:
        model_server.embed_gate.set()


async def test_with_facts_recall_waits_for_the_embedding(memory: PersistentMemory,
                                                         model_server: ScriptedModelServer) -> None:
    await memory.semantic.add("The user's favourite city is Kyoto.")
    before = len(model_server.embed_requests)
    model_server.embed_gate.clear()
    try:
        recall = asyncio.ensure_future(memory.related_facts("Which city does the user like best, Kyoto?"))
        await asyncio.wait_for(_embed_requested(model_server, before + 1), timeout=20)
        assert not recall.done()  # held with the embedding
    finally:
        model_server.embed_gate.set()
    assert "The user's favourite city is Kyoto." in await asyncio.wait_for(recall, timeout=20)
