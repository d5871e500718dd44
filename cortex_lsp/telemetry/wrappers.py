"""Traced stand-ins for the model client and memory, used in a run's dependencies while telemetry is on:
a span per model call (token counts, time to first token) and per memory read or write, plus the model
metrics. They forward everything else unchanged."""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from cortex_lsp import telemetry
from cortex_lsp.models.base import ChatChunk, ChatOptions, Message, ToolSpec

#: characters per token for the prompt-size estimate (the streamed reply is counted, not estimated)
CHARS_PER_TOKEN = 4
MAX_CONTENT_CHARS = 4000

MEMORY_READS = frozenset({"history", "related_facts", "tool_hints", "search", "sessions", "session_turns"})


class TracedModel:
    """A :class:`~cortex_lsp.models.base.ModelClient` whose chat calls are spans and metrics."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.backend = inner.backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def chat_stream(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        tools: Sequence[ToolSpec] | None = None,
        format: dict[str, Any] | Literal["json"] | None = None,
        options: ChatOptions | None = None,
    ) -> AsyncIterator[ChatChunk]:
        prompt_chars = sum(len(m.content) for m in messages)
        started = time.monotonic()
        first: float | None = None
        tokens = 0
        calls = 0
        parts: list[str] = []
        outcome = "error"
        attrs: dict[str, telemetry.Attr | None] = {
            "gen_ai.operation.name": "chat", "gen_ai.system": self.backend, "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": prompt_chars // CHARS_PER_TOKEN, "cortex.model.messages": len(messages),
            "cortex.model.tools_offered": len(tools or ()), "cortex.model.structured": format is not None}
        prompt = {"cortex.model.prompt": messages[-1].content[-MAX_CONTENT_CHARS:]} if messages else None
        with telemetry.span("model.chat", attrs, content=prompt, current=False) as span:
            try:
                async for chunk in self._inner.chat_stream(messages, model=model, tools=tools, format=format,
                                                           options=options):
                    if first is None and (chunk.content or chunk.tool_calls):
                        first = time.monotonic() - started
                    if chunk.content:
                        tokens += chunk.pieces
                        if sum(map(len, parts)) < MAX_CONTENT_CHARS:
                            parts.append(chunk.content)
                    calls += len(chunk.tool_calls)
                    yield chunk
                outcome = "ok"
            except (GeneratorExit, asyncio.CancelledError):
                outcome = "cancelled"
                raise
            finally:
                latency = time.monotonic() - started
                span.set({"gen_ai.usage.output_tokens": tokens, "cortex.model.tool_calls": calls,
                            "cortex.model.ttft_ms": round(first * 1000, 1) if first is not None else None,
                            "cortex.model.outcome": outcome})
                span.content({"cortex.model.reply": "".join(parts)[:MAX_CONTENT_CHARS]})
                telemetry.record_model_call(model=model, latency_s=latency, ttft_s=first, output_tokens=tokens,
                                            outcome=outcome)

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        with telemetry.span("model.embed", {"gen_ai.operation.name": "embeddings",
                                              "gen_ai.request.model": model, "cortex.model.inputs": len(texts)}):
            result: list[list[float]] = await self._inner.embed(texts, model=model)
            return result


class TracedMemory:
    """A :class:`~cortex_lsp.memory.api.Memory` whose async calls are spans (``memory.<call>``)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name.startswith("_") or not inspect.iscoroutinefunction(value):
            return value

        @functools.wraps(value)
        async def traced(*args: Any, **kwargs: Any) -> Any:
            op = "read" if name in MEMORY_READS else "write"
            with telemetry.span(f"memory.{name}", {"cortex.memory.op": op}) as span:
                result = await value(*args, **kwargs)
                if isinstance(result, list):
                    span.set({"cortex.memory.items": len(result)})
                return result

        return traced
