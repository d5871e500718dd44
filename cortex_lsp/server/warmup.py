"""Warm start without a slow start: after ``initialized``, get ready for the first ask in the background.

The first ask used to pay for everything the second one finds ready: importing the agent (kernel, tools,
jsonschema, guards), opening the memory store (SQLite, and importing and opening Chroma: seconds on a
busy machine) and the model client's first connection. :func:`start` schedules that work as one
background task the moment the editor says ``initialized``, so ``initialize`` is never delayed, and
every blocking part runs in a worker thread (imports too), so the event loop keeps answering code
actions while it happens. A failure here costs nothing: the step is skipped and the first ask does it
itself, as it would have without a warm-up (and shows the error then, where the user is looking).

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_lsp.server.app import CortexServer

log = logging.getLogger("cortex.warmup")

SERVICE = "warmup"

#: what the first command imports (its argument models, the agent kernel and its dependencies, tools, memory
#: store, Chroma); none of it is imported before ``initialize`` is answered (tests/server/test_server_startup.py)
MODULES: tuple[str, ...] = (
    "cortex_lsp.config",
    "cortex_lsp.server.arguments",
    "cortex_lsp.models.factory",
    "cortex_lsp.agent.kernel",
    "cortex_lsp.agent.deps",
    "cortex_lsp.server.services",
    "cortex_lsp.tools.builtin",
    "cortex_lsp.tools.python_exec",
    "cortex_lsp.tools.web_fetch",
    "cortex_lsp.tools.doc_search",
    "cortex_lsp.memory.store",
    "chromadb",
)


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


async def warm(ls: CortexServer, modules: Sequence[str] = MODULES, *, freeze: bool = True) -> WarmupReport:
    """Import the agent, connect to the model, open the memory store; never raises."""
    report = WarmupReport()
    started = time.perf_counter()

    # A first command that arrives meanwhile waits at ls.model()/ls.memory() instead of importing the same
    # modules on the loop thread at the same time (concurrent imports of a package with import cycles can
    # hand one thread a partially initialised module: a spurious ImportError, e.g. "llama_cpp not installed").
    # memory, then model: the order ls.memory() takes them in (it opens the store, then asks for the model)
    async with ls._memory_lock, ls._model_lock:
        missing = await asyncio.to_thread(_import_all, modules)
    if missing:
        report.failed["imports"] = ", ".join(missing)
    else:
        report.done.append("imports")
    # the request classifier needs no model: its session and route weights load while the model starts
    meaning = asyncio.ensure_future(_warm_meaning(ls)) if ls.settings.model_profile != "full" else None

    model = None
    try:
        model = await ls.model()
        report.done.append("model client")
    except Exception as exc:  # e.g. no model server yet: the first ask says so
        report.failed["model client"] = str(exc) or exc.__class__.__name__
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
            await asyncio.to_thread(services.tool_registry, ls, memory)
            report.done.append("tools")
        except Exception as exc:
            report.failed["memory"] = str(exc) or exc.__class__.__name__
    if meaning is not None:
        try:
            await meaning
            report.done.append("meaning")
        except Exception as exc:
            report.failed["meaning"] = str(exc) or exc.__class__.__name__

    if freeze:  # no gc.collect() first: a full collection here would stall the loop for tens of ms
        gc.freeze()
    report.seconds = time.perf_counter() - started
    log.info("warm-up done in %.2f s: %s%s", report.seconds, ", ".join(report.done) or "nothing",
             "".join(f"; {k} skipped ({v})" for k, v in report.failed.items()))
    return report


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
