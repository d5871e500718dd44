"""Modules from the open folder, served by name to the imports of one run (worker side).

The server finds the folder modules a snippet imports, reads them through the path guards and sends
their text with the snippet (:mod:`.folder_modules`); the worker never opens them. Here, before the
audit hook is armed, :func:`compile_folder_modules` checks that data again (names, count, sizes) and
compiles every module with the snippet's own policy (:func:`.policy.compile_module`): its code is as
untrusted as the snippet's. :class:`FolderLoader` then serves them to ``import``:

- a module runs at most once per run, in a fresh module object that only this loader holds (never in
  ``sys.modules``), with the snippet's guarded builtins and hooks in its ``__builtins__`` (so its
  namespace holds only what its own code binds) and an ``__import__`` bound to its package for
  relative imports; no ``__file__``, ``__spec__`` is ``None``, ``__loader__`` is ``None``;
- an import of a module being run returns it as it is so far (a module importing itself, or two
  importing each other, end like in Python); a module whose run raised is not run again;
- the allow-list wins: an allowed module's name, a standard module's name, a name of the sandbox's own
  packages or of anything already in the worker's ``sys.modules`` is never served from the folder.

The module objects are what the snippet holds (its writes are refused, like on any module); the
guards know them by identity (:meth:`FolderLoader.owns`) to let through their submodules and the
private names their own code bound.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import Any

from cortex_lsp.tools.sandbox.allowlist import RefusedImport
from cortex_lsp.tools.sandbox.policy import (
    MAX_FOLDER_BYTES,
    MAX_FOLDER_MODULES,
    MAX_MODULE_BYTES,
    ImportScope,
    compile_module,
    is_private_name,
    module_name_too_long,
    resolve_relative,
    shown_name,
    workspace_name_refusal,
)

#: The file name of a folder module's code objects: ``<folder>/src/db.py`` (tracebacks show the path).
FOLDER_FILENAME_PREFIX = "<folder>/"


@dataclass(frozen=True)
class FolderModule:
    """One module from the folder, compiled: ``code``, or why it can't be imported (``error``)."""

    name: str
    path: str
    is_package: bool
    filename: str
    source: str
    code: CodeType | None
    error: str | None = None
    refused: bool = False


def _entries(modules: object) -> list[tuple[str, str, str, bool]]:
    """The request's modules as (name, path, source, is_package); anything malformed is left out."""
    found: list[tuple[str, str, str, bool]] = []
    for item in modules if isinstance(modules, list) else []:
        if not isinstance(item, dict):
            continue
        name, path, source, package = (item.get(k) for k in ("name", "path", "source", "package"))
        if type(name) is str and type(path) is str and type(source) is str and type(package) is bool:
            found.append((name, path, source, package))
    return found


def compile_folder_modules(modules: object, unavailable: object
                           ) -> tuple[dict[str, FolderModule], dict[str, str]]:
    """Check and compile the folder modules a request carries (before the audit hook is armed).

    Returns the modules by name and the names the folder has but can't serve, with the reason."""
    refused: dict[str, str] = {}
    if isinstance(unavailable, dict):
        refused.update((k, v) for k, v in unavailable.items() if type(k) is str and type(v) is str)
    accepted: list[tuple[str, str, str, bool]] = []
    total = 0
    for name, path, source, package in _entries(modules):
        why = workspace_name_refusal(name)
        if why is None and name.partition(".")[0] in sys.modules:
            why = f"{name.partition('.')[0]} is a module the sandbox itself uses"
        size = len(source.encode("utf-8", "surrogatepass"))
        total += size
        if why is None and size > MAX_MODULE_BYTES:
            why = f"{path} is over {MAX_MODULE_BYTES} bytes"
        if why is None and (len(accepted) >= MAX_FOLDER_MODULES or total > MAX_FOLDER_BYTES):
            why = f"the snippet imports more than the sandbox reads from the folder ({MAX_FOLDER_MODULES} modules, " \
                  f"{MAX_FOLDER_BYTES} bytes)"
        if why is not None:
            refused[name] = why
            continue
        accepted.append((name, path, source, package))
    folder = frozenset(name.partition(".")[0] for name, *_rest in accepted)
    compiled: dict[str, FolderModule] = {}
    for name, path, source, package in accepted:
        filename = FOLDER_FILENAME_PREFIX + path
        scope = ImportScope(folder=folder, unavailable=refused,
                            package=name if package else name.rpartition(".")[0])
        result = compile_module(source, filename, scope)
        compiled[name] = FolderModule(name=name, path=path, is_package=package, filename=filename, source=source,
                                      code=result.code, error=result.error, refused=result.refused)
    return compiled, refused


class FolderLoader:
    """Serves one run's folder modules to its imports (see the module docstring)."""

    def __init__(self, modules: Mapping[str, FolderModule], unavailable: Mapping[str, str],
                 builtins_for: Callable[[str], dict[str, Any]]) -> None:
        self._entries = dict(modules)
        self._unavailable = dict(unavailable)
        self._tops = frozenset(name.partition(".")[0] for name in (*self._entries, *self._unavailable))
        self._builtins_for = builtins_for
        self._modules: dict[str, ModuleType] = {}
        self._made: list[ModuleType] = []
        self._failed: set[str] = set()

    # -- what the runner and the guards ask ---------------------------------------------------------
    def codes(self) -> list[CodeType]:
        """The code objects the audit hook may ``exec`` (each once)."""
        return [entry.code for entry in self._entries.values() if entry.code is not None]

    def sources(self) -> dict[str, tuple[str, str]]:
        """file name -> (path, source), for tracebacks."""
        return {entry.filename: (entry.path, entry.source) for entry in self._entries.values()}

    def serves(self, name: str) -> bool:
        return name.partition(".")[0] in self._tops

    def owns(self, obj: object) -> bool:
        return any(obj is module for module in self._made)

    def private_ok(self, obj: object, name: str) -> bool:
        """``_name`` on a folder module: only a name its own code bound (never a guard name)."""
        return self.owns(obj) and is_private_name(name) and name in vars(obj)

    def private_missing(self, obj: object, name: str) -> bool:
        """A ``_name`` the folder module's code could have bound but did not (``getattr``'s default applies)."""
        return self.owns(obj) and is_private_name(name) and name not in vars(obj)

    # -- imports ------------------------------------------------------------------------------------
    def import_relative(self, package: str, level: int, name: str, fromlist: tuple[str, ...]) -> ModuleType:
        absolute = resolve_relative(package, level, name)
        if absolute is None:
            raise RefusedImport(f"relative import beyond the top-level package {package.partition('.')[0]!r}")
        return self.import_(absolute, fromlist)

    def import_(self, name: str, fromlist: Iterable[str]) -> ModuleType:
        """``__import__(name, fromlist=...)`` for a name :meth:`serves`: the top-level module, or with a
        ``fromlist`` the named module (its submodules in the list imported too)."""
        if module_name_too_long(name):
            raise RefusedImport(f"{shown_name(name)} is too long a module name for the folder")
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            why = self._unavailable.get(".".join(parts[:i]))
            if why is not None:
                raise RefusedImport(f"{'.'.join(parts[:i])} from the folder can't be imported: {why}")
        module = self._load(parts[0])
        for i in range(2, len(parts) + 1):
            module = self._load(".".join(parts[: i]))
        names = tuple(fromlist)
        if not names:
            return self._modules[parts[0]]
        for item in names:
            if type(item) is not str or item == "*" or (item.startswith("_") and not is_private_name(item)):
                raise RefusedImport(f"'from {name} import {item}' is not allowed in the sandbox")
            if item in vars(module):
                continue
            why = self._unavailable.get(f"{name}.{item}")
            if why is not None:
                raise RefusedImport(f"{name}.{item} from the folder can't be imported: {why}")
            if f"{name}.{item}" in self._entries:
                self._load(f"{name}.{item}")
            if item not in vars(module):
                # Python's own ``from X import item`` would next look for sys.modules["X.item"] (by
                # the module's __name__): a folder module has nothing there to give, so say so here
                raise ImportError(f"cannot import name {item!r} from {name!r} (the folder's {name})")
        return module

    def _load(self, name: str) -> ModuleType:
        if name in self._modules:
            return self._modules[name]  # loaded, or being run (an import loop): as it is so far
        if name in self._failed:
            raise ImportError(f"{name} from the folder raised an error when it ran earlier in this run")
        entry = self._entries.get(name)
        if entry is None:
            raise ModuleNotFoundError(f"No module named {name!r} in the folder")
        if entry.code is None:
            message = f"{entry.path} ({name}) can't be imported: {entry.error}"
            raise RefusedImport(message) if entry.refused else ImportError(message)
        package = name if entry.is_package else name.rpartition(".")[0]
        module = ModuleType(name)
        module.__package__ = package
        namespace = vars(module)
        namespace["__builtins__"] = self._builtins_for(package)
        self._modules[name] = module
        self._made.append(module)
        try:
            exec(entry.code, namespace)
        except BaseException:
            del self._modules[name]
            self._failed.add(name)
            raise
        parent, _, child = name.rpartition(".")
        if parent in self._modules:
            setattr(self._modules[parent], child, module)
        return module
