"""Tool plugins: loaded only from the user's plugin folder (``plugins_dir``), never from a project.

A plugin is a ``.py`` file whose :class:`~cortex_lsp.tools.base.BaseTool` subclasses are registered.
Plugins run unsandboxed in the server process, so the folder must be one the user chose in their own
settings (a folder's ``cortex.yaml`` can't set it): it must be an absolute path, and it is refused when
it lies inside an opened workspace root (or a root lies inside it) — opening a repository must never
run its code. A plugin that fails to import, or whose tool can't be built, is skipped with a message.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cortex_lsp.guards.workspace_files import check_regular_file
from cortex_lsp.tools.base import BaseTool

MAX_PLUGIN_BYTES = 1024 * 1024  # a plugin is a small module; a FIFO or a huge file is not imported
log = logging.getLogger("cortex.plugins")


@dataclass
class PluginLoad:
    tools: list[BaseTool] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def plugin_dir_problem(folder: Path, roots: Sequence[Path]) -> str | None:
    """Why ``folder`` may not be used as the plugin folder, or ``None``."""
    expanded = folder.expanduser()
    if not expanded.is_absolute():
        return (
            f"plugins_dir {str(folder)!r} is a relative path; it would be read from whatever folder "
            "the server starts in. Use an absolute path in your user settings."
        )
    real = expanded.resolve()
    for root in roots:
        if _overlaps(real, root.expanduser().resolve()):
            return (
                f"plugins_dir {str(real)!r} overlaps the opened folder {str(root)!r}; plugins are never "
                "loaded from a project. Move them to a folder of your own."
            )
    if not real.is_dir():
        return f"plugins_dir {str(real)!r} is not a folder."
    return None


def load_plugins(
    folder: Path | None, *, roots: Sequence[Path] = (), reserved: Sequence[str] = ()
) -> PluginLoad:
    """Import every ``*.py`` in ``folder`` and instantiate its tool classes (no-argument constructors)."""
    out = PluginLoad()
    if folder is None:
        return out
    problem = plugin_dir_problem(folder, roots)
    if problem:
        out.messages.append(problem)
        return out
    real = folder.expanduser().resolve()
    names = set(reserved)
    for path in sorted(real.glob("*.py")):
        if path.name.startswith((".", "_")):
            continue
        module_name = f"cortex_user_plugin_{path.stem}"
        try:
            check_regular_file(path, max_bytes=MAX_PLUGIN_BYTES, follow_symlinks=True)
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise ImportError("no loader")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            out.messages.append(f"Plugin {path.name} failed to load: {exc.__class__.__name__}: {exc}")
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, BaseTool) or cls is BaseTool or inspect.isabstract(cls):
                continue
            if cls.__module__ != module_name:
                continue  # imported from elsewhere, not defined here
            try:
                tool = cls()
            except Exception as exc:
                out.messages.append(f"Plugin tool {cls.__name__} in {path.name} could not be created: {exc}")
                continue
            name = getattr(tool, "name", "")
            if not isinstance(name, str) or not name:
                out.messages.append(f"Plugin tool {cls.__name__} in {path.name} has no name; skipped.")
                continue
            if name in names:
                out.messages.append(
                    f"Plugin tool {name!r} in {path.name} clashes with another tool; skipped."
                )
                continue
            names.add(name)
            out.tools.append(tool)
    for message in out.messages:
        log.warning("%s", message)
    return out
