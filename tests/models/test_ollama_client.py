"""The Ollama client over real HTTP (scripted server): the stream read line by line, a model without tool
support asked again without tools, and errors that carry advice."""

from __future__ import annotations

import pytest

from cortex_lsp.models.base import Message, ModelMissing, ModelUnavailable, ToolSpec, collect
from cortex_lsp.models.ollama_client import OllamaClient
from tests.scripted_model import Reply, ScriptedModelServer, call

TOOL = ToolSpec("calculator", "Compute.", {"type": "object", "properties": {"expression": {"type": "string"}}})


async def test_text_and_tool_calls_stream_through() -> None:
    with ScriptedModelServer() as server:
        server.script(Reply(content="Hello there, friend."), Reply(tool_calls=[call("calculator", expression="2+2")]))
        client = OllamaClient(server.url, timeout=10)
        try:
            text = await collect(client.chat_stream([Message("user", "hi")], model="qwen2.5:7b"))
            calls = await collect(client.chat_stream([Message("user", "sum")], model="qwen2.5:7b", tools=[TOOL]))
        finally:
            await client.aclose()
    assert text.content == "Hello there, friend."
    assert [(c.name, c.arguments) for c in calls.tool_calls] == [("calculator", {"expression": "2+2"})]


async def test_a_model_without_tools_is_asked_again_without_them() -> None:
    with ScriptedModelServer(no_tool_models=("qwen2.5:7b",)) as server:
        server.script(Reply(content="No tools here."))
        client = OllamaClient(server.url, timeout=10)
        try:
            result = await collect(client.chat_stream([Message("user", "hi")], model="qwen2.5:7b", tools=[TOOL]))
        finally:
            await client.aclose()
        bodies = server.chat_requests
    assert result.content == "No tools here."
    assert "tools" in bodies[0] and "tools" not in bodies[1]


async def test_missing_model_and_no_server_are_named_with_advice() -> None:
    with ScriptedModelServer() as server:
        client = OllamaClient(server.url, timeout=10)
        try:
            with pytest.raises(ModelMissing) as missing:
                await collect(client.chat_stream([Message("user", "hi")], model="nope:1b"))
            assert "nope:1b" in str(missing.value) and "ollama pull" in missing.value.user_message()
        finally:
            await client.aclose()
    gone = OllamaClient("http://127.0.0.1:9", timeout=2)
    try:
        with pytest.raises(ModelUnavailable) as unavailable:
            await collect(gone.chat_stream([Message("user", "hi")], model="qwen2.5:7b"))
        assert "ollama serve" in unavailable.value.user_message()
    finally:
        await gone.aclose()


async def test_a_server_that_goes_down_is_down_for_a_client_holding_a_kept_alive_connection() -> None:
    # a model server that stops drops its connections: the client's pooled one must not still be answered
    server = ScriptedModelServer().start()
    client = OllamaClient(server.url, timeout=5)
    try:
        before = await collect(client.chat_stream([Message("user", "hi")], model="qwen2.5:7b"))
        server.stop()
        with pytest.raises(ModelUnavailable):
            await collect(client.chat_stream([Message("user", "still there?")], model="qwen2.5:7b"))
    finally:
        server.stop()
        await client.aclose()
    assert before.content == "OK"
    assert [b["messages"][-1]["content"] for b in server.chat_requests] == ["hi"]
