"""The agent's view of the editor: allowed roots, and open documents' (unsaved) text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer


class LspWorkspace:
    """:class:`cortex_lsp.ports.Workspace` backed by the server: roots follow the editor's folders."""

    def __init__(self, server: CortexServer) -> None:
        self._server = server

    @property
    def roots(self) -> list[Path]:
        return self._server.roots

    def read_text(self, path: Path) -> str | None:
        doc = self._server.workspace.text_documents.get(path.as_uri())
        return doc.source if doc is not None else None
