"""Answer ``initialize`` first, read the settings right after.

The ``initialize`` result depends on nothing in the settings (capabilities and command names are fixed),
but reading them imports pydantic and YAML (~130 ms on a quiet machine, more than a third of what Cortex
adds to ``lsprotocol``'s own import). So ``initialize`` only keeps the editor's options
(:func:`keep_editor_options`), and when the editor says ``initialized`` — it has the result by then —
the background import (server/warmup.py) brings the settings module in from a worker thread (the event
loop keeps answering) and :func:`load_settings` then loads the settings on the loop as before: every
layer, bad values to defaults with one message.
Whatever needs the settings before that (a client that never sends ``initialized``, a test driving the
server directly) loads them itself through ``CortexServer.loaded``; this step then leaves them alone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.startup")


def keep_editor_options(ls: CortexServer, editor: dict[str, Any]) -> None:
    """``initialize``: keep ``initializationOptions.cortex``; the settings are read after the answer."""
    ls.editor_settings = editor


async def load_settings(ls: CortexServer) -> None:
    """Wait for the background import to have the settings module (server/warmup.py: pydantic and YAML
    are imported off the loop), then load the settings unless someone already did."""
    await ls.settings_module_ready()
    if not ls.settings_loaded:
        ls.reload_settings()
