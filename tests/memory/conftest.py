"""Fixtures for the memory tests: the scripted model server over real HTTP, real SQLite and real Chroma
in a temporary data folder, and the real Ollama client between them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.memory.chroma import release_chroma_client
from cortex_lsp.memory.store import PersistentMemory
from cortex_lsp.models.ollama_client import OllamaClient
from tests.scripted_model import ScriptedModelServer


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def mem_settings(tmp_path: Path, model_server: ScriptedModelServer) -> Settings:
    return Settings.model_validate({"data_dir": tmp_path / "data", "ollama_base_url": model_server.url})


@pytest.fixture
async def model_client(model_server: ScriptedModelServer) -> AsyncIterator[OllamaClient]:
    client = OllamaClient(model_server.url, timeout=30)
    yield client
    await client.aclose()


@pytest.fixture
async def memory(mem_settings: Settings, model_client: OllamaClient) -> AsyncIterator[PersistentMemory]:
    store = await PersistentMemory(mem_settings, model_client).open()
    yield store
    await store.aclose()
    release_chroma_client(mem_settings)
