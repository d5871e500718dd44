"""The OpenAI-compatible backend (llama.cpp's server, vLLM, LM Studio, Ollama's ``/v1``), on httpx.

One :class:`httpx.AsyncClient` per server, reused. Chat is streamed as server-sent events; tool calls
arrive as deltas in pieces and are assembled here. JSON output is asked for with
``response_format: {"type": "json_object", "schema": ...}`` (llama.cpp's server answers
``json_schema`` with HTTP 500); a server that refuses it is asked again without, with the schema as an
instruction, and :func:`parse_json_reply` reads whatever comes back leniently. A server that can't
stream with tools (llama-cpp-python ends such a stream empty) is asked without streaming. Errors
carry the same kind of advice as the Ollama backend's.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

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
from cortex_lsp.models.limits import ReplyBudget, ReplyTooLarge, StreamLimits, bounded_body, bounded_lines

STREAM_BREATHE_SECONDS = 0.004
ERROR_BODY_BYTES = 64 * 1024  # the most of an error reply read (its message is shown cut to 300 characters)

DEFAULT_UNAVAILABLE_ADVICE = (
    "Start the server (for llama.cpp: `python -m llama_cpp.server --model PATH`) or set "
    "`openai_base_url` (CORTEX_OPENAI_BASE_URL) to where it runs, including the `/v1`; "
    "`cortex-lsp doctor` checks the set-up."
)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)(?:```|$)", re.DOTALL)


def parse_json_reply(text: str) -> Any | None:
    """The JSON value in a model's reply, read leniently; ``None`` when there is none.

    Accepts code fences, prose around the object, raw newlines inside strings (JSON-constrained
    output has them), and an object cut off at ``max_tokens`` (its open strings, arrays and objects
    are closed).
    """
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder(strict=False)
    for candidate in candidates:
        starts = [i for i, ch in enumerate(candidate) if ch in "{["][:20]
        for start in starts:
            try:
                return decoder.raw_decode(candidate[start:])[0]
            except json.JSONDecodeError:
                continue
        if starts:
            repaired = _close_truncated(candidate[starts[0]:])
            if repaired is not None:
                try:
                    return decoder.raw_decode(repaired)[0]
                except json.JSONDecodeError:
                    continue
    return None


def _close_truncated(text: str) -> str | None:
    """Close what a cut-off JSON text left open (strings, arrays, objects); ``None`` if it isn't JSON-like."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
    if not stack:
        return None
    out = (text[:-1] if escaped else text) + ('"' if in_string else "")
    out = out.rstrip()
    if stack[-1] == "}":
        # A dangling key (with or without its colon) can't be completed: drop it.
        out = re.sub(r'([,{])\s*"(?:[^"\\]|\\.)*"\s*:?\s*$', lambda m: "{" if m.group(1) == "{" else "", out)
    out = re.sub(r"[,:]\s*$", "", out)
    return out + "".join(reversed(stack))


def _tool_wire(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def messages_to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI chat messages. Tool results are matched to the call ids of the assistant turn before them."""
    wire: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (tool name, call id) not yet answered
    counter = 0
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            calls = []
            pending = []
            for call in message.tool_calls:
                call_id = call.id or f"call_{counter}"
                counter += 1
                pending.append((call.name, call_id))
                calls.append({"id": call_id, "type": "function",
                              "function": {"name": call.name, "arguments": json.dumps(call.arguments)}})
            item["tool_calls"] = calls
        if message.role == "tool":
            match = next((p for p in pending if p[0] == message.tool_name), pending[0] if pending else None)
            if match is not None:
                pending.remove(match)
                item["tool_call_id"] = match[1]
            else:
                item["tool_call_id"] = f"call_{counter}"
                counter += 1
            if message.tool_name:
                item["name"] = message.tool_name
        wire.append(item)
    return wire


def chatml_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages for a plain ChatML template (llama.cpp's ``chatml``: one system turn, user and assistant).

    Every system message is folded into the first (the template keeps only one); a tool result
    becomes a user turn (it is already labelled ``[tool result]``, as data); an assistant turn's tool
    calls are written into its text. Text is passed on as it is: nothing is escaped.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            wire.append({"role": "user", "content": message.content})
            continue
        content = message.content
        if message.tool_calls:
            calls = "\n".join(f"[called {c.name} {json.dumps(c.arguments, ensure_ascii=False)}]"
                              for c in message.tool_calls)
            content = f"{content}\n{calls}".strip()
        wire.append({"role": message.role, "content": content})
    return wire


def _schema_instruction(schema: dict[str, Any] | Literal["json"]) -> str:
    if schema == "json":
        return "Answer with one JSON object only, no prose."
    return "Answer with one JSON object only, no prose, matching this JSON schema:\n" + json.dumps(schema)


@dataclass
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def build(self) -> ToolCall:
        raw = "".join(self.arguments).strip()
        args: Any = {} if not raw else parse_json_reply(raw)
        return ToolCall(name=self.name, arguments=args if isinstance(args, dict) else {}, id=self.id)


@dataclass
class _StreamState:
    complete: bool = False  # a finish_reason arrived (or tool calls and the end of the stream)
    done_marker: bool = False  # the server sent [DONE]
    cut: bool = False  # the answer reached max_answer_bytes and the stream was left
    yielded: bool = False  # some text was passed on


async def _read_bounded(response: httpx.Response, limit: int, what: str) -> httpx.Response:
    """The response with its body read, at most ``limit`` bytes of it (models/limits.py)."""
    raw = await bounded_body(response.aiter_bytes(), limit, what)
    headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-encoding"]  # already decoded
    return httpx.Response(response.status_code, headers=headers, content=raw, request=response.request)


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict):
            return str(err.get("message") or err)[:300]
        return str(err)[:300]
    return str(data)[:300]


class OpenAIClient:
    """:class:`~cortex_lsp.models.base.ModelClient` for any OpenAI-compatible ``/v1`` server."""

    backend = "openai"

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 300,
                 name: str = "OpenAI-compatible server", unavailable_advice: str = DEFAULT_UNAVAILABLE_ADVICE,
                 stream_tools: bool = True, limits: StreamLimits | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.limits = limits or StreamLimits()
        self._name = name
        self._unavailable_advice = unavailable_advice
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(base_url=self.base_url + "/", headers=headers,
                                         timeout=httpx.Timeout(timeout, connect=5.0),
                                         **plain_http_options(self.base_url))
        self._no_tools: set[str] = set()
        self._no_format: set[str] = set()
        self._stream_tools = stream_tools
        self._no_stream_tools: set[str] = set()

    # -- errors ----------------------------------------------------------------------------------
    def _unavailable(self) -> ModelUnavailable:
        message = f"The {self._name} at {self.base_url} is not answering."
        return ModelUnavailable(message, self._unavailable_advice)

    def _translate(self, response: httpx.Response, model: str) -> ModelError:
        status = response.status_code
        text = _error_text(response)
        lowered = text.lower()
        if status in (401, 403):
            return ModelError(f"The {self._name} refused the request (HTTP {status}): {text}",
                              "Set `openai_api_key` (CORTEX_OPENAI_API_KEY) to a key it accepts.")
        if status == 404 and ("model" in lowered or not text):
            return ModelMissing(f"The model {model!r} is not served by the {self._name} at {self.base_url}.",
                                "Load it in that server, or set the model settings to one it lists "
                                "(`cortex-lsp doctor` shows them).")
        if status == 404:
            return ModelError(f"The {self._name} at {self.base_url} has no such endpoint (HTTP 404).",
                              "Check `openai_base_url`: it usually ends with `/v1`.")
        if status in (502, 503, 504):
            return self._unavailable()
        return ModelError(f"The {self._name} refused the request (HTTP {status}): {text}")

    def _transport(self, exc: httpx.HTTPError, model: str, what: str) -> ModelError:
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
            return self._unavailable()
        if isinstance(exc, httpx.TimeoutException):
            return ModelError(f"The model {model!r} took too long to answer.",
                              "Raise `ollama_timeout_seconds` or use a smaller model.")
        if isinstance(exc, httpx.RemoteProtocolError):
            return ModelError(f"The {self._name} closed the connection during {what}.",
                              "Check that the server is healthy; it may have run out of memory.")
        return ModelError(f"The connection to the {self._name} failed during {what}: "
                          f"{exc.__class__.__name__}.")

    # -- chat ------------------------------------------------------------------------------------
    def _wire(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The messages as this server takes them (a subclass may fold roles its template lacks)."""
        return messages_to_wire(messages)

    def _body(self, messages: Sequence[Message], model: str, tools: Sequence[ToolSpec] | None,
              format: dict[str, Any] | Literal["json"] | None, options: ChatOptions | None,
              use_format: bool) -> dict[str, Any]:
        if format is not None and not use_format:
            messages = [*messages, Message("system", _schema_instruction(format))]
        wire = self._wire(messages)
        body: dict[str, Any] = {"model": model, "messages": wire, "stream": True}
        if tools and model not in self._no_tools:
            body["tools"] = [_tool_wire(t) for t in tools]
            forced = options.tool_choice if options else None
            body["tool_choice"] = (
                {"type": "function", "function": {"name": forced}}
                if forced and any(t.name == forced for t in tools) else "auto"
            )
        if format is not None:
            if use_format:
                body["response_format"] = (
                    {"type": "json_object"} if format == "json" else {"type": "json_object", "schema": format}
                )
        if options:
            if options.temperature is not None:
                body["temperature"] = options.temperature
            if options.max_tokens is not None:
                body["max_tokens"] = options.max_tokens
        return body

    async def chat_stream(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        tools: Sequence[ToolSpec] | None = None,
        format: dict[str, Any] | Literal["json"] | None = None,
        options: ChatOptions | None = None,
    ) -> AsyncIterator[ChatChunk]:
        for attempt in range(4):
            body = self._body(messages, model, tools, format, options, model not in self._no_format)
            if "tools" in body and (not self._stream_tools or model in self._no_stream_tools):
                body["stream"] = False
            try:
                async with self._client.stream("POST", "chat/completions", json=body) as response:
                    if response.status_code != 200:
                        whole = await _read_bounded(response, ERROR_BODY_BYTES, self._name)
                        if attempt < 3 and self._retry_without(whole, model, body):
                            continue
                        raise self._translate(whole, model)
                    if not body["stream"]:
                        whole = await _read_bounded(response, self.limits.max_line_bytes, self._name)
                        for chunk in self._whole_reply(whole):
                            yield chunk
                        return
                    state = _StreamState()
                    async for chunk in self._events(response, state):
                        yield chunk
                        if chunk.done and state.cut:
                            return  # the answer reached max_answer_bytes: the response is closed unread
                    if state.complete:
                        return
                    if "tools" in body and not state.yielded and attempt < 3:
                        # Some servers can't stream with tools (llama-cpp-python's chatml-function-calling
                        # ends the stream empty): ask again without streaming, and remember.
                        self._no_stream_tools.add(model)
                        continue
                    if state.done_marker:
                        raise ModelError(f"The {self._name} ended its reply early, without saying why.",
                                         "It may interrupt a reply when another request arrives "
                                         "(llama-cpp-python: set `interrupt_requests: false`).")
                    raise ModelError(f"The {self._name} stopped in the middle of its reply.",
                                     "Check the server's log; it may have hit an error or run out of memory.")
            except httpx.HTTPError as exc:
                raise self._transport(exc, model, "the reply") from None

    def _whole_reply(self, response: httpx.Response) -> list[ChatChunk]:
        """A non-streamed completion as chunks: its text, then its tool calls."""
        try:
            data = response.json()
            message = (data.get("choices") or [{}])[0].get("message") or {}
        except (ValueError, AttributeError, IndexError, TypeError):
            raise ModelError(f"The {self._name} sent a reply in an unknown shape.") from None
        calls: list[ToolCall] = []
        for index, item in enumerate(message.get("tool_calls") or []):
            function = item.get("function") or {}
            arguments = function.get("arguments")
            partial = _PartialCall(id=item.get("id") or f"call_{index}", name=str(function.get("name") or ""),
                                   arguments=[json.dumps(arguments) if isinstance(arguments, dict)
                                              else str(arguments or "")])
            if partial.name:
                calls.append(partial.build())
        budget = ReplyBudget(self.limits)
        text = budget.text(str(message["content"])) if message.get("content") else ""
        kept = budget.calls(tuple(calls))
        closing = budget.closing()
        chunks = [ChatChunk(content=text)] if text else []
        if closing is not None:
            chunks.append(closing)
        return [*chunks, ChatChunk(tool_calls=kept, done=True)]

    def _retry_without(self, response: httpx.Response, model: str, body: dict[str, Any]) -> bool:
        """A refused feature (tools, ``response_format``): remember it for the model and say to retry."""
        if response.status_code not in (400, 422, 500, 501):
            return False
        text = _error_text(response).lower()
        if "response_format" in body and ("response_format" in text or "schema" in text or "json" in text
                                          or response.status_code == 500 or "tools" not in body):
            self._no_format.add(model)
            return True
        if "tools" in body and body["stream"] and "stream" in text:
            self._no_stream_tools.add(model)
            return True
        if "tools" in body and ("tool" in text or "function" in text):
            self._no_tools.add(model)
            return True
        return False

    async def _events(self, response: httpx.Response, state: _StreamState) -> AsyncIterator[ChatChunk]:
        partial: dict[int, _PartialCall] = {}
        budget = ReplyBudget(self.limits)
        args_bytes = 0
        breathed = time.monotonic()
        async for line in bounded_lines(response.aiter_bytes(), self.limits.max_line_bytes, self._name):
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                state.done_marker = True
                break
            try:
                event = json.loads(data)
            except json.JSONDecodeError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("error"):
                err = event["error"]
                text = err.get("message") if isinstance(err, dict) else err
                raise ModelError(f"The {self._name} failed while answering: {str(text)[:300]}")
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or choice.get("message") or {}
                for piece in delta.get("tool_calls") or []:
                    index = int(piece.get("index", len(partial)))
                    call = partial.setdefault(index, _PartialCall())
                    call.id = piece.get("id") or call.id
                    function = piece.get("function") or {}
                    if function.get("name"):
                        call.name = function["name"]
                    arguments = function.get("arguments")
                    if isinstance(arguments, dict):
                        call.arguments = [json.dumps(arguments)]
                    elif arguments:
                        call.arguments.append(str(arguments))
                    args_bytes += len(call.arguments[-1]) if call.arguments else 0
                    if len(partial) > self.limits.max_tool_calls or args_bytes > 4 * self.limits.max_tool_args_bytes:
                        # the pieces arrive over many lines: bounded here, before they add up
                        raise ReplyTooLarge(f"The {self._name} sent tool calls beyond max_tool_calls "
                                            f"({self.limits.max_tool_calls}) or max_tool_args_bytes; Cortex "
                                            "stopped reading them.", "None of them was run.")
                content = delta.get("content")
                if content:
                    state.yielded = True
                    text = budget.text(str(content))
                    if budget.cut:
                        state.complete = state.cut = True
                        yield ChatChunk(content=text, done=True)
                        return
                    yield ChatChunk(content=text)
                if choice.get("finish_reason"):
                    state.complete = True
            if time.monotonic() - breathed >= STREAM_BREATHE_SECONDS:  # a turn for the loop, as Ollama's
                await asyncio.sleep(0)
                breathed = time.monotonic()
        calls = budget.calls(tuple(c.build() for _, c in sorted(partial.items()) if c.name))
        if (closing := budget.closing()) is not None:
            yield closing
        if state.complete or calls:
            state.complete = True
            yield ChatChunk(tool_calls=calls, done=True)

    # -- embeddings, models, version -------------------------------------------------------------
    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        if not texts:
            return []
        try:
            response = await self._client.post("embeddings", json={"model": model, "input": list(texts)})
        except httpx.HTTPError as exc:
            raise self._transport(exc, model, "embedding") from None
        if response.status_code != 200:
            raise self._translate(response, model)
        try:
            items = sorted(response.json()["data"], key=lambda d: int(d.get("index", 0)))
            vectors = [[float(x) for x in _flat(item["embedding"])] for item in items]
        except (ValueError, KeyError, TypeError):
            raise ModelError(f"The {self._name} sent embeddings in an unknown shape.") from None
        if len(vectors) != len(texts):
            raise ModelError(f"The {self._name} sent {len(vectors)} embeddings for {len(texts)} texts.")
        return vectors

    async def list_models(self) -> list[str]:
        try:
            response = await self._client.get("models", timeout=10.0)
        except httpx.HTTPError as exc:
            raise self._transport(exc, "", "the model list") from None
        if response.status_code != 200:
            raise ModelError(f"The {self._name} could not list models (HTTP {response.status_code}).")
        try:
            return [str(m["id"]) for m in response.json().get("data", []) if m.get("id")]
        except (ValueError, AttributeError, TypeError):
            raise ModelError(f"The {self._name} sent its model list in an unknown shape.") from None

    async def version(self) -> str:
        """Best effort: servers rarely say; the ``Server`` header or ``owned_by`` stands in."""
        try:
            response = await self._client.get("models", timeout=5.0)
        except httpx.HTTPError as exc:
            raise self._transport(exc, "", "the version check") from None
        if response.status_code != 200:
            raise ModelError(f"The {self._name}'s version check failed (HTTP {response.status_code}).")
        server = response.headers.get("server", "")
        try:
            owners = {str(m.get("owned_by")) for m in response.json().get("data", []) if m.get("owned_by")}
        except (ValueError, AttributeError, TypeError):
            owners = set()
        return ", ".join(sorted(owners) + ([server] if server else [])) or "unknown"

    async def aclose(self) -> None:
        await self._client.aclose()


def _flat(vector: Any) -> list[Any]:
    """llama.cpp can return one vector per token (a list of lists) when pooling is off: average them."""
    if vector and isinstance(vector[0], list):
        rows = [list(map(float, row)) for row in vector]
        return [sum(col) / len(rows) for col in zip(*rows, strict=False)]
    return list(vector)
