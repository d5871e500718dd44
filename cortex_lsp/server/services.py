"""Long-lived services the commands share (tool registry, sandbox pool), created on first use."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError

from cortex_lsp.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from cortex_lsp.agent.meaning import MeaningClassifier
    from cortex_lsp.server.app import CortexServer
    from cortex_lsp.tools.sandbox.pool import SandboxResult

log = logging.getLogger("cortex.services")


def sandbox_pool(ls: CortexServer) -> Any | None:
    pool = ls.service("sandbox")
    if pool is None:
        try:
            from cortex_lsp.tools.sandbox import SandboxPool
        except ImportError:
            return None
        pool = SandboxPool(ls.settings)
        ls.set_service("sandbox", pool)
    return pool


@dataclasses.dataclass(frozen=True)
class _MeaningSlot:
    """The one classifier of this server (``None`` when the packaged embedder is not installed)."""

    classifier: MeaningClassifier | None


def meaning_classifier(ls: CortexServer) -> MeaningClassifier | None:
    """The request classifier of a small model's router, created on first use (nothing is loaded yet)."""
    slot = ls.service("meaning")
    if slot is None:
        from cortex_lsp.agent.meaning import default_cache_dir, packaged_classifier

        slot = _MeaningSlot(packaged_classifier(default_cache_dir()))
        ls.set_service("meaning", slot)
    return slot.classifier  # type: ignore[no-any-return]


def _registry_key(ls: CortexServer, memory: object | None) -> tuple[object, ...]:
    return ("registry", id(ls.settings), tuple(ls.roots), id(memory))


async def tool_registry_off_loop(ls: CortexServer, memory: object | None = None) -> ToolRegistry:
    """:func:`tool_registry`, built in a worker thread when it is not built yet (building it imports the
    tools and checks their schemas: tens of ms)."""
    key = _registry_key(ls, memory)
    cached = ls.service("registry")
    if cached is not None and cached[0] == key:
        return cached[1]  # type: ignore[no-any-return]
    building = ls.service("registry_building")  # the warm-up and a first ask build it once, not twice
    if building is None or building[0] != key:
        building = (key, asyncio.ensure_future(asyncio.to_thread(tool_registry, ls, memory)))
        ls.set_service("registry_building", building)
    return await asyncio.shield(building[1])  # type: ignore[no-any-return]


def tool_registry(ls: CortexServer, memory: object | None = None) -> ToolRegistry:
    key = _registry_key(ls, memory)
    cached = ls.service("registry")
    if cached is not None and cached[0] == key:
        return cached[1]  # type: ignore[no-any-return]
    try:
        from cortex_lsp.tools.builtin import build_registry
    except ImportError:
        registry = ToolRegistry()
    else:
        doc_index = getattr(memory, "doc_index", None)
        from cortex_lsp.server.watching import doc_changes

        registry = build_registry(ls.settings, sandbox=sandbox_pool(ls), roots=ls.roots,
                                  docs=(lambda: doc_index) if doc_index is not None else None,
                                  doc_changes=doc_changes(ls))
    ls.set_service("registry", (key, registry))
    return registry


@dataclasses.dataclass(frozen=True)
class CodeRunReport:
    """What ``cortex.run`` (and ACP's ``/run``) did with the code: ``sandbox`` is the sandbox's result, or
    ``None`` when the code never reached it (too long, or code that can't run here: ``reason`` says why).
    ``ran`` is false when the code did not run (never handed over, or refused by the sandbox);
    ``warning`` names a missing OS boundary; ``summary`` says in one line what ran. The language server's
    JSON for it is ``server/wire.py: run_payload``."""

    ran: bool
    reason: str | None
    sandbox: SandboxResult | None = None
    warning: str | None = None
    summary: str = ""

    @property
    def stdout(self) -> str:
        return self.sandbox.stdout if self.sandbox is not None else ""

    @property
    def stderr(self) -> str:
        return self.sandbox.stderr if self.sandbox is not None else ""

    @property
    def value(self) -> str | None:
        return self.sandbox.value if self.sandbox is not None else None

    @property
    def error(self) -> str | None:
        return self.sandbox.error if self.sandbox is not None else None

    @property
    def duration_ms(self) -> float:
        return self.sandbox.duration_ms if self.sandbox is not None else 0.0


async def run_code(
    ls: CortexServer, code: str, *, source: str | None = None, lines: tuple[int, int] | None = None
) -> CodeRunReport:
    """``cortex.run``: the size limit (before anything reads the code), the block's definitions from its
    file (``source``, ``lines``: tools/block_definitions.py), the runnability check (no model call), then
    the sandbox; every parse runs off the event loop. Without OS isolation the result carries a
    ``warning``, and the session's first such run also shows it as a message (no silent downgrade).
    ``summary`` says in one line what ran (tools/run_summary.py)."""
    report = await _run_code(ls, code, source=source, lines=lines)
    from cortex_lsp.tools.run_summary import summarize

    summary = await asyncio.to_thread(
        summarize, code, ran=report.ran, stdout=report.stdout, stderr=report.stderr, value=report.value,
        error=report.error, duration_ms=report.duration_ms, reason=report.reason)
    return dataclasses.replace(report, summary=summary)


async def _run_code(
    ls: CortexServer, code: str, *, source: str | None = None, lines: tuple[int, int] | None = None
) -> CodeRunReport:
    from cortex_lsp.tools.sandbox.pool import MAX_CODE_CHARS, too_long_message

    if len(code) > MAX_CODE_CHARS:
        return CodeRunReport(ran=False, reason=too_long_message())
    notes: list[str] = []
    if source is not None and lines is not None and source != code:
        if len(source) > MAX_CODE_CHARS:  # never parse a huge file for the definitions of a small block
            notes.append("The file is too large to gather the definitions the block uses: only the block ran.")
        else:
            from cortex_lsp.tools.block_definitions import with_definitions

            code = (await asyncio.to_thread(with_definitions, source, lines[0], lines[1], code)).code
            if len(code) > MAX_CODE_CHARS:
                return CodeRunReport(ran=False, reason=too_long_message())
    try:
        from cortex_lsp.agent.runnability import cannot_run_reply
    except ImportError:
        cannot_run_reply = None  # type: ignore[assignment]
    if cannot_run_reply is not None:
        reason = await asyncio.to_thread(cannot_run_reply, code, list(ls.roots))
        if reason:
            return CodeRunReport(ran=False, reason=reason)
    pool = sandbox_pool(ls)
    if pool is None:
        raise JsonRpcInternalError("cortex.run is not available yet: the Python sandbox is not installed.")
    result = await pool.run(code, roots=ls.roots)
    result.notes[:0] = notes
    plan = await pool.isolation()
    if plan.warning and not ls.service("sandbox_warned"):
        ls.set_service("sandbox_warned", True)
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                       message=f"Cortex: Run this: {plan.warning}"))
    return CodeRunReport(ran=not result.refused, reason=result.error if result.refused else None, sandbox=result,
                         warning=plan.warning)
