"""Choose and build the model client from settings (one client per server, reused)."""

from __future__ import annotations

from dataclasses import dataclass

from cortex_lsp.config import Settings
from cortex_lsp.models.base import ModelClient
from cortex_lsp.models.ollama_client import OllamaClient


@dataclass(frozen=True)
class BackendInfo:
    backend: str
    base_url: str
    detail: str = ""


def create_model_client(settings: Settings) -> tuple[ModelClient, BackendInfo]:
    """The configured backend's client. ``auto`` is Ollama for now (the embedded default lands with issue 7)."""
    client = OllamaClient(
        settings.ollama_base_url,
        timeout=settings.ollama_timeout_seconds,
        num_ctx=settings.ollama_num_ctx,
        keep_alive=settings.ollama_keep_alive,
    )
    return client, BackendInfo(backend="ollama", base_url=settings.ollama_base_url)
