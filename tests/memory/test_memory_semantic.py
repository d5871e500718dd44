"""Semantic memory: facts in real Chroma (temporary folder), embeddings from the scripted server."""

from __future__ import annotations

import json

from cortex_lsp.config import Settings
from cortex_lsp.memory.chroma import get_chroma_client, release_chroma_client
from cortex_lsp.memory.semantic import NEAR_DUPLICATE, fact_id
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.ollama_client import OllamaClient
from tests.scripted_model import Reply, ScriptedModelServer, embed_text


def cos(a: str, b: str) -> float:
    va, vb = embed_text(a), embed_text(b)
    return sum(x * y for x, y in zip(va, vb, strict=True))


async def test_relearning_a_fact_updates_it_under_the_same_id(memory: PersistentMemory) -> None:
    first = await memory.semantic.add("The user prefers Python.")
    before = (await memory.semantic.all())[0].metadata["updated"]
    again = await memory.semantic.add("the user prefers   python")
    assert first == again == fact_id("The user prefers Python")
    stored = await memory.semantic.all()
    assert len(stored) == 1 and stored[0].metadata["updated"] >= before


async def test_near_duplicate_facts_collapse(memory: PersistentMemory) -> None:
    a = "The user's demo is at 11 AM on Friday in the main office"
    b = "The user's demo is at 11 AM on a Friday in the main office"
    other = "The user has a cat called Miso"
    assert cos(a, b) >= NEAR_DUPLICATE > cos(a, other)  # the precondition this test relies on
    assert await memory.semantic.add(a) is not None
    assert await memory.semantic.add(b) is None
    assert await memory.semantic.add(other) is not None
    assert sorted(f.content for f in await memory.semantic.all()) == sorted([a, other])


async def test_retrieval_respects_min_relevance_and_limit(memory: PersistentMemory) -> None:
    await memory.semantic.add("The user's name is Roydon")
    await memory.semantic.add("The user keeps bees on a rooftop in Porto")
    await memory.semantic.add("The user drinks green tea every morning")
    query = "What is the user's name?"
    close = await memory.related_facts(query, limit=1)
    assert close == ["The user's name is Roydon"]
    threshold = cos(query, "The user's name is Roydon") - 0.01
    strict = await memory.related_facts(query, limit=5, min_relevance=threshold)
    assert strict == ["The user's name is Roydon"]
    assert len(await memory.related_facts(query, limit=5, min_relevance=0.0)) == 3
    assert await memory.related_facts(query, limit=5, min_relevance=0.999) == []


async def test_search_forget_and_reset(memory: PersistentMemory) -> None:
    fid = await memory.semantic.add("The user's name is Roydon")
    keep = await memory.semantic.add("The user prefers Python")
    hits = await memory.search("name Roydon", types=["semantic"], limit=5)
    assert hits[0].id == fid and hits[0].type == "semantic" and 0 < hits[0].score <= 1
    assert all(h.type == "semantic" for h in hits)
    assert fid is not None and await memory.forget(fid) is True
    assert await memory.forget(fid) is False
    assert await memory.forget("fact-unknown") is False
    assert [f.id for f in await memory.semantic.all()] == [keep]
    await memory.reset()
    assert await memory.semantic.all() == []


async def test_no_self_statement_means_no_model_call(
    memory: PersistentMemory, model_server: ScriptedModelServer
) -> None:
    model_server.on(Reply(content=json.dumps({"facts": ["The user's name is Ada."]})), times=None)
    sid = await memory.new_session()
    memory.schedule_consolidation(sid, "What is the capital of Japan?")
    await memory.wait_idle()
    assert model_server.chat_requests == []
    assert await memory.semantic.all() == []


async def test_consolidation_can_be_switched_off(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer
) -> None:
    settings = mem_settings.model_copy(update={"memory_consolidation": False})
    store = await PersistentMemory(settings, model_client).open()
    try:
        model_server.on(Reply(content=json.dumps({"facts": ["The user's name is Roydon."]})), times=None)
        store.schedule_consolidation("s", "My name is Roydon")
        await store.wait_idle()
        assert model_server.chat_requests == []
        assert await store.semantic.all() == []
    finally:
        await store.aclose()
        release_chroma_client(settings)


async def test_a_failing_model_never_breaks_consolidation(
    memory: PersistentMemory, model_server: ScriptedModelServer
) -> None:
    model_server.on(Reply(status=500, error="boom"), times=None)
    memory.schedule_consolidation("s", "My name is Roydon")
    await memory.wait_idle()
    assert await memory.semantic.all() == []


async def test_unparseable_replies_store_nothing(
    memory: PersistentMemory, model_server: ScriptedModelServer
) -> None:
    model_server.on(Reply(content="Sure! Here you go: the user is great"), times=None)
    memory.schedule_consolidation("s", "My name is Roydon")
    await memory.wait_idle()
    assert await memory.semantic.all() == []


async def test_embeddings_go_through_the_model_client_in_batches(
    memory: PersistentMemory, model_server: ScriptedModelServer
) -> None:
    facts = [f"The user visited city number {n}" for n in range(150)]
    await memory.semantic.add_many(facts)
    batches = model_server.embed_requests
    assert len(batches) == 3  # 64 + 64 + 22
    assert [len(b["input"]) for b in batches] == [64, 64, 22]
    assert all(b["model"] == "nomic-embed-text" for b in batches)
    assert len(await memory.semantic.all()) == 150


async def test_facts_survive_a_restart_and_the_chroma_client_is_shared(
    mem_settings: Settings, model_client: OllamaClient, model_server: ScriptedModelServer
) -> None:
    first = await PersistentMemory(mem_settings, model_client).open()
    await first.semantic.add("The user's name is Roydon")
    assert get_chroma_client(mem_settings) is get_chroma_client(mem_settings)
    await first.aclose()
    second = await PersistentMemory(mem_settings, model_client).open()
    try:
        assert await second.related_facts("What is my name?") == ["The user's name is Roydon"]
    finally:
        await second.aclose()
        release_chroma_client(mem_settings)
    # A fresh client on the same folder (as after a process restart) reads the same facts.
    third = await PersistentMemory(mem_settings, model_client).open()
    try:
        assert [f.content for f in await third.semantic.all()] == ["The user's name is Roydon"]
    finally:
        await third.aclose()
        release_chroma_client(mem_settings)
