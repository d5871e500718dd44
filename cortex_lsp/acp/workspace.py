"""The agent's view of an ACP client: the session's folder, and its editor's (unsaved) text.

When the client offers ``fs/read_text_file``, a tool's read asks it (the editor answers from its buffer,
so unsaved changes are seen); the path has already passed the path guards. A slow, failing or oversized
answer falls back to the guarded disk read. What was read is kept for the run's synchronous readers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from cortex_lsp.guards.paths import MAX_READ_BYTES

log = logging.getLogger("cortex.acp")

#: how long a read waits for the editor before reading the disk instead
READ_TIMEOUT_SECONDS = 10.0

ClientRead = Callable[[Path], Awaitable[str]]


class AcpWorkspace:
    """:class:`cortex_lsp.ports.Workspace` for one ACP session."""

    def __init__(self, roots: list[Path], client_read: ClientRead | None) -> None:
        self._roots = roots
        self._client_read = client_read
        self._seen: dict[Path, str] = {}

    @property
    def roots(self) -> list[Path]:
        return self._roots

    def read_text(self, path: Path) -> str | None:
        return self._seen.get(path)

    async def read_text_async(self, path: Path) -> str | None:
        if self._client_read is None:
            return None
        try:
            text = await asyncio.wait_for(self._client_read(path), READ_TIMEOUT_SECONDS)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor could not read it (or took too long): the disk is read instead
            log.info("fs/read_text_file %s failed: %s", path.name, exc)
            return None
        if not isinstance(text, str) or len(text) > MAX_READ_BYTES:
            return None  # the guarded disk read refuses a file that large, with its reason
        self._seen[path] = text
        return text

    def remember(self, path: Path, text: str) -> None:
        """A write the client made: later steps of the run read what was written."""
        self._seen[path] = text
