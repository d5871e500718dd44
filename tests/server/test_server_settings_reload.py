"""Settings changed while the server runs, through the real server over stdio: the editor changes the
model URL (or model name) with workspace/didChangeConfiguration and the next ask goes to the new model
server, no restart; a run in progress finishes on the client it started with; a bad value gives one
message and keeps the working server; the security rules are the same as at start. Side effects are
counted on two scripted model servers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp_harness import CortexClient, ask, capabilities, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer

FIRST = "Answer from the first server."
SECOND = "Answer from the second server."


@pytest.fixture
def second() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer(models=("qwen2.5:7b", "tiny:1b", "nomic-embed-text:latest"),
                                 default=Reply(content=SECOND)).start()
    try:
        yield server
    finally:
        server.stop()


def _first(model: ScriptedModelServer) -> ScriptedModelServer:
    model.default = Reply(content=FIRST)
    return model


def _cortex_messages(client: CortexClient) -> list[str]:
    return [m.message for m in client.messages if m.message.startswith("Cortex settings")]


async def _until(what: str, check: Callable[[str], bool], client: CortexClient, seconds: float = 20) -> None:
    """Ask the doctor (it reports the settings in effect: the model server's URL, the chat model) until
    ``check`` holds for its report."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        report = json.dumps(await execute(client, "cortex.doctor"))
        if check(report):
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {report[:2000]}")
        await asyncio.sleep(0.1)


def _serves(server: ScriptedModelServer) -> Callable[[str], bool]:
    return lambda report: f"at {server.url}" in report


def _change(client: CortexClient, cortex: dict[str, Any]) -> None:
    """What VS Code does: the new section is what workspace/configuration answers, then the notification."""
    client.set_configuration(cortex, section="cortex")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"cortex": cortex}))


async def test_a_new_model_url_takes_effect_for_the_next_ask(
        model: ScriptedModelServer, second: ScriptedModelServer, tmp_path: Path) -> None:
    first = _first(model)
    async with lsp_session(first, tmp_path) as client:
        before = await ask(client, "Who answers?")
        _change(client, {"ollamaBaseUrl": second.url})
        await _until("the second server to be in use", _serves(second), client)
        asked_first = len(first.chat_requests)
        after = await ask(client, "Who answers now?")
        # a model name changed the same way is used by the next ask, on the same (second) server
        _change(client, {"ollamaBaseUrl": second.url, "ollamaModel": "tiny:1b", "reasoningModel": "tiny:1b"})
        await _until("the model name to change", lambda report: "tiny:1b is available" in report, client)
        renamed = await ask(client, "And with the small model?")
        messages = _cortex_messages(client)
    assert before["answer"] == FIRST and after["answer"] == SECOND and renamed["answer"] == SECOND
    assert len(first.chat_requests) == asked_first, "nothing more went to the old server"
    assert second.chat_requests, "the next ask went to the new server"
    assert any(r.get("model") == "tiny:1b" for r in second.chat_requests)
    assert messages == []


async def test_a_bad_url_gives_one_message_and_keeps_the_working_server(
        model: ScriptedModelServer, second: ScriptedModelServer, tmp_path: Path) -> None:
    first = _first(model)
    async with lsp_session(first, tmp_path) as client:
        _change(client, {"ollamaBaseUrl": second.url})
        await _until("the second server to be in use", _serves(second), client)
        working = await ask(client, "First on the second server")
        for bad in ("ftp://127.0.0.1:1", "not a url", 42):
            _change(client, {"ollamaBaseUrl": bad})
            count = len(_cortex_messages(client))

            def shown(_report: str, count: int = count) -> bool:
                return len(_cortex_messages(client)) > count

            await _until("the settings message", shown, client)
        kept = await ask(client, "Still answered?")
        messages = _cortex_messages(client)
    assert working["answer"] == SECOND and kept["answer"] == SECOND
    assert kept["stop_reason"] == "answered"
    assert len(messages) == 3, messages  # one per bad change, not repeated, not more
    for message in messages:
        assert "ollamaBaseUrl" in message and f"kept the value in effect ({second.url})" in message
    assert len(first.chat_requests) == 0, "the old server was never asked again"


async def test_a_run_in_progress_keeps_its_client(
        model: ScriptedModelServer, second: ScriptedModelServer, tmp_path: Path) -> None:
    first = _first(model)
    long_answer = " ".join(["slow"] * 40)
    first.on(Reply(content=long_answer, token_delay=0.05), contains="Stream slowly", times=None)
    async with lsp_session(first, tmp_path) as client:
        running = asyncio.create_task(ask(client, "Stream slowly please"))
        await _until("the slow answer to start", lambda _r: bool(first.chat_requests), client)
        _change(client, {"ollamaBaseUrl": second.url})
        await _until("the second server to be in use", _serves(second), client)
        after = await ask(client, "Who answers now?")  # builds the new client while the first run streams
        finished = await running
    assert finished["stop_reason"] == "answered"
    assert finished["answer"] == long_answer, "the running answer was not cut off by the switch"
    assert after["answer"] == SECOND


async def test_security_rules_on_change_are_the_rules_at_start(model: ScriptedModelServer, tmp_path: Path) -> None:
    inside = tmp_path / "ws" / ".cortex-data"
    async with lsp_session(_first(model), tmp_path) as client:
        _change(client, {"dataDir": str(inside), "allowedWriteExtensions": "not-a-list"})
        await _until("the settings message", lambda _r: bool(_cortex_messages(client)), client)
        result = await ask(client, "hi")
        messages = _cortex_messages(client)
    assert result["stop_reason"] == "answered"
    assert len(messages) == 1, "\n".join(messages)
    assert "inside the opened folder" in messages[0]
    assert "allowedWriteExtensions" in messages[0]
    assert not inside.exists(), "no data was written inside the project"


async def test_a_client_without_configuration_pull_sends_the_settings_in_the_notification(
        model: ScriptedModelServer, second: ScriptedModelServer, tmp_path: Path) -> None:
    caps = capabilities()
    assert caps.workspace is not None
    caps.workspace.configuration = False
    first = _first(model)
    async with lsp_session(first, tmp_path, caps=caps) as client:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"cortex": {"ollamaBaseUrl": "javascript:alert(1)"}}))
        await _until("the settings message", lambda _r: bool(_cortex_messages(client)), client)
        kept = await ask(client, "Still the first?")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"cortex": {"ollamaBaseUrl": second.url}}))
        await _until("the second server to be in use", _serves(second), client)
        moved = await ask(client, "And now?")
        messages = _cortex_messages(client)
    assert kept["answer"] == FIRST and moved["answer"] == SECOND
    assert len(messages) == 1 and "ollamaBaseUrl" in messages[0]


def test_screening_keeps_the_value_in_effect_for_each_bad_key_only() -> None:
    from cortex_lsp.config import Settings
    from cortex_lsp.server.settings_reload import screen_editor_settings

    current = Settings(ollama_base_url="http://127.0.0.1:7000", max_agent_steps=4)
    update = screen_editor_settings({
        "ollamaBaseUrl": "file:///etc/passwd",          # bad: kept as in effect
        "maxAgentSteps": 7,                             # good: passes
        "lats": {"maxDepth": 99},                       # bad nested group: the group in effect
        "made_up": 1,                                   # unknown: left for the loader to report
        "ollamaModel": "tiny:1b",
    }, current)
    assert update.settings["ollama_base_url"] == "http://127.0.0.1:7000"
    assert update.settings["maxAgentSteps"] == 7 and update.settings["ollamaModel"] == "tiny:1b"
    assert update.settings["lats"] == current.lats.model_dump(mode="json")
    assert update.settings["made_up"] == 1
    assert len(update.messages) == 2
    assert "ollamaBaseUrl" in update.messages[0] and "http://127.0.0.1:7000" in update.messages[0]
    assert "lats" in update.messages[1]
