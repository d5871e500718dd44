"""Opening the memory store for a front: the persistent store when it opens, else this process's memory."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.memory.api import InProcessMemory, Memory
from cortex_lsp.models.base import ModelClient

log = logging.getLogger("cortex.memory")


async def open_memory(settings: Settings, model: Callable[[], Awaitable[ModelClient]],
                      backend_info: Callable[[], Any], warn: Callable[[str], None]) -> Memory:
    """The store in ``settings.data_dir``, embedding with whatever ``model()`` currently returns (raises
    :class:`~cortex_lsp.models.base.ModelError` when no model answers). It returns once the turn log is
    open; the vector store comes up in the background (recall is skipped, with a note, until it has).

    ``warn`` gets each notice for the user (a data folder tightened, a store that could not open and
    the fallback to memory kept in this process only)."""
    try:
        from cortex_lsp.memory.store import PersistentMemory
    except ImportError:
        return InProcessMemory()
    client = await model()  # a ModelError goes to the caller: memory is keyed by the embedding model
    try:
        served = getattr(backend_info(), "embed_model", None)
        if served and served != settings.embed_model:
            # the embedded default serves its own model: key the vector collections by what answers
            settings = settings.model_copy(update={"embed_model": served})
        from cortex_lsp.runtime.models import CurrentModel

        memory = PersistentMemory(settings, CurrentModel(model, client.backend))  # follows a URL change
        # the turn log now; the vector store (a process that imports Chroma: seconds) when it is up
        await memory.open(wait_for_vectors=False)
        for notice in memory.notices:  # e.g. the data folder was readable by others and was tightened
            warn(notice)
        memory.on_vectors_failed(lambda exc: _vector_store_failed(exc, settings, warn))
        return memory
    except Exception as exc:
        log.warning("persistent memory unavailable, keeping turns in this process: %s", exc)
        warn(f"Cortex memory could not open its store in {settings.data_dir} ({exc}); "
             "this session's turns are kept in memory only.")
        return InProcessMemory()



def _vector_store_failed(exc: BaseException, settings: Settings, warn: Callable[[str], None]) -> None:
    log.warning("the vector store did not start: %s", exc)
    warn(f"Cortex memory could not start its vector store in {settings.data_dir} ({exc}); facts, "
         "learned tool sequences and document search are unavailable; chat history is kept.")
