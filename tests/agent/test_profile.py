"""The capability profile: the setting wins, the embedded default and ≤ 2B names are small, any other
model is probed once (a JSON instruction it must follow) and the verdict is cached per model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex_lsp.agent.profile import CACHE_FILE, detect_profile, judge_probe, size_in_billions
from cortex_lsp.config import Settings
from cortex_lsp.models.base import ModelUnavailable
from cortex_lsp.models.ollama_client import OllamaClient
from tests.scripted_model import Reply, ScriptedModelServer


@pytest.mark.parametrize(
    ("name", "size"),
    [("qwen2.5:7b", 7.0), ("smollm2-135m-instruct", 0.135), ("llama3.2:1b", 1.0), ("qwen2.5:0.5b", 0.5),
     ("org/Phi-3-mini-4k", None), ("llama3:latest", None), ("mistral", None)],
)
def test_size_from_the_name(name: str, size: float | None) -> None:
    assert size_in_billions(name) == size


def test_the_probe_verdict() -> None:
    assert judge_probe('{"tool": "read_file", "path": "notes.md"}')
    assert judge_probe('Sure! ```json\n{"tool": "read_file", "path": "./notes.md"}\n```')
    assert not judge_probe('{"tool": "list_dir", "path": "."}')
    assert not judge_probe("I would open the file notes.md for you.")


async def _detect(model: ScriptedModelServer, tmp_path: Path, name: str, **settings: object) -> str:
    client = OllamaClient(model.url, timeout=10)
    try:
        profile = await detect_profile(Settings(data_dir=tmp_path, **settings), client,  # type: ignore[arg-type]
                                       backend="ollama", name=name)
    finally:
        await client.aclose()
    return f"{profile.kind}/{profile.source}"


async def test_known_models_need_no_probe(model: ScriptedModelServer, tmp_path: Path) -> None:
    assert await _detect(model, tmp_path, "qwen2.5:7b") == "full/name"
    assert await _detect(model, tmp_path, "qwen2.5:0.5b") == "small/name"
    assert await _detect(model, tmp_path, "qwen2.5:7b", model_profile="small") == "small/setting"
    assert await _detect(model, tmp_path, "qwen2.5:0.5b", model_profile="full") == "full/setting"
    client = OllamaClient(model.url, timeout=10)
    embedded = await detect_profile(Settings(data_dir=tmp_path), client, backend="embedded", name="custom")
    await client.aclose()
    assert embedded.kind == "small"
    assert model.chat_requests == []


async def test_an_unknown_model_is_probed_once_and_cached(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.models += ["mystery", "chatty"]
    model.on(Reply(content='{"tool": "read_file", "path": "notes.md"}'))
    assert await _detect(model, tmp_path, "mystery") == "full/probe"
    assert await _detect(model, tmp_path, "mystery") == "full/cache"
    assert len(model.chat_requests) == 1
    assert model.chat_requests[0]["format"]["required"] == ["tool", "path"]  # structured output asked for
    model.on(Reply(content="Sure, I can open files!"))
    assert await _detect(model, tmp_path, "chatty") == "small/probe"
    assert json.loads((tmp_path / CACHE_FILE).read_text()) == {"ollama:chatty": "small", "ollama:mystery": "full"}


async def test_a_broken_cache_is_a_miss(model: ScriptedModelServer, tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_text("{not json", encoding="utf-8")
    model.models.append("mystery")
    model.on(Reply(content="no"))
    assert await _detect(model, tmp_path, "mystery") == "small/probe"


async def test_a_model_that_is_down_is_not_judged(tmp_path: Path) -> None:
    client = OllamaClient("http://127.0.0.1:9", timeout=2)
    with pytest.raises(ModelUnavailable):
        await detect_profile(Settings(data_dir=tmp_path), client, backend="ollama", name="mystery")
    await client.aclose()
    assert not (tmp_path / CACHE_FILE).exists()
