"""The Ollama backend, on the official ``ollama`` client's HTTP connection (one client per server, reused;
every call in a worker thread)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import httpx
import ollama

from cortex_lsp.models.base import (
    ChatChunk,
    ChatOptions,
    Message,
    ModelError,
    ModelMissing,
    ModelUnavailable,
    ToolCall,
    ToolSpec,
    plain_http_options,
)
from cortex_lsp.models.limits import ReplyBudget, StreamLimits, bounded_body_sync, bounded_lines_sync
from cortex_lsp.models.stream_thread import ThreadStream

ERROR_BODY_BYTES = 64 * 1024  # the most of an error reply read (its message is shown cut to 300 characters)


def ollama_host(base_url: str) -> str:
    """The URL ollama's client makes of ``base_url`` (no scheme means ``http://``)."""
    return base_url if "://" in base_url else "http://" + base_url


def _unavailable(base_url: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"The Ollama server at {base_url} is not answering.",
        "Start Ollama (`ollama serve`) or set `ollama_base_url` (CORTEX_OLLAMA_BASE_URL) to where it runs; "
        "`cortex-lsp doctor` checks the set-up.",
    )


def _missing(model: str) -> ModelMissing:
    return ModelMissing(f"The model {model!r} is not installed in Ollama.", f"Run `ollama pull {model}`.")


def _is_tool_support_error(exc: ollama.ResponseError) -> bool:
    return exc.status_code == 400 and "does not support tools" in str(exc.error).lower()


def _json_object(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        raise ModelError("The Ollama server sent a reply that is not JSON.",
                         "Check that `ollama_base_url` points at Ollama.") from None
    if not isinstance(value, dict):
        raise ModelError("The Ollama server sent a reply in an unknown shape.")
    return value


def _error_field(raw: bytes) -> str:
    """The ``error`` of an Ollama error body (or the body's start)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text[:300]
    return str(value.get("error", text))[:300] if isinstance(value, dict) else text[:300]


def _calls(raw: Any) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for item in raw if isinstance(raw, list) else ():
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):  # some servers send the arguments as a JSON text
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                arguments = {}
        calls.append(ToolCall(name=str(function["name"]), arguments=dict(arguments) if isinstance(arguments, dict)
                              else {}))
    return tuple(calls)


def _to_wire(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {"function": {"name": c.name, "arguments": c.arguments}} for c in message.tool_calls
        ]
    if message.tool_name:
        wire["tool_name"] = message.tool_name
    return wire


def _tool_wire(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


class OllamaClient:
    """:class:`~cortex_lsp.models.base.ModelClient` for Ollama's native API."""

    backend = "ollama"

    def __init__(self, base_url: str, *, timeout: float = 300, num_ctx: int | None = None,
                 keep_alive: str | None = None, limits: StreamLimits | None = None) -> None:
        self.base_url = base_url
        self.limits = limits or StreamLimits()
        self._num_ctx = num_ctx
        self._keep_alive = keep_alive
        # One blocking client, used from worker threads only (a reply is read in a thread of its own,
        # models/stream_thread.py; every other call runs in asyncio.to_thread): the event loop never
        # parses a byte of a model's reply. ollama's own client for its host rules and headers.
        self._client = ollama.Client(host=base_url, timeout=httpx.Timeout(timeout, connect=5.0),
                                     **plain_http_options(ollama_host(base_url)))
        self._http: httpx.Client = self._client._client
        self._no_tools: set[str] = set()

    def _options(self, options: ChatOptions | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self._num_ctx:
            out["num_ctx"] = self._num_ctx
        if options:
            if options.temperature is not None:
                out["temperature"] = options.temperature
            if options.max_tokens is not None:
                out["num_predict"] = options.max_tokens
            if options.num_ctx is not None:
                out["num_ctx"] = options.num_ctx
        return out

    async def chat_stream(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        tools: Sequence[ToolSpec] | None = None,
        format: dict[str, Any] | Literal["json"] | None = None,
        options: ChatOptions | None = None,
    ) -> AsyncIterator[ChatChunk]:
        wire_tools = [_tool_wire(t) for t in tools] if tools and model not in self._no_tools else None
        wire_messages = [_to_wire(m) for m in messages]
        for attempt in range(2):
            started = False
            body: dict[str, Any] = {"model": model, "messages": wire_messages, "stream": True}
            if wire_tools:
                body["tools"] = wire_tools
            if format is not None:
                body["format"] = format
            if opts := self._options(options):
                body["options"] = opts
            if self._keep_alive is not None:
                body["keep_alive"] = self._keep_alive
            try:
                # Read in a thread of its own (models/stream_thread.py), straight off the connection (not
                # through ollama's pydantic models): every line is bounded as it arrives (models/limits.py),
                # and a reply past its bound closes the response.
                async for chunk in ThreadStream(functools.partial(self._read_chat, body)).chunks():
                    started = True
                    yield chunk
                return
            except ollama.ResponseError as exc:
                if wire_tools and not started and attempt == 0 and _is_tool_support_error(exc):
                    # Models without tool support (gemma3, deepseek-r1): retry without, and remember.
                    self._no_tools.add(model)
                    wire_tools = None
                    continue
                raise self._translate(exc, model) from None
            except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
                raise _unavailable(self.base_url) from None
            except httpx.TimeoutException:
                raise ModelError(
                    f"The model {model!r} took too long to answer.",
                    "Raise `ollama_timeout_seconds` or use a smaller model.",
                ) from None
            except httpx.HTTPError as exc:
                raise ModelError(f"The connection to Ollama failed: {exc.__class__.__name__}.",
                                 "Check that Ollama is healthy (`ollama ps`).") from None

    def _read_chat(self, body: dict[str, Any], stream: ThreadStream) -> None:
        """One ``/api/chat`` reply, read and parsed in the stream's thread; each line's chunk is put into
        ``stream`` (models/stream_thread.py). Stops at the answer's bound, or when the loop stops it."""
        limits = self.limits
        with self._http.stream("POST", "/api/chat", json=body) as response:
            stream.opened(response)
            if response.status_code != 200:
                raw = bounded_body_sync(response.iter_bytes(), ERROR_BODY_BYTES, "Ollama server")
                raise ollama.ResponseError(_error_field(raw), response.status_code)
            budget = ReplyBudget(limits)
            for line in bounded_lines_sync(response.iter_bytes(), limits.max_line_bytes, "Ollama server"):
                if stream.stopped:
                    return
                if not line.strip():
                    continue
                part = _json_object(line)
                if err := part.get("error"):
                    raise ollama.ResponseError(str(err))
                msg = part.get("message") or {}
                raw_calls = msg.get("tool_calls")
                calls = budget.calls(_calls(raw_calls)) if raw_calls else ()
                content = budget.text(msg.get("content") or "")
                if budget.cut:
                    stream.put(ChatChunk(content=content, tool_calls=calls, done=True))
                    return  # the response is closed unread
                done = bool(part.get("done"))
                if done and (closing := budget.closing()) is not None:
                    stream.put(ChatChunk(content=content, tool_calls=calls))
                    stream.put(ChatChunk(content=closing.content, done=True))
                    return
                if content or calls or done:
                    stream.put(ChatChunk(content=content, tool_calls=calls, done=done))

    def _translate(self, exc: ollama.ResponseError, model: str) -> ModelError:
        text = str(exc.error)
        if exc.status_code == 404 or "not found" in text.lower():
            return _missing(model)
        if exc.status_code in (502, 503):
            return _unavailable(self.base_url)
        return ModelError(f"Ollama refused the request (HTTP {exc.status_code}): {text[:300]}")

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        if not texts:
            return []
        try:
            # in a worker thread: a batch's reply is ~1 MB of JSON numbers, tens of ms to parse
            return await asyncio.to_thread(self._embed_now, list(texts), model)
        except ollama.ResponseError as exc:
            raise self._translate(exc, model) from None
        except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
            raise _unavailable(self.base_url) from None
        except httpx.HTTPError as exc:
            raise ModelError(f"Embedding failed: {exc.__class__.__name__}.") from None

    def _embed_now(self, texts: list[str], model: str) -> list[list[float]]:
        body: dict[str, Any] = {"model": model, "input": texts}
        if self._keep_alive is not None:
            body["keep_alive"] = self._keep_alive
        response = self._http.post("/api/embed", json=body)
        if response.status_code != 200:
            raise ollama.ResponseError(_error_field(response.content[:ERROR_BODY_BYTES]), response.status_code)
        vectors = _json_object(response.text).get("embeddings")
        if not isinstance(vectors, list):
            raise ModelError("The Ollama server sent an embedding reply without embeddings.")
        return [list(map(float, v)) for v in vectors]

    async def list_models(self) -> list[str]:
        try:
            result = await asyncio.to_thread(self._client.list)
        except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
            raise _unavailable(self.base_url) from None
        except ollama.ResponseError as exc:
            raise ModelError(f"Ollama could not list models (HTTP {exc.status_code}).") from None
        except httpx.HTTPError as exc:
            raise ModelError(f"Ollama could not list models: {exc.__class__.__name__}.") from None
        return [m.model for m in result.models if m.model]

    async def version(self) -> str:
        try:
            def ask() -> str:
                response = self._http.get("/api/version", timeout=5.0)
                response.raise_for_status()
                return str(response.json().get("version", "unknown"))

            return await asyncio.to_thread(ask)
        except (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError):
            raise _unavailable(self.base_url) from None
        except (httpx.HTTPError, ValueError) as exc:
            raise ModelError(f"Ollama's version check failed: {exc.__class__.__name__}.") from None

    async def aclose(self) -> None:
        self._client.close()


def model_present(wanted: str, installed: Sequence[str]) -> bool:
    """Ollama names default to the ``latest`` tag: ``nomic-embed-text`` is ``nomic-embed-text:latest``."""
    name = wanted if ":" in wanted else f"{wanted}:latest"
    return wanted in installed or name in installed
