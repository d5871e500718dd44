"""The agent's view of the editor: allowed roots, and open documents' (unsaved) text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from pygls.workspace import TextDocument

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer


def open_document(server: CortexServer, uri: str) -> TextDocument | None:
    """The open document for ``uri``, however it is percent-encoded (pygls keys documents by the
    client's spelling; ``Path.as_uri()`` encodes spaces and non-ASCII)."""
    docs = server.workspace.text_documents
    doc = docs.get(uri) or docs.get(unquote(uri))
    if doc is None:
        wanted = unquote(uri)
        doc = next((d for key, d in docs.items() if unquote(key) == wanted), None)
    return doc


class LspWorkspace:
    """:class:`cortex_lsp.ports.Workspace` backed by the server: roots follow the editor's folders."""

    def __init__(self, server: CortexServer) -> None:
        self._server = server

    @property
    def roots(self) -> list[Path]:
        return self._server.roots

    def read_text(self, path: Path) -> str | None:
        doc = open_document(self._server, path.as_uri())
        return doc.source if doc is not None else None
