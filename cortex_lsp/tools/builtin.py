"""Build the tool registry: every built-in tool that is available, plus the user's plugins.

Tools owned by other modules (``python_exec`` needs a sandbox pool, ``doc_search`` a document index,
``web_fetch``) are imported defensively, so the registry still builds when one is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from cortex_lsp.config import Settings
from cortex_lsp.tools.base import BaseTool
from cortex_lsp.tools.calculator import CalculatorTool
from cortex_lsp.tools.clock import CurrentTimeTool
from cortex_lsp.tools.filesystem import ListDirTool, ReadFileTool, SearchFilesTool, WriteFileTool
from cortex_lsp.tools.plugins import load_plugins
from cortex_lsp.tools.registry import ToolRegistry

log = logging.getLogger("cortex.tools")


def _optional_tools(
    settings: Settings, sandbox: Any | None, include_web: bool, docs: Any | None, doc_changes: Any | None = None
) -> list[BaseTool]:
    tools: list[BaseTool] = []
    if sandbox is not None:
        try:
            from cortex_lsp.tools.python_exec import PythonExecTool
        except ImportError as exc:
            log.warning("python_exec unavailable: %s", exc)
        else:
            tools.append(PythonExecTool(sandbox))
    if include_web and settings.web_fetch_enabled:
        try:
            from cortex_lsp.tools.web_fetch import WebFetchTool
        except ImportError as exc:
            log.warning("web_fetch unavailable: %s", exc)
        else:
            tools.append(WebFetchTool())
    if docs is not None:
        try:
            from cortex_lsp.tools.doc_search import DocSearchTool
        except ImportError as exc:
            log.warning("doc_search unavailable: %s", exc)
        else:
            tools.append(DocSearchTool(docs, doc_changes))
    return tools


def build_registry(
    settings: Settings,
    *,
    sandbox: Any | None = None,
    include_web: bool = True,
    extra: Iterable[BaseTool] = (),
    roots: Sequence[Path] = (),
    docs: Any | Callable[[], Any] | None = None,
    doc_changes: Any | None = None,
) -> ToolRegistry:
    """A registry of every available tool.

    ``sandbox``: a ``SandboxPool`` (adds ``python_exec``); ``docs``: a ``DocIndex`` or a callable returning
    one (adds ``doc_search``); ``doc_changes``: the editor's file changes for it (a ``DocChanges``);
    ``roots``: the open folders (a plugin folder inside one is refused).
    """
    registry = ToolRegistry(
        [
            ReadFileTool(),
            ListDirTool(),
            SearchFilesTool(),
            WriteFileTool(),
            CalculatorTool(),
            CurrentTimeTool(),
        ]
    )
    for tool in [*_optional_tools(settings, sandbox, include_web, docs, doc_changes), *extra]:
        if registry.get(tool.name) is None:
            registry.register(tool)
    plugins = load_plugins(settings.plugins_dir, roots=roots, reserved=registry.names())
    for tool in plugins.tools:
        try:
            registry.register(tool)
        except Exception as exc:
            log.warning("plugin tool %r skipped: %s", getattr(tool, "name", "?"), exc)
    return registry
