"""Answer ``initialize`` first, read the settings right after.

The ``initialize`` result depends on nothing in the settings (capabilities and command names are fixed),
but reading them imports pydantic and YAML (~130 ms on a quiet machine, more than a third of what Cortex
adds to ``lsprotocol``'s own import). So ``initialize`` only keeps the editor's options
(:func:`keep_editor_options`), and when the editor says ``initialized`` — it has the result by then —
:func:`load_settings` imports the settings module in a worker thread (the event loop keeps answering),
then loads the settings on the loop as before: every layer, bad values to defaults with one message.
Whatever needs the settings before that (a client that never sends ``initialized``, a test driving the
server directly) loads them itself through ``CortexServer.loaded``; this step then leaves them alone.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.startup")

SETTINGS_MODULE = "cortex_lsp.config"


def keep_editor_options(ls: CortexServer, editor: dict[str, Any]) -> None:
    """``initialize``: keep ``initializationOptions.cortex``; the settings are read after the answer."""
    ls.editor_settings = editor


async def load_settings(ls: CortexServer) -> None:
    """Import the settings module off the loop, then load the settings unless someone already did."""
    # Holding the memory and model locks keeps a first command from importing the same packages on the
    # loop thread at the same time (see server/warmup.py): it waits there until this import is done.
    # Memory first, then model: the order ``ls.memory()`` takes them in (the other order can deadlock).
    try:
        async with ls._memory_lock, ls._model_lock:
            await asyncio.to_thread(importlib.import_module, SETTINGS_MODULE)
    except Exception:  # not in an installed package; the load on the loop below reports it if it happens
        log.exception("the settings module could not be imported in the background")
    if not ls.settings_loaded:
        ls.reload_settings()
