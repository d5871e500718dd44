"""The kernel's services for a front that is not the language server: settings, model, memory, tools.

One :class:`KernelHost` per connection. Settings load per folder (:func:`settings_for`: every layer,
a project's own config file included, under the same security rules as the LSP front); the model
client (:class:`~cortex_lsp.runtime.models.ModelSlot`), the memory store, the sandbox pool and the
record of changed files are shared by every session of the connection; the tool registry is built per
set of roots (a session's folder), so one session's tools never reach another's folder.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex_lsp.runtime.models import ModelSlot

if TYPE_CHECKING:
    from cortex_lsp.agent.deps import AgentDeps
    from cortex_lsp.agent.meaning import MeaningClassifier
    from cortex_lsp.config import LoadedSettings, Settings
    from cortex_lsp.memory.api import Memory
    from cortex_lsp.models.base import ModelClient
    from cortex_lsp.ports import EditSink, Workspace
    from cortex_lsp.tools.registry import ToolRegistry

log = logging.getLogger("cortex.host")

#: what a first request imports (the kernel and its tools, the memory store), warmed off the loop; Chroma
#: runs in the vector process (memory/vector_process.py)
WARM_MODULES = ("cortex_lsp.config", "cortex_lsp.models.factory", "cortex_lsp.agent.kernel", "cortex_lsp.agent.deps",
                "cortex_lsp.tools.builtin", "cortex_lsp.tools.python_exec", "cortex_lsp.tools.web_fetch",
                "cortex_lsp.tools.doc_search", "cortex_lsp.memory.store", "numpy")


def _import_all(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # an optional extra not installed: the first request reports it
            log.info("warm-up could not import %s", name)


class KernelHost:
    def __init__(self, warn: Callable[[str], None], active_runs: Callable[[], int] = lambda: 0) -> None:
        self.warn = warn
        self.active_runs = active_runs
        self.models = ModelSlot()
        self._base: LoadedSettings | None = None
        self._memory: Memory | None = None
        self._memory_lock = asyncio.Lock()
        self._sandbox: Any = None
        self._doc_changes: Any = None
        self._registries: dict[tuple[Any, ...], ToolRegistry] = {}
        self._shown: set[str] = set()
        self._meaning: tuple[MeaningClassifier | None] | None = None

    # -- settings ------------------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The settings without a folder's layer (memory, the sandbox and the model follow these)."""
        if self._base is None:
            self._base = self.settings_for([])
        return self._base.settings

    def settings_for(self, roots: list[Path], editor: dict[str, Any] | None = None) -> LoadedSettings:
        """Every layer for ``roots``; problems are shown once (the same message is not repeated)."""
        from cortex_lsp.runtime.settings import load_front_settings

        loaded, messages = load_front_settings(roots, editor)
        if messages:
            shown = "Cortex settings: " + " ".join(messages)
            if shown not in self._shown:
                self._shown.add(shown)
                self.warn(shown)
        return loaded

    @staticmethod
    def protected_dirs(settings: Settings) -> list[Path]:
        extra = [settings.data_dir.expanduser()]
        if settings.plugins_dir:
            extra.append(settings.plugins_dir.expanduser())
        return extra

    # -- shared clients ------------------------------------------------------------------------------
    async def model(self, settings: Settings | None = None) -> ModelClient:
        return await self.models.get(settings or self.settings, self.active_runs())

    async def memory(self) -> Memory:
        async with self._memory_lock:
            if self._memory is None:
                from cortex_lsp.runtime.memory_open import open_memory

                self._memory = await open_memory(self.settings, self.model, lambda: self.models.backend_info,
                                                 self.warn)
            return self._memory

    def sandbox(self) -> Any:
        if self._sandbox is None:
            try:
                from cortex_lsp.tools.sandbox import SandboxPool
            except ImportError:
                return None
            self._sandbox = SandboxPool(self.settings)
        return self._sandbox

    def tools(self, settings: Settings, roots: list[Path], memory: Memory | None) -> ToolRegistry:
        key = (id(settings), tuple(roots), id(memory))
        if (cached := self._registries.get(key)) is not None:
            return cached
        from cortex_lsp.memory.docchanges import DocChanges
        from cortex_lsp.tools.builtin import build_registry

        if self._doc_changes is None:
            self._doc_changes = DocChanges()
        doc_index = getattr(memory, "doc_index", None)
        registry = build_registry(settings, sandbox=self.sandbox(), roots=roots,
                                  docs=(lambda: doc_index) if doc_index is not None else None,
                                  doc_changes=self._doc_changes)
        self._registries = {key: registry}  # one folder's tools at a time: an older session rebuilds its own
        return registry

    def meaning(self) -> MeaningClassifier | None:
        """The request classifier of a small model's router (the one the language server uses), created on
        first use; ``None`` when the packaged embedder is not installed."""
        if self._meaning is None:
            from cortex_lsp.agent.meaning import default_cache_dir, packaged_classifier

            self._meaning = (packaged_classifier(default_cache_dir()),)
        return self._meaning[0]

    async def deps(self, settings: Settings, workspace: Workspace, edits: EditSink | None) -> AgentDeps:
        from cortex_lsp.agent.deps import AgentDeps

        model = await self.model(settings)
        memory = await self.memory()
        return AgentDeps(settings=settings, model=model, memory=memory,
                         tools=self.tools(settings, workspace.roots, memory), workspace=workspace, edits=edits,
                         meaning=self.meaning() if settings.model_profile != "full" else None)

    async def warm(self) -> None:
        """Get ready for the first request in the background: import the agent off the event loop, open the
        memory store, connect to the model. Never raises: a step that fails is done (and reported) by the
        first request instead. Every request path opens memory first, so holding its lock while importing
        keeps the loop thread from importing the same modules at the same time."""
        try:
            async with self._memory_lock:
                await asyncio.to_thread(_import_all, WARM_MODULES)
            memory = await self.memory()
            await asyncio.to_thread(self.tools, self.settings, [], memory)
            if self.settings.model_profile != "full" and (classifier := self.meaning()) is not None:
                await classifier.warm()  # the route weights and the encoder, while the model starts
            await (await self.model()).version()
            start_vectors = getattr(memory, "start_vectors", None)
            if start_vectors is not None:  # last: the vector process imports Chroma (seconds of CPU)
                start_vectors()
        except Exception as exc:
            log.info("warm-up stopped: %s", exc)

    async def aclose(self) -> None:
        if self._sandbox is not None and (closer := getattr(self._sandbox, "aclose", None)) is not None:
            try:
                await closer()
            except Exception:
                log.exception("shutdown: the sandbox failed to close")
        async with self._memory_lock:
            if self._memory is not None:
                await self._memory.aclose()
        if "cortex_lsp.memory.chroma" in sys.modules:  # the vector process, if one was started
            from cortex_lsp.memory.chroma import close_vector_process

            await asyncio.to_thread(close_vector_process)
        await self.models.aclose()
