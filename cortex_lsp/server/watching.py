"""The editor's file changes, for the document index: saves, open documents' edits and closes, and a file
watcher registered with the client (``workspace/didChangeWatchedFiles``) when it can register one.

Each notification becomes plain paths handed to the server's one
:class:`~cortex_lsp.memory.docchanges.DocChanges` (the agent and memory code never see LSP types);
``doc_search`` then re-reads only those paths. Without dynamic watcher registration the index cannot
know what changed on disk, so :attr:`DocChanges.watching` stays false and every search walks the folder.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from cortex_lsp.memory.docchanges import DocChanges

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.watching")
REGISTRATION_ID = "cortex-doc-watcher"
REGISTER_SECONDS = 10.0


def doc_changes(ls: CortexServer) -> DocChanges:
    """The server's one record of changed files (made on first use)."""
    changes = ls.service("doc_changes")
    if changes is None:
        changes = DocChanges()
        ls.set_service("doc_changes", changes)
    return changes  # type: ignore[no-any-return]


def can_watch(caps: types.ClientCapabilities | None) -> bool:
    watched = caps.workspace.did_change_watched_files if caps is not None and caps.workspace else None
    return bool(watched is not None and watched.dynamic_registration)


def watchers() -> list[types.FileSystemWatcher]:
    """Documents: created, changed, deleted; anything: created or deleted (a folder moved in or out)."""
    from cortex_lsp.memory.docfresh import DOC_EXTENSIONS
    exts = ",".join(sorted(e.lstrip(".") for e in DOC_EXTENSIONS))
    return [
        types.FileSystemWatcher(glob_pattern=f"**/*.{{{exts}}}"),
        types.FileSystemWatcher(glob_pattern="**/*", kind=types.WatchKind.Create | types.WatchKind.Delete),
    ]


def note(ls: CortexServer, uris: list[str]) -> None:
    """Record the ``file:`` URIs that changed (others, and paths the index never reads, are ignored)."""
    from cortex_lsp.memory.docfresh import may_matter

    roots = ls.roots
    paths = [p for u in uris if u.startswith("file:") and (p := to_fs_path(u)) and may_matter(p, roots)]
    if paths:
        doc_changes(ls).changed(paths)


def start(ls: CortexServer) -> None:
    """In the background (``initialized`` is not held up): register the file watcher if the client can."""
    if can_watch(ls.client_capabilities):
        ls.set_service("doc_watcher", asyncio.ensure_future(_register(ls)))


async def _register(ls: CortexServer) -> None:
    """From the client's yes on, searches trust the changes (a no: every search walks, as before)."""
    params = types.RegistrationParams(registrations=[types.Registration(
        id=REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers()))])
    try:
        await asyncio.wait_for(ls.client_register_capability_async(params), REGISTER_SECONDS)
    except Exception as exc:
        log.info("file watcher not registered (%s): every doc_search walks the folder", exc)
        return
    doc_changes(ls).start_watching()


def register(server: CortexServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(ls: CortexServer, params: types.DidSaveTextDocumentParams) -> None:
        note(ls, [params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: CortexServer, params: types.DidChangeTextDocumentParams) -> None:
        note(ls, [params.text_document.uri])  # the index reads the open document's text

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: CortexServer, params: types.DidCloseTextDocumentParams) -> None:
        note(ls, [params.text_document.uri])  # back to the text on disk

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_watched(ls: CortexServer, params: types.DidChangeWatchedFilesParams) -> None:
        note(ls, [c.uri for c in params.changes])
