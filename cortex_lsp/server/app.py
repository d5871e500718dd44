"""The language server object: roots, settings, shared clients, and protocol hooks.

Thin by design: features (commands, code actions, config sync) live in their own modules and call
plain modules (agent, tools, memory) that know nothing of LSP.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import _prepare_command_arguments, lsp_method
from pygls.uris import to_fs_path

from cortex_lsp import __version__
from cortex_lsp.guards.project_roots import root_refusal
from cortex_lsp.server import lifecycle
from cortex_lsp.server.edits import LspEditSink
from cortex_lsp.server.logs import LspMirror, mirror_to_client, observe
from cortex_lsp.server.runs import RunManager

if TYPE_CHECKING:  # settings (pydantic, YAML) and memory are imported after `initialize` is answered
    from cortex_lsp.config import LoadedSettings, Settings
    from cortex_lsp.memory.api import Memory, SessionInfo
    from cortex_lsp.models.base import ModelClient
    from cortex_lsp.server.warmup import Imports

log = logging.getLogger("cortex.server")


class CortexProtocol(LanguageServerProtocol):
    """Adds: every executeCommand is registered with the run manager when it arrives (request id and
    ``workDoneToken``), so ``$/cancelRequest`` at any time stops its agent run (the request still answers
    with the run's result, ``stop_reason: cancelled``) or interrupts an interruptible command."""

    #: set when ``exit`` arrives (pygls closes stdout next): nothing more is written. A run
    #: cancelled by the exit's clean-up still sends its last notes; each write to the closed stdout failed,
    #: pygls reported the failure to the client (another failing write), recursively: tens of MB of
    #: tracebacks on stderr and a busy process past its exit watchdog.
    connection_over = False
    initialize_received = False  # set when ``initialize`` passes the lifecycle gate (server/lifecycle.py)

    @property
    def _cortex(self) -> CortexServer:
        return self._server  # type: ignore[return-value]

    def _send_data(self, data: Any) -> None:
        if self.connection_over:
            return
        super()._send_data(data)

    def handle_message(self, message: Any) -> None:
        """Every message passes the lifecycle gate first (before initialize / after shutdown: refused, no effect)."""
        method, is_request = lifecycle.message_kind(message)
        if method is not None:
            refusal = lifecycle.check(method, is_request=is_request, initialized=self.initialize_received,
                                      shut_down=self._shutdown)
            if refusal is not None:
                # the log line names the request: a test (and a reader of the log) sees which one the gate stopped
                log.warning("refused %s%s", refusal.reason, f" (request {message.id})" if is_request else "")
                if refusal.error is not None:
                    self._send_response(message.id, error=refusal.error.to_response_error())
                return
            if method == types.INITIALIZE:
                self.initialize_received = True
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # An executeCommand in flight is ours from the moment it arrived: the run stops (or never
        # starts) and the request answers with the truthful result, not pygls' bare "canceled".
        if self._cortex.runs.cancel_by_msg(msg_id):
            return
        super()._handle_cancel_notification(msg_id)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Any:
        msg_id = self.msg_id
        self._cortex.command_tokens[msg_id] = params.work_done_token
        self._cortex.runs.arrive(msg_id, params.work_done_token, params.command)  # before any await
        try:
            if (handler := self.fm.commands.get(params.command)) is None:
                raise JsonRpcInvalidParams.of(ValueError(f"Command name {params.command!r} is not defined"))
            try:
                args, kwargs = _prepare_command_arguments(handler, params, self._converter)
            except Exception as exc:
                raise JsonRpcInvalidParams.of(exc) from exc
            # as pygls does, with the handler wrapped so that a cancel can reach its task
            result = yield self._cortex.runs.cancellable(msg_id, handler), args, kwargs
        finally:
            self._cortex.command_tokens.pop(msg_id, None)
            self._cortex.runs.depart(msg_id)
        return result


class CortexServer(LanguageServer):
    #: the process's exit code once stdio is done: 0 after ``shutdown``, 1 without (the LSP rule)
    exit_code = 0

    def __init__(self) -> None:
        super().__init__(
            name="cortex-lsp",
            version=__version__,
            protocol_cls=CortexProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self._loaded: LoadedSettings | None = None  # loaded on first use (server/startup.py: after initialize)
        self.runs = RunManager(self)
        self.edits = LspEditSink(self)
        self.command_tokens: dict[Any, types.ProgressToken | None] = {}
        self._model: ModelClient | None = None
        self._model_key: tuple[Any, ...] | None = None
        self._model_lock = asyncio.Lock()
        self.settings_current = asyncio.Event()  # cleared while a changed configuration is being pulled
        self.settings_current.set()
        self._retired_models: list[ModelClient] = []
        self.backend_info: Any = None
        self._memory: Memory | None = None
        self._memory_lock = asyncio.Lock()
        self.editor_settings: dict[str, Any] = {}
        self._settings_shown: str | None = None
        self._services: dict[str, Any] = {}
        self._roots_refused_shown: set[Path] = set()
        #: the background import started by ``initialized`` (server/warmup.py); None before it
        self.imports: Imports | None = None

    # -- transport -------------------------------------------------------------------------------
    def _start_io_async(self, stdin: Any = None, stdout: Any = None) -> None:
        """stdio through our one reader (server/transport.py): on the loop, resynchronising on bad frames."""
        from cortex_lsp.server.transport import serve_stdio

        self.exit_code = serve_stdio(self, stdin, stdout)

    def connection_ended(self) -> None:
        """``exit`` arrived: nothing more is written to the client (:attr:`CortexProtocol.connection_over`)."""
        cast(CortexProtocol, self.protocol).connection_over = True

    # -- settings --------------------------------------------------------------------------------
    @property
    def loaded(self) -> LoadedSettings:
        if self._loaded is None:
            self.reload_settings()
        assert self._loaded is not None
        return self._loaded

    @loaded.setter
    def loaded(self, value: LoadedSettings) -> None:
        self._loaded = value

    @property
    def settings_loaded(self) -> bool:
        return self._loaded is not None

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    def reload_settings(self, editor: dict[str, Any] | None = None, *, notes: list[str] | None = None) -> list[str]:
        """Load every layer again; ``notes``: what was wrong with a changed editor layer (settings_reload.py),
        shown in the same one message."""
        from cortex_lsp.runtime.settings import load_front_settings  # pydantic: not before initialize

        if editor is not None:
            self.editor_settings = editor
        self.loaded, messages = load_front_settings(self.roots, self.editor_settings, notes)
        messages += observe(self.settings)
        shown = "Cortex settings: " + " ".join(messages) if messages else None
        if shown and shown != self._settings_shown:  # the same problems again (another reload) are not repeated
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=shown))
        self._settings_shown = shown
        return messages

    # -- roots -----------------------------------------------------------------------------------
    def _opened_folders(self) -> list[Path]:
        """Every folder the editor opened (workspace folders, else the root URI), refused ones included."""
        try:
            workspace = self.workspace
        except RuntimeError:
            return []
        paths: list[Path] = []
        for folder in workspace.folders.values():
            fs = to_fs_path(folder.uri)
            if fs and folder.uri.startswith("file:"):
                paths.append(Path(fs).resolve())
        if not paths and workspace.root_uri and workspace.root_uri.startswith("file:") and workspace.root_path:
            paths.append(Path(workspace.root_path).resolve())
        return list(dict.fromkeys(paths))

    @property
    def roots(self) -> list[Path]:
        """The project folders the agent's tools may use: the opened folders that may be roots
        (guards/project_roots.py: never ``/``, the home folder itself or a system folder)."""
        return [p for p in self._opened_folders() if root_refusal(p) is None]

    def announce_refused_roots(self) -> None:
        """One message naming each opened folder that is not a project (each folder is named once)."""
        refused = [(p, why) for p in self._opened_folders() if (why := root_refusal(p)) is not None
                   and p not in self._roots_refused_shown]
        if not refused:
            return
        self._roots_refused_shown.update(p for p, _ in refused)
        reasons = "; ".join(why for _, why in refused)
        names = ", ".join(str(p) for p, _ in refused)
        message = (f"Cortex will not use {names} as a workspace folder: {reasons}. Its files stay out of the "
                   "agent's reach; open a project folder instead.")
        log.warning("refused workspace folder(s): %s", names)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    def protected_dirs(self) -> list[Path]:
        extra = [self.settings.data_dir.expanduser()]
        if self.settings.plugins_dir:
            extra.append(self.settings.plugins_dir.expanduser())
        return extra

    # -- shared clients --------------------------------------------------------------------------
    async def modules_ready(self) -> None:
        """Wait while the background import (server/warmup.py) runs: whatever it imports is never
        imported on the loop thread at the same time. Returns at once without one (no ``initialized``)."""
        if self.imports is not None:
            await asyncio.wait({self.imports.commands})

    async def settings_module_ready(self) -> None:
        """Wait until the background import has the settings module (pydantic, YAML)."""
        if self.imports is not None:
            await asyncio.wait({self.imports.settings})

    async def model(self) -> ModelClient:
        await self.modules_ready()
        # a run started just after the editor changed a setting uses the new one (the pull has its own
        # 5 s time-out, so this never waits longer)
        await self.settings_current.wait()
        s = self.settings
        from cortex_lsp.runtime.models import close_retired  # pydantic: not before initialize
        from cortex_lsp.runtime.settings import model_key

        key = model_key(s)
        async with self._model_lock:

            await close_retired(self._retired_models, self.runs.active)
            if self._model is None or key != self._model_key:
                if self._model is not None:  # a run in progress keeps it; closed once no run is active
                    self._retired_models.append(self._model)
                from cortex_lsp.models.factory import create_model_client

                model, self.backend_info = await create_model_client(s)
                self._model, self._model_key = model, key
                return model
            return self._model

    async def memory(self) -> Memory:
        await self.modules_ready()
        async with self._memory_lock:
            if self._memory is not None:
                return self._memory
            from cortex_lsp.memory.api import InProcessMemory
            from cortex_lsp.models.base import ModelError

            try:
                self._memory = await self._open_memory()
            except ModelError:
                # no model yet: the run reports that, once, with its fix; memory opens on a later call
                return InProcessMemory()
            return self._memory

    async def sessions(self) -> list[SessionInfo]:
        """The chat sessions, newest first: from the open store, else straight from its turn log (listing
        them needs neither the model nor the vector store, which take seconds to start)."""
        if self._memory is not None:
            return await self._memory.sessions()
        from cortex_lsp.memory.episodic import EPISODIC_DB, read_sessions

        return await asyncio.to_thread(read_sessions, self.settings.data_dir.expanduser() / EPISODIC_DB)

    async def _open_memory(self) -> Memory:
        from cortex_lsp.runtime.memory_open import open_memory

        def warn(message: str) -> None:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

        return await open_memory(self.settings, self.model, lambda: self.backend_info, warn)

    def service(self, name: str) -> Any:
        return self._services.get(name)

    def set_service(self, name: str, value: Any) -> None:
        self._services[name] = value

    async def aclose(self) -> None:
        await self.runs.aclose()
        # A service may be added while another closes (the warm-up, still running, builds the tool
        # registry): iterating the live table raised "dictionary changed size during iteration", the
        # shutdown answered an error, and a client that sends ``exit`` only after a good shutdown left
        # the server running. Each pass closes what the last one had not seen.
        closed: set[int] = set()
        while pending := [v for v in list(self._services.values()) if id(v) not in closed]:
            for value in pending:
                closed.add(id(value))
                if isinstance(value, asyncio.Task):  # the warm-up: no use now, and it may be starting a model
                    value.cancel()
                    await asyncio.wait({value}, timeout=5.0)
                    continue
                closer = getattr(value, "aclose", None)
                if closer is not None:
                    try:
                        await closer()
                    except Exception:
                        log.exception("shutdown: a service failed to close")
        async with self._memory_lock:  # a store the warm-up is still opening is closed once it is open
            if self._memory is not None:
                await self._memory.aclose()
        if "cortex_lsp.memory.chroma" in sys.modules:  # the vector process, if this server started one
            from cortex_lsp.memory.chroma import close_vector_process

            await asyncio.to_thread(close_vector_process)
        if self._model is not None:
            await self._model.aclose()
        from cortex_lsp.runtime.models import close_retired

        await close_retired(self._retired_models, 0)
        from cortex_lsp import telemetry

        await asyncio.to_thread(telemetry.shutdown)  # the last spans and metrics go out

    def mirror_logs(self) -> None:
        levels = {logging.ERROR: types.MessageType.Error, logging.WARNING: types.MessageType.Warning,
                  logging.INFO: types.MessageType.Info}

        def send(levelno: int, text: str) -> None:
            kind = next((v for k, v in levels.items() if levelno >= k), types.MessageType.Log)
            self.window_log_message(types.LogMessageParams(type=kind, message=text))

        mirror_to_client(LspMirror(send))

