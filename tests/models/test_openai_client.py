"""The OpenAI-compatible client against the scripted model server's ``/v1`` over real HTTP."""

from __future__ import annotations

import json
import math
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cortex_lsp.models.base import (
    ChatOptions,
    Message,
    ModelError,
    ModelMissing,
    ModelUnavailable,
    ToolCall,
    ToolSpec,
    collect,
)
from cortex_lsp.models.openai_client import OpenAIClient, messages_to_wire, parse_json_reply
from tests.scripted_model import Reply, ScriptedModelServer, call, embed_text

CHAT = "qwen2.5:7b"
EMBED = "nomic-embed-text:latest"
READ_FILE = ToolSpec("read_file", "Read a file.",
                     {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
PLAN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
               "required": ["steps"]}


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
async def client(model: ScriptedModelServer) -> Any:
    c = OpenAIClient(model.url + "/v1", timeout=10)
    yield c
    await c.aclose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streams_content_in_pieces(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    model.script(Reply(content="The capital of Japan is Tokyo."))
    chunks = [c async for c in client.chat_stream([Message("user", "Capital of Japan?")], model=CHAT,
                                                  options=ChatOptions(temperature=0.1, max_tokens=50))]
    text_chunks = [c for c in chunks if c.content]
    assert len(text_chunks) > 3
    assert "".join(c.content for c in chunks) == "The capital of Japan is Tokyo."
    assert chunks[-1].done and not chunks[-1].tool_calls
    sent = model.chat_requests[-1]
    assert sent["stream"] is True and sent["model"] == CHAT
    assert sent["temperature"] == 0.1 and sent["max_tokens"] == 50
    assert sent["messages"] == [{"role": "user", "content": "Capital of Japan?"}]
    assert "tools" not in sent and "response_format" not in sent


async def test_tool_calls_are_assembled_from_deltas(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    model.script(Reply(content="Let me look.", tool_calls=[
        call("read_file", path="notes/a file.txt"),
        call("search", query="tokyo \"quoted\" population", limit=3),
    ]))
    result = await collect(client.chat_stream([Message("user", "read it")], model=CHAT, tools=[READ_FILE]))
    assert result.content == "Let me look."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("read_file", {"path": "notes/a file.txt"}),
        ("search", {"query": "tokyo \"quoted\" population", "limit": 3}),
    ]
    assert all(c.id for c in result.tool_calls)
    sent = model.chat_requests[-1]
    assert sent["tool_choice"] == "auto"
    assert sent["tools"][0]["function"]["name"] == "read_file"
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["path"]


async def test_tool_results_carry_the_call_ids(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    history = [
        Message("user", "read two files"),
        Message("assistant", "", tool_calls=(ToolCall("read_file", {"path": "a"}, id="abc"),
                                             ToolCall("list_dir", {"path": "."}))),
        Message("tool", "listing", tool_name="list_dir"),
        Message("tool", "contents of a", tool_name="read_file"),
    ]
    await collect(client.chat_stream(history, model=CHAT))
    wire = model.chat_requests[-1]["messages"]
    calls = wire[1]["tool_calls"]
    assert calls[0]["id"] == "abc" and json.loads(calls[0]["function"]["arguments"]) == {"path": "a"}
    assert wire[2]["tool_call_id"] == calls[1]["id"] and wire[2]["name"] == "list_dir"
    assert wire[3]["tool_call_id"] == "abc"


def test_tool_result_without_a_call_still_gets_an_id() -> None:
    wire = messages_to_wire([Message("tool", "x", tool_name="t")])
    assert wire[0]["tool_call_id"]


async def test_json_format_is_asked_as_json_object_with_schema(model: ScriptedModelServer,
                                                               client: OpenAIClient) -> None:
    model.script(Reply(content='{"steps": ["read", "answer"]}'))
    result = await collect(client.chat_stream([Message("user", "plan")], model=CHAT, format=PLAN_SCHEMA))
    assert model.chat_requests[-1]["response_format"] == {"type": "json_object", "schema": PLAN_SCHEMA}
    assert parse_json_reply(result.content) == {"steps": ["read", "answer"]}


async def test_refused_response_format_falls_back_to_plain_json(model: ScriptedModelServer,
                                                                client: OpenAIClient) -> None:
    # A server that rejects response_format (as llama.cpp does for json_schema) with HTTP 500.
    model.on(Reply(status=500, error="unsupported response_format"), when=lambda b: "response_format" in b,
             times=None)
    model.script(Reply(content='Here you go:\n```json\n{"steps": ["one\ntwo"]}\n```'),
                 Reply(content='{"steps": []}'))
    result = await collect(client.chat_stream([Message("user", "plan")], model=CHAT, format=PLAN_SCHEMA))
    assert parse_json_reply(result.content) == {"steps": ["one\ntwo"]}
    first, retry = model.chat_requests[-2:]
    assert "response_format" in first and "response_format" not in retry
    assert retry["messages"][-1]["role"] == "system" and '"steps"' in retry["messages"][-1]["content"]
    # Remembered: the next JSON request for this model goes straight to the fallback.
    before = len(model.chat_requests)
    await collect(client.chat_stream([Message("user", "plan")], model=CHAT, format="json"))
    assert len(model.chat_requests) == before + 1
    assert "response_format" not in model.chat_requests[-1]


async def test_refused_tools_are_dropped_and_remembered(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    model.on(Reply(status=400, error="this model does not support tools"), when=lambda b: "tools" in b,
             times=None)
    model.script(Reply(content="no tools here"), Reply(content="still none"))
    result = await collect(client.chat_stream([Message("user", "hi")], model=CHAT, tools=[READ_FILE]))
    assert result.content == "no tools here"
    await collect(client.chat_stream([Message("user", "hi")], model=CHAT, tools=[READ_FILE]))
    assert ["tools" in r for r in model.chat_requests] == [True, False, False]


def test_parse_json_reply_is_lenient() -> None:
    assert parse_json_reply('{"answer": "line one\nline two"}') == {"answer": "line one\nline two"}
    assert parse_json_reply('Sure: {"a": 1} hope that helps') == {"a": 1}
    assert parse_json_reply('{"steps": ["read the file", "summarise the conte') == {
        "steps": ["read the file", "summarise the conte"]}
    assert parse_json_reply('{"a": 1, "b": ') == {"a": 1}
    assert parse_json_reply("I cannot do that.") is None
    assert parse_json_reply("") is None


async def test_embeddings_in_order_and_similar_texts_near(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    texts = ["the cat sat on the mat", "a cat sat on a mat", "quarterly tax report"]
    vectors = await client.embed(texts, model=EMBED)
    assert vectors == [pytest.approx(embed_text(t)) for t in texts]
    assert model.embed_requests[-1] == {"model": EMBED, "input": texts}

    def cos(a: list[float], b: list[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    assert cos(vectors[0], vectors[1]) > cos(vectors[0], vectors[2])
    assert await client.embed([], model=EMBED) == []


async def test_model_list_and_version(client: OpenAIClient) -> None:
    assert await client.list_models() == [CHAT, EMBED]
    assert isinstance(await client.version(), str)


async def test_server_down_says_start_it_or_set_the_url() -> None:
    down = OpenAIClient(f"http://127.0.0.1:{_free_port()}/v1", timeout=5)
    try:
        for attempt in (collect(down.chat_stream([Message("user", "hi")], model=CHAT)),
                        down.embed(["x"], model=EMBED), down.list_models()):
            with pytest.raises(ModelUnavailable) as info:
                await attempt
            assert "openai_base_url" in info.value.advice and "not answering" in str(info.value)
    finally:
        await down.aclose()


async def test_missing_model_is_model_missing(client: OpenAIClient) -> None:
    with pytest.raises(ModelMissing) as info:
        await collect(client.chat_stream([Message("user", "hi")], model="no-such-model"))
    assert "no-such-model" in str(info.value) and info.value.advice


async def test_http_500_is_a_short_model_error(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    model.script(Reply(status=500, error="llama_decode returned -1 " + "x" * 2000))
    with pytest.raises(ModelError) as info:
        await collect(client.chat_stream([Message("user", "hi")], model=CHAT))
    assert not isinstance(info.value, (ModelMissing, ModelUnavailable))
    assert "HTTP 500" in str(info.value) and "llama_decode returned -1" in str(info.value)
    assert len(str(info.value)) < 500
    assert len(model.chat_requests) == 1  # no retry without a feature to drop


async def test_503_is_unavailable(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    model.script(Reply(status=503, error="loading model"))
    with pytest.raises(ModelUnavailable):
        await collect(client.chat_stream([Message("user", "hi")], model=CHAT))


async def test_cancelled_stream_leaves_the_client_usable(
        model: ScriptedModelServer, client: OpenAIClient) -> None:
    model.script(Reply(content=" ".join(["word"] * 200), token_delay=0.02), Reply(content="next answer"))
    stream = client.chat_stream([Message("user", "long")], model=CHAT)
    seen = 0
    async for chunk in stream:
        seen += bool(chunk.content)
        if seen == 3:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    result = await collect(client.chat_stream([Message("user", "again")], model=CHAT))
    assert result.content == "next answer"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up early is fine here


class _HeaderRecorder(BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(dict(self.headers))
        status = 200 if self.headers.get("Authorization") == "Bearer sk-test" else 401
        payload = {"data": [{"id": "m"}]} if status == 200 else {"error": {"message": "bad key"}}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.do_GET()


async def test_api_key_is_sent_as_bearer_and_refusal_has_advice() -> None:
    handler: type[_HeaderRecorder] = type("Recorder", (_HeaderRecorder,), {"seen": []})
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    good, bad = OpenAIClient(url, api_key="sk-test"), OpenAIClient(url)
    try:
        assert await good.list_models() == ["m"]
        with pytest.raises(ModelError):
            await bad.list_models()
        assert handler.seen[0]["Authorization"] == "Bearer sk-test"
        assert "Authorization" not in handler.seen[1]
        with pytest.raises(ModelError) as info:
            await collect(bad.chat_stream([Message("user", "hi")], model="m"))
        assert "openai_api_key" in info.value.advice
    finally:
        await good.aclose()
        await bad.aclose()
        httpd.shutdown()
        httpd.server_close()


class _NoToolStreaming(BaseHTTPRequestHandler):
    """Like llama-cpp-python's chatml-function-calling: a streamed request with tools ends empty (the
    error happens after the 200), a whole one returns the tool call; a streamed one without tools is cut
    after some text (with a bare ``[DONE]`` when the message says "interrupted")."""

    bodies: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.bodies.append(body)
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            if "tools" not in body:
                event = {"choices": [{"index": 0, "delta": {"content": "partial"}, "finish_reason": None}]}
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                if "interrupted" in json.dumps(body["messages"]):  # llama-cpp-python's interrupt_requests
                    self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
            return
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_x", "type": "function",
             "function": {"name": "read_file", "arguments": "{ \"path\": \"a.txt\" }"}}]}
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
        data = json.dumps({"choices": [choice]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def no_tool_streaming() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    handler: type[_NoToolStreaming] = type("NoToolStreaming", (_NoToolStreaming,), {"bodies": []})
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler.bodies
    httpd.shutdown()
    httpd.server_close()


async def test_server_that_cannot_stream_tools_is_asked_whole(
        no_tool_streaming: tuple[str, list[dict[str, Any]]]) -> None:
    url, bodies = no_tool_streaming
    c = OpenAIClient(url)
    try:
        for _ in range(2):
            stream = c.chat_stream([Message("user", "read a.txt")], model="m", tools=[READ_FILE])
            result = await collect(stream)
            assert [(t.name, t.arguments, t.id) for t in result.tool_calls] == [
                ("read_file", {"path": "a.txt"}, "call_x")]
        assert [b["stream"] for b in bodies] == [True, False, False]  # learnt after the first empty stream
    finally:
        await c.aclose()


async def test_client_told_not_to_stream_tools_never_does(
        no_tool_streaming: tuple[str, list[dict[str, Any]]]) -> None:
    url, bodies = no_tool_streaming
    c = OpenAIClient(url, stream_tools=False)
    try:
        result = await collect(c.chat_stream([Message("user", "read a.txt")], model="m", tools=[READ_FILE]))
        assert result.tool_calls[0].name == "read_file"
        assert [b["stream"] for b in bodies] == [False]
    finally:
        await c.aclose()


async def test_stream_cut_mid_reply_is_an_error_not_a_short_answer(
        no_tool_streaming: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = no_tool_streaming
    c = OpenAIClient(url)
    try:
        with pytest.raises(ModelError) as info:
            await collect(c.chat_stream([Message("user", "hi")], model="m"))
        assert "middle of its reply" in str(info.value)
    finally:
        await c.aclose()


async def test_reply_ended_early_by_the_server_is_an_error(
        no_tool_streaming: tuple[str, list[dict[str, Any]]]) -> None:
    url, _ = no_tool_streaming
    c = OpenAIClient(url)
    try:
        with pytest.raises(ModelError) as info:
            await collect(c.chat_stream([Message("user", "you will be interrupted")], model="m"))
        assert "early" in str(info.value) and "interrupt_requests" in info.value.advice
    finally:
        await c.aclose()
