"""Forgetting many memories at once (``PersistentMemory.forget_many``): every forgotten fact's text and vector
are gone from SQLite, from Chroma and from the bytes of every file in the data folder, the others stay, and the
vector collection is rebuilt once for the batch, not once per id. Real SQLite, real Chroma."""

from __future__ import annotations

from typing import Any

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.memory.chroma import release_chroma_client
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.ollama_client import OllamaClient
from tests.memory.disk import files_holding, files_holding_vector
from tests.memory.test_memory_erase import filler
from tests.scripted_model import embed_text

FORGET = 500
KEEP = 700  # with the forgotten ones over Chroma's 1,000-vector sync threshold: its HNSW files are on disk


def _marked(n: int, tag: str) -> list[str]:
    return [f"{fact} marker-{tag}-{i:04d}q" for i, fact in enumerate(filler(n, tag))]


async def test_forget_many_erases_every_one_and_keeps_the_rest(
    mem_settings: Settings, model_client: OllamaClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = mem_settings.data_dir
    store = await PersistentMemory(mem_settings, model_client).open()
    try:
        doomed_facts = _marked(FORGET, "gone")
        kept_facts = _marked(KEEP, "kept")
        doomed = await store.semantic.add_many(doomed_facts)
        kept = await store.semantic.add_many(kept_facts)
        decision = await store.procedural.record("rename the report files", ["list_files", "read_file"], 2)
        task = decision.id
        assert task is not None, decision
        assert files_holding(data, "marker-gone-0007q"), "the text was on disk before the forget"
        rebuilds: list[Any] = []
        real = store.semantic.index._rebuild

        def counting(gone: set[str] | None, drop_text: bool) -> None:
            rebuilds.append(len(gone or ()))
            real(gone, drop_text)

        monkeypatch.setattr(store.semantic.index, "_rebuild", counting)
        gone = await store.forget_many([*doomed, task, "fact-no-such-id", "turn-999999"])

        assert sorted(gone) == sorted([*doomed, task])
        assert rebuilds == [FORGET], "one rebuild of the fact collection for the whole batch"
        # SQLite: no row of a forgotten fact; every kept one is there
        assert await store.semantic.texts.get(doomed) == {}
        assert set(await store.semantic.texts.get(kept)) == set(kept)
        assert await store.procedural.texts.get([task]) == {}
        # Chroma: no vector of a forgotten fact; every kept one is there
        collection = store.semantic.index.collection
        assert collection.get(ids=doomed, include=[])["ids"] == []
        assert sorted(collection.get(ids=kept, include=[])["ids"]) == sorted(kept)
        assert collection.count() == KEEP
        # the bytes of every file: neither the text nor the vector of a forgotten fact remains
        assert files_holding(data, "marker-gone-0007q", "marker-gone-0499q", "rename the report files") == {}
        assert files_holding_vector(data, embed_text(doomed_facts[7])) == []
        assert files_holding(data, "marker-kept-0007q")
        # the kept facts are still recalled
        related = await store.semantic.related(kept_facts[3], limit=3)
        assert kept[3] in [f.id for f in related]
        assert await store.forget_many(doomed) == []  # forgetting again: nothing left to forget
    finally:
        await store.aclose()
        release_chroma_client(mem_settings)
