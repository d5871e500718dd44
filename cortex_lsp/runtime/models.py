"""The model client a front keeps: built from the settings, rebuilt when they change, closed when unused.

:class:`ModelSlot` holds the current client (a run in progress keeps the one it started with; a replaced
client is closed once no run is active, :func:`close_retired`). Memory, opened once, talks to whichever
client is current (:class:`CurrentModel`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal

from cortex_lsp.config import Settings
from cortex_lsp.models.base import ChatChunk, ChatOptions, Message, ModelClient, ToolSpec
from cortex_lsp.runtime.settings import model_key


class ModelSlot:
    """One front's model client, keyed by the settings it was built from."""

    def __init__(self) -> None:
        self.client: ModelClient | None = None
        self.key: tuple[Any, ...] | None = None
        self.backend_info: Any = None
        self.lock = asyncio.Lock()
        self.retired: list[ModelClient] = []

    async def get(self, settings: Settings, active_runs: int) -> ModelClient:
        async with self.lock:
            await close_retired(self.retired, active_runs)
            key = model_key(settings)
            if self.client is None or key != self.key:
                if self.client is not None:  # a run in progress keeps it; closed once no run is active
                    self.retired.append(self.client)
                from cortex_lsp.models.factory import create_model_client

                self.client, self.backend_info = await create_model_client(settings)
                self.key = key
            return self.client

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        await close_retired(self.retired, 0)


async def close_retired(retired: list[ModelClient], active_runs: int) -> None:
    """Close the model clients a settings change replaced, once no run is using one."""
    if active_runs or not retired:
        return
    done, retired[:] = list(retired), []
    for client in done:
        try:
            await client.aclose()
        except Exception:
            pass


class CurrentModel:
    """A :class:`ModelClient` that always uses the server's current client (memory and its background
    learning follow a model-server change without a restart). Closing it closes nothing: the server
    owns the real clients."""

    def __init__(self, current: Callable[[], Awaitable[ModelClient]], backend: str) -> None:
        self._current = current
        self.backend = backend

    async def chat_stream(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        tools: Sequence[ToolSpec] | None = None,
        format: dict[str, Any] | Literal["json"] | None = None,
        options: ChatOptions | None = None,
    ) -> AsyncIterator[ChatChunk]:
        client = await self._current()
        self.backend = client.backend
        async for chunk in client.chat_stream(messages, model=model, tools=tools, format=format, options=options):
            yield chunk

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        client = await self._current()
        self.backend = client.backend
        return await client.embed(texts, model=model)

    async def list_models(self) -> list[str]:
        return await (await self._current()).list_models()

    async def version(self) -> str:
        return await (await self._current()).version()

    async def aclose(self) -> None:
        return None
