"""Choose and build the model client from settings (one client per server, reused).

``model_backend``: ``ollama``; ``openai`` (any OpenAI-compatible server at ``openai_base_url``);
``auto`` (the default): Ollama when its ``/api/version`` answers within a second, else the embedded
llama.cpp default where the ``local`` extra and a model are installed, else an actionable error. The
embedded default embeds with the packaged all-MiniLM-L6-v2 ONNX model where it is installed
(``BackendInfo.embed_model`` names it, and memory collections are keyed by it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from cortex_lsp.config import Settings
from cortex_lsp.models.base import ModelClient, ModelError, ModelUnavailable, plain_http_options
from cortex_lsp.models.limits import StreamLimits
from cortex_lsp.models.local_server import INSTALL_ADVICE, local_problem, start_embedded
from cortex_lsp.models.ollama_client import OllamaClient
from cortex_lsp.models.openai_client import OpenAIClient

OLLAMA_PROBE_SECONDS = 1.0


@dataclass(frozen=True)
class BackendInfo:
    """Which backend answers, where, and (for the embedded default) the model names it serves."""

    backend: str  # "ollama" | "openai" | "embedded"
    base_url: str
    detail: str = ""
    #: when set, use these instead of the configured chat / embedding model names
    chat_model: str | None = None
    embed_model: str | None = None

    def describe(self) -> str:
        model = f", model {self.chat_model}" if self.chat_model else ""
        return f"{self.backend} at {self.base_url}{model}" + (f" ({self.detail})" if self.detail else "")


def stream_limits(settings: Settings) -> StreamLimits:
    """The bounds on a model's replies, from the settings."""
    return StreamLimits(max_answer_bytes=settings.max_answer_bytes, max_tool_args_bytes=settings.max_tool_args_bytes,
                        max_tool_calls=settings.max_tool_calls)


async def ollama_answers(base_url: str, within: float = OLLAMA_PROBE_SECONDS) -> bool:
    """Whether Ollama's ``/api/version`` answers 200 within ``within`` seconds."""
    try:
        async with httpx.AsyncClient(timeout=within, **plain_http_options(base_url)) as probe:
            response = await probe.get(f"{base_url.rstrip('/')}/api/version")
        return response.status_code == 200
    except httpx.HTTPError:
        return False


def _ollama(settings: Settings) -> tuple[ModelClient, BackendInfo]:
    client = OllamaClient(
        settings.ollama_base_url,
        timeout=settings.ollama_timeout_seconds,
        num_ctx=settings.ollama_num_ctx,
        keep_alive=settings.ollama_keep_alive,
        limits=stream_limits(settings),
    )
    return client, BackendInfo(backend="ollama", base_url=settings.ollama_base_url)


async def create_model_client(settings: Settings) -> tuple[ModelClient, BackendInfo]:
    """The configured backend's client; for ``auto``, probes Ollama and may start the embedded server.

    Raises :class:`ModelUnavailable` (with advice) when ``auto`` finds neither.
    """
    # a client is built in a worker thread: its HTTP client loads the TLS certificates (tens of ms)
    if settings.model_backend == "ollama":
        return await asyncio.to_thread(_ollama, settings)
    if settings.model_backend == "openai":
        client = await asyncio.to_thread(
            lambda: OpenAIClient(settings.openai_base_url, api_key=settings.openai_api_key,
                                 timeout=settings.ollama_timeout_seconds, limits=stream_limits(settings)))
        return client, BackendInfo(backend="openai", base_url=settings.openai_base_url)
    if await ollama_answers(settings.ollama_base_url):
        client_info = await asyncio.to_thread(_ollama, settings)
        return client_info[0], BackendInfo(backend="ollama", base_url=settings.ollama_base_url,
                                           detail="auto: Ollama answered")
    problem = local_problem(settings.local_model_path)
    if problem is not None and problem.bad_path:  # the user's own setting is the cause: say it first
        raise ModelUnavailable(
            f"{problem.reason} (and Ollama is not answering at {settings.ollama_base_url}).", problem.advice)
    if problem is not None:
        raise ModelUnavailable(
            f"No model server: Ollama is not answering at {settings.ollama_base_url}, and the embedded "
            f"default can't run ({problem.reason}).", problem.advice)
    try:
        embedded = await start_embedded(settings.local_model_path,
                                        request_seconds=settings.ollama_timeout_seconds)
        embedded.limits = stream_limits(settings)
    except ModelError as exc:
        raise ModelUnavailable(
            f"No model server: Ollama is not answering at {settings.ollama_base_url}, and {exc}",
            exc.advice or INSTALL_ADVICE) from None
    server = embedded.server
    return embedded, BackendInfo(
        backend="embedded",
        base_url=server.base_url,
        detail=f"auto: Ollama not answering; llama.cpp serving {server.config.model_path.name} "
               f"(pid {server.pid}, ready in {server.started_seconds:.1f} s)",
        chat_model=server.chat_model,
        embed_model=embedded.embed_model,
    )
