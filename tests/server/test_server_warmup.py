"""Warm start: after ``initialized`` the server imports the agent, connects to the model and opens the memory
store in the background; ``initialize`` and code actions never wait for it, and a failing warm-up costs nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from lsprotocol import types

from cortex_lsp.memory.api import InProcessMemory
from cortex_lsp.server.app import CortexServer
from cortex_lsp.server.warmup import warm
from tests.lsp_harness import CortexClient, ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer

SOURCE = "def f(x):\n    return x + 1\n"


async def _warmup_log(client: CortexClient, limit: float = 60) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for entry in client.log_messages:
            if "warm-up done" in entry.message:
                return entry.message
        await asyncio.sleep(0.05)
    raise AssertionError("no warm-up report in the log")


async def _code_action(client: CortexClient, uri: str) -> Sequence[types.CodeAction | types.Command] | None:
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=1, character=4), end=types.Position(line=1, character=4)),
        context=types.CodeActionContext(diagnostics=[])))


async def test_store_opens_in_background_and_code_actions_do_not_wait(model: ScriptedModelServer,
                                                                      tmp_path: Path) -> None:
    async with lsp_session(model, tmp_path, env={"CORTEX_LOG_LEVEL": "INFO"}) as client:
        # initialize was answered (the harness holds its result); the warm-up is still importing Chroma
        assert client.init_result.capabilities.execute_command_provider is not None
        uri = (tmp_path / "ws" / "m.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)))
        actions = await _code_action(client, uri)
        answered_before_warm = not any("warm-up done" in e.message for e in client.log_messages)
        report = await _warmup_log(client)
        assert actions, "a code action is offered while the warm-up runs"
        assert answered_before_warm, "the code action waited for the warm-up"
        assert "memory" in report and "patterns" in report and "skipped" not in report, report
        # the store was opened and the model connection made before any command was sent
        assert (tmp_path / "data" / "memory.db").exists()
        assert any(path == "/api/version" for path, _ in model.requests)
        assert not model.chat_requests
        model.on(Reply(content="Tokyo."), contains="capital of Japan")
        result = await ask(client, "What is the capital of Japan?")
    assert result["stop_reason"] == "answered" and "Tokyo" in result["answer"]


async def test_failed_warmup_costs_nothing(tmp_path: Path) -> None:
    # no model server at start-up: the warm-up skips the connection, the server keeps answering
    async with lsp_session(None, tmp_path, env={"CORTEX_LOG_LEVEL": "INFO"}) as client:
        report = await _warmup_log(client)
        uri = (tmp_path / "ws" / "m.py").as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)))
        actions = await _code_action(client, uri)
    assert "model connection skipped" in report, report
    assert actions
    # the Ollama client needs no connection to exist, so the persistent store still opened
    assert (tmp_path / "data" / "memory.db").exists()


async def test_warm_never_raises_and_leaves_the_store_to_the_first_ask(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # auto: Ollama not answering and no embedded model either, so no model client can be made
    monkeypatch.setenv("CORTEX_MODEL_BACKEND", "auto")
    monkeypatch.setenv("CORTEX_OLLAMA_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("CORTEX_LOCAL_MODEL_PATH", str(tmp_path / "missing.gguf"))
    monkeypatch.setenv("CORTEX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CORTEX_CONFIG", str(tmp_path / "none.yaml"))
    ls = CortexServer()
    report = await warm(ls, ("cortex_lsp.agent.kernel", "cortex_lsp_no_such_module"), freeze=False)
    assert report.failed["imports"] == "cortex_lsp_no_such_module"
    assert "model client" in report.failed
    assert "memory" not in report.done and ls._memory is None  # not an in-process fallback kept for good
    # once a model answers, the first ask opens the persistent store as if there had been no warm-up
    with ScriptedModelServer() as model:
        monkeypatch.setenv("CORTEX_MODEL_BACKEND", "ollama")
        monkeypatch.setenv("CORTEX_OLLAMA_BASE_URL", model.url)
        ls.reload_settings()
        memory = await ls.memory()
        try:
            assert not isinstance(memory, InProcessMemory)
            assert (tmp_path / "data" / "memory.db").exists()
        finally:
            await ls.aclose()


async def test_an_ask_sent_during_the_warmup_waits_for_it_and_keeps_the_store(model: ScriptedModelServer,
                                                                              tmp_path: Path) -> None:
    async with lsp_session(model, tmp_path) as client:
        model.on(Reply(content="Tokyo."), contains="capital of Japan")
        result = await ask(client, "What is the capital of Japan?")  # at once: the warm-up is still importing
        warnings = [m.message for m in client.messages]
    assert result["stop_reason"] == "answered" and "Tokyo" in result["answer"]
    assert not any("could not open its store" in w for w in warnings), warnings
    assert (tmp_path / "data" / "memory.db").exists()
