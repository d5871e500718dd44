"""Lifecycle and document features: initialize (roots, settings), configuration sync, folder changes,
progress cancellation, code actions, shutdown."""

from __future__ import annotations

import asyncio
import logging
from pathlib import PurePosixPath
from typing import Any

from lsprotocol import types

from cortex_lsp.server import commands, startup, warmup, watching
from cortex_lsp.server.app import CortexServer
from cortex_lsp.server.capabilities import supports_configuration
from cortex_lsp.server.code_actions import ParseCache, code_actions
from cortex_lsp.server.documents import open_document

log = logging.getLogger("cortex.features")
SHUTDOWN_SECONDS = 10.0  # closing the services (runs, sandbox, memory, model) at shutdown takes at most this


def _cortex_section(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        inner = value.get("cortex", value)
        return inner if isinstance(inner, dict) else None
    return None


def register(server: CortexServer) -> None:
    commands.register(server)
    watching.register(server)  # file changes for doc_search (server/watching.py)
    parses = ParseCache()  # this server's parsed documents, one parse per version (code actions)

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: CortexServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        editor = _cortex_section(options) if options is not None else None
        if options is not None and editor is None:
            log.warning("initializationOptions.cortex is not an object; ignored")
        startup.keep_editor_options(ls, editor or {})  # settings are read after the answer (server/startup.py)
        ls.announce_refused_roots()  # `/`, the home folder, /etc…: left out of the roots, the user told once
        log.info("initialized", extra={"run_id": ""})

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: CortexServer, params: types.InitializedParams) -> None:
        warmup.start_imports(ls)  # first: nothing imports the agent on the loop thread meanwhile
        ls.mirror_logs()
        await startup.load_settings(ls)  # pydantic and YAML imported off the loop, after initialize
        if supports_configuration(ls.client_capabilities):
            await _pull_configuration(ls)
        warmup.start(ls)  # background: agent imports, model connection, memory store (server/warmup.py)
        watching.start(ls)  # the file watcher for doc_search, if the client can register one

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: CortexServer, params: types.DidChangeConfigurationParams) -> None:
        if supports_configuration(ls.client_capabilities):
            ls.settings_current.clear()  # the next run's model waits for the pulled settings
            try:
                await _pull_configuration(ls)
            finally:
                ls.settings_current.set()
            return
        section = _cortex_section(params.settings)
        if section is not None:
            _apply_changed(ls, {**ls.editor_settings, **section})

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(ls: CortexServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # pygls has already updated ls.workspace; roots are derived from it. Folder config may differ.
        ls.announce_refused_roots()
        ls.reload_settings()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def on_cancel(ls: CortexServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.runs.cancel_by_token(params.token)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.Empty, types.CodeActionKind.QuickFix,
                               types.CodeActionKind.Source],
            resolve_provider=False,
        ),
    )
    def on_code_action(ls: CortexServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        if not uri.startswith("file:"):
            return []
        doc = open_document(ls, uri)
        source = doc.source if doc is not None else ""
        language = (doc.language_id or "") if doc is not None else ""
        version = doc.version if doc is not None else None
        writable = PurePosixPath(uri).suffix.lower() in {e.lower() for e in ls.settings.allowed_write_extensions}
        return code_actions(uri, source, language, params, parses=parses, version=version, writable=writable)

    @server.feature(types.EXIT)
    def on_exit(ls: CortexServer, *args: Any) -> None:
        ls.connection_ended()  # pygls closes stdout next: nothing may be written after it

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: CortexServer, *args: Any) -> None:
        _snapshot_request_table(ls)
        try:  # the editor waits for this answer before ``exit``: never longer than SHUTDOWN_SECONDS
            await asyncio.wait_for(ls.aclose(), SHUTDOWN_SECONDS)
        except TimeoutError:
            log.warning("shutdown: closing the services took over %g s; answering anyway", SHUTDOWN_SECONDS)


class _SnapshotTable(dict[Any, Any]):
    """pygls's table of pending requests, iterated over a copy: at shutdown pygls cancels each pending
    request while it iterates the table, and a cancelled generator/thread future removes itself from
    the table at once ("dictionary changed size during iteration" made shutdown answer an error)."""

    def items(self) -> Any:
        return list(super().items())


def _snapshot_request_table(ls: CortexServer) -> None:
    protocol = ls.protocol
    protocol._request_futures = _SnapshotTable(protocol._request_futures)  # no public hook in pygls 2


async def _pull_configuration(ls: CortexServer) -> None:
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="cortex")])),
            timeout=5,
        )
    except Exception as exc:
        log.warning("workspace/configuration failed: %s", exc)
        return
    value = result[0] if result else None
    if value is None:
        return
    if not isinstance(value, dict):
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning,
            message="Cortex settings: the 'cortex' section must be an object; ignored."))
        return
    # the pulled section is the editor's whole Cortex configuration: a setting the user removed is gone
    _apply_changed(ls, value)


def _apply_changed(ls: CortexServer, editor: dict[str, Any]) -> None:
    """Settings changed while running: a bad value keeps the value in effect (one message, naming it);
    the model client follows for the next run (server/settings_reload.py)."""
    from cortex_lsp.server.settings_reload import screen_editor_settings  # pydantic: not before initialize

    update = screen_editor_settings(editor, ls.settings)
    ls.reload_settings(update.settings, notes=update.messages)
