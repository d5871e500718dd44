"""The Ollama backend, on the official ``ollama`` async client (one client per server, reused)."""

from __future__ import annotations

import asyncio
import time
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
)

STREAM_BREATHE_SECONDS = 0.004


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
                 keep_alive: str | None = None) -> None:
        self.base_url = base_url
        self._num_ctx = num_ctx
        self._keep_alive = keep_alive
        self._client = ollama.AsyncClient(host=base_url, timeout=httpx.Timeout(timeout, connect=5.0))
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
        for attempt in range(2):
            started = False
            try:
                stream = await self._client.chat(
                    model=model,
                    messages=[_to_wire(m) for m in messages],
                    tools=wire_tools,
                    stream=True,
                    format=format,
                    options=self._options(options) or None,
                    keep_alive=self._keep_alive,
                )
                breathed = time.monotonic()
                async for part in stream:
                    started = True
                    msg = part.message
                    calls = tuple(
                        ToolCall(name=c.function.name, arguments=dict(c.function.arguments or {}))
                        for c in msg.tool_calls
                    ) if msg.tool_calls else ()  # a text token builds no generator and no tuple
                    yield ChatChunk(content=msg.content or "", tool_calls=calls, done=bool(part.done))
                    # A fast stream delivers hundreds of lines per socket read and httpx hands them out
                    # without awaiting I/O: give the event loop a turn every few ms of work, so a
                    # codeAction or a cancel never waits behind the whole buffer.
                    if time.monotonic() - breathed >= STREAM_BREATHE_SECONDS:
                        await asyncio.sleep(0)
                        breathed = time.monotonic()
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
            result = await self._client.embed(model=model, input=list(texts), keep_alive=self._keep_alive)
        except ollama.ResponseError as exc:
            raise self._translate(exc, model) from None
        except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
            raise _unavailable(self.base_url) from None
        except httpx.HTTPError as exc:
            raise ModelError(f"Embedding failed: {exc.__class__.__name__}.") from None
        return [list(map(float, v)) for v in result.embeddings]

    async def list_models(self) -> list[str]:
        try:
            result = await self._client.list()
        except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
            raise _unavailable(self.base_url) from None
        except ollama.ResponseError as exc:
            raise ModelError(f"Ollama could not list models (HTTP {exc.status_code}).") from None
        except httpx.HTTPError as exc:
            raise ModelError(f"Ollama could not list models: {exc.__class__.__name__}.") from None
        return [m.model for m in result.models if m.model]

    async def version(self) -> str:
        try:
            response = await self._client._client.get("/api/version", timeout=5.0)
            response.raise_for_status()
            return str(response.json().get("version", "unknown"))
        except (httpx.ConnectError, httpx.ConnectTimeout, ConnectionError):
            raise _unavailable(self.base_url) from None
        except (httpx.HTTPError, ValueError) as exc:
            raise ModelError(f"Ollama's version check failed: {exc.__class__.__name__}.") from None

    async def aclose(self) -> None:
        await self._client.close()


def model_present(wanted: str, installed: Sequence[str]) -> bool:
    """Ollama names default to the ``latest`` tag: ``nomic-embed-text`` is ``nomic-embed-text:latest``."""
    name = wanted if ":" in wanted else f"{wanted}:latest"
    return wanted in installed or name in installed
