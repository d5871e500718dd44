"""Warm start without a slow start: after ``initialized``, get ready for the first ask in the background.

The first ask used to pay for everything the second one finds ready: importing the agent (kernel, tools,
jsonschema, guards), opening the memory store and the model client's first connection. Two background
steps take that off it, and off the event loop:

* :func:`start_imports`, the first thing ``initialized`` does: one worker thread imports the settings
  module and then everything a first command needs (:data:`MODULES`). Nothing imports those packages on
  the loop thread meanwhile: the settings load, the commands, ``ls.model()`` and ``ls.memory()`` wait for
  it (``CortexServer.modules_ready``). Two threads importing the same packages at once is a hazard of its
  own (a package with import cycles can hand one of them a partially initialised module: a spurious
  ImportError, e.g. "llama_cpp not installed").
* :func:`start` (after the settings are loaded): the model client and its connection, the memory store
  (its turn log; the vector store comes up in a process of its own, :mod:`cortex_lsp.memory.vector_process`),
  the tool registry, and the request classifier when the model may be a small one. A first ask that
  arrives meanwhile does whichever of these it needs itself (each is made once, under its lock), every
  blocking part in a worker thread.

A failure here costs nothing: the step is skipped and the first ask does it itself, as it would have
without a warm-up (and shows the error then, where the user is looking).

When it is done, :func:`gc.freeze` moves everything still alive (modules, settings, the store) out
of the collector's generations, so later collections (during a run) no longer traverse it.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.warmup")

SERVICE = "warmup"
SETTINGS_MODULE = "cortex_lsp.config"

#: what the first command imports (its argument models, the model client, the agent kernel and its
#: dependencies, tools, memory store), in the order a first ask needs them; none of it is imported
#: before ``initialize`` is answered (tests/server/test_server_startup.py). Chroma is not among them: it
#: runs in the vector process.
MODULES: tuple[str, ...] = (
    "cortex_lsp.server.arguments",
    "cortex_lsp.models.factory",
    "concurrent.futures.thread",  # what the first asyncio.to_thread would otherwise import on the loop
    "cortex_lsp.agent.kernel",
    "cortex_lsp.agent.deps",
    "cortex_lsp.server.services",
    "cortex_lsp.memory.store",
    "cortex_lsp.tools.builtin",
    "cortex_lsp.tools.python_exec",
    "cortex_lsp.tools.web_fetch",
    "cortex_lsp.tools.doc_search",
    "cortex_lsp.tools.sandbox.pool",
    "platformdirs",
)
#: imported after those, waited for by nobody: a first ask does not need them (numpy: vector searches)
LATER_MODULES: tuple[str, ...] = ("numpy",)


@dataclass
class Imports:
    """The background import: ``settings`` resolves once the settings module is in, ``commands`` (the names
    that could not be imported) once what a first command needs is, ``done`` once everything is."""

    settings: asyncio.Future[None]
    commands: asyncio.Future[list[str]]
    done: asyncio.Future[None]


@dataclass
class WarmupReport:
    """What the warm-up did: the steps that finished, those that failed (and why), and how long it took."""

    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def _import_all(names: Sequence[str]) -> list[str]:
    """Import ``names`` (in a worker thread); returns the ones that could not be imported."""
    missing: list[str] = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # an optional extra not installed: the first ask reports it, not us
            missing.append(name)
    return missing


def start_imports(ls: CortexServer, modules: Sequence[str] = MODULES) -> Imports:
    """Import the settings module, then ``modules``, in one worker thread (kept on the server)."""
    loop = asyncio.get_running_loop()
    settings: asyncio.Future[None] = loop.create_future()
    commands: asyncio.Future[list[str]] = loop.create_future()

    def settle(future: asyncio.Future[Any], value: Any) -> None:
        if not future.done():
            future.set_result(value)

    def work() -> None:
        missing: list[str] = []
        try:
            missing += _import_all([SETTINGS_MODULE])
            loop.call_soon_threadsafe(settle, settings, None)
            missing += _import_all(modules)
        finally:  # (a failure to import is in ``missing``; this is for anything worse)
            loop.call_soon_threadsafe(settle, settings, None)
            loop.call_soon_threadsafe(settle, commands, missing)
        _import_all(LATER_MODULES)

    imports = Imports(settings, commands, asyncio.ensure_future(asyncio.to_thread(work)))
    ls.imports = imports
    return imports


async def warm(ls: CortexServer, modules: Sequence[str] = MODULES, *, freeze: bool = True) -> WarmupReport:
    """Import the agent, connect to the model, open the memory store; never raises."""
    report = WarmupReport()
    started = time.perf_counter()
    imports = ls.imports if ls.imports is not None else start_imports(ls, modules)
    missing = await imports.commands
    if missing:
        report.failed["imports"] = ", ".join(missing)
    else:
        report.done.append("imports")

    model = None
    meaning = None
    try:
        model = await ls.model()
        report.done.append("model client")
    except Exception as exc:  # e.g. no model server yet: the first ask says so
        report.failed["model client"] = str(exc) or exc.__class__.__name__
    if _may_be_small(ls, model):
        # the request classifier needs no model: its session and route weights load while the model starts
        meaning = asyncio.ensure_future(_warm_meaning(ls))
    if model is not None:
        try:
            await model.version()  # opens the connection the first request will reuse
            report.done.append("model connection")
        except Exception as exc:
            report.failed["model connection"] = str(exc) or exc.__class__.__name__
        # Only with a model: without one the store would fall back to in-process memory for good.
        try:
            memory = await ls.memory()
            report.done.append("memory")
            from cortex_lsp.server import services

            # builds the tools and checks their schemas (~50 ms): nothing in it touches the loop
            await services.tool_registry_off_loop(ls, memory)
            report.done.append("tools")
            # last: the vector process imports Chroma (seconds of CPU), which a first ask does not need
            start_vectors = getattr(memory, "start_vectors", None)
            if start_vectors is not None:
                start_vectors()
                report.done.append("vector store started")
        except Exception as exc:
            report.failed["memory"] = str(exc) or exc.__class__.__name__
    if meaning is not None:
        try:
            await meaning
            report.done.append("meaning")
        except Exception as exc:
            report.failed["meaning"] = str(exc) or exc.__class__.__name__

    try:  # last, off the loop: the word-math patterns a first ask with numbers would otherwise compile
        from cortex_lsp.agent.lazy_re import compile_all

        await asyncio.to_thread(compile_all)
        report.done.append("patterns")
    except Exception as exc:
        report.failed["patterns"] = str(exc) or exc.__class__.__name__

    if freeze:  # no gc.collect() first: a full collection here would stall the loop for tens of ms
        gc.freeze()
    report.seconds = time.perf_counter() - started
    log.info("warm-up done in %.2f s: %s%s", report.seconds, ", ".join(report.done) or "nothing",
             "".join(f"; {k} skipped ({v})" for k, v in report.failed.items()))
    return report


def _may_be_small(ls: CortexServer, model: object | None) -> bool:
    """Whether the model in use may get the small profile (whose router reads the request classifier):
    not when the setting, or the model's name, says it is full-sized."""
    from cortex_lsp.agent.profile import known_profile

    info = ls.backend_info  # as the run will read them (runtime/runner.py, agent/kernel.py)
    backend = str(getattr(info, "backend", None) or getattr(model, "backend", "") or "")
    name = getattr(info, "chat_model", None) or ls.settings.ollama_model
    known = known_profile(ls.settings, backend=backend, name=name)
    return known is None or known.small


async def _warm_meaning(ls: CortexServer) -> None:
    from cortex_lsp.server import services

    classifier = services.meaning_classifier(ls)
    if classifier is not None:
        await classifier.warm()
        for root in list(ls.roots)[:1]:  # the folder routing reads: its documents' sections, embedded
            await asyncio.to_thread(classifier.prepare_project, root)


def start(ls: CortexServer) -> asyncio.Task[WarmupReport]:
    """Schedule :func:`warm` in the background (the task is kept on the server until it finishes)."""
    task = asyncio.get_running_loop().create_task(warm(ls), name="cortex-warmup")
    ls.set_service(SERVICE, task)
    return task
