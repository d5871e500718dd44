"""Guards that never read a module's globals at call time: one sealed copy of the guard modules per worker.

A Python function looks its helpers up in its module's namespace *when it runs*. If anything a snippet
reaches can write into a module namespace by name (a standard-library function that does
``setattr(sys.modules[name], attr, value)``: ``enum.global_enum`` was one), it could swap a helper the
guards call (``is_denied``, ``plain_str``, ``resolve_in_roots``, even ``isinstance``) and so change
what they allow. :func:`seal` closes that class: it is called once per worker, before any snippet, and
builds a private copy of the guard modules (:data:`GUARD_MODULES`) in which

- every module namespace is a snapshot (a ``dict`` nobody else holds), with a snapshot of the builtins;
- every function defined in those modules is re-created over that snapshot (same code, same defaults,
  closures kept, a ``__class__`` cell pointing at the copied class);
- every class with methods (exceptions excepted: they carry no logic and are compared by identity) is
  re-created with those functions, its bases mapped to their copies;
- every other module a guard module refers to (``os``, ``io``, ``builtins``...) is replaced by a
  read-only snapshot of its attributes (two levels: ``os.path.realpath`` is the function it was).

Names imported from one guard module into another point at the copies. Rebinding any attribute of the
real modules afterwards changes nothing the sealed guards do (the tests rebind every one). What this
does not reach: the standard library's own functions read *their* modules' globals (the snippet only
ever holds views of those modules, never the modules, and the audit hook and Landlock check paths
independently of the guards).
"""

from __future__ import annotations

import builtins
import importlib
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The modules whose code runs while a snippet runs (guards, open(), print, the runner), in import order.
GUARD_MODULES = (
    "RestrictedPython.Guards",
    "cortex_lsp.guards.paths",
    "cortex_lsp.tools.sandbox.allowlist",
    "cortex_lsp.tools.sandbox.enum_names",
    "cortex_lsp.tools.sandbox.folder_loader",
    "cortex_lsp.tools.sandbox.restricted",
)
_SKIPPED_CLASS_KEYS = frozenset({"__dict__", "__weakref__"})


class _Frozen(types.SimpleNamespace):
    """A read-only snapshot of a module's attributes."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a sealed module snapshot is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a sealed module snapshot is read-only")


@dataclass(frozen=True)
class SealedGuards:
    """The sealed copies: ``run_snippet`` (what the worker calls) and each module's namespace snapshot."""

    run_snippet: Callable[..., Any]
    namespaces: Mapping[str, Mapping[str, Any]]

    def get(self, module: str, name: str) -> Any:
        return self.namespaces[module][name]


class _Sealer:
    def __init__(self, modules: Sequence[types.ModuleType]) -> None:
        self.names = {m.__name__ for m in modules}
        self.builtins = dict(vars(builtins))
        self.snapshots: dict[str, dict[str, Any]] = {}
        for module in modules:
            snapshot = dict(vars(module))
            snapshot["__builtins__"] = self.builtins
            self.snapshots[module.__name__] = snapshot
        self.copies: dict[int, Any] = {}  # id(original) -> copy (originals stay alive in the real modules)
        self.frozen: dict[int, _Frozen] = {}

    # -- module snapshots ---------------------------------------------------------------------------
    def freeze(self, module: types.ModuleType, depth: int = 2) -> _Frozen:
        if id(module) in self.frozen:
            return self.frozen[id(module)]
        attrs = dict(vars(module))
        frozen = _Frozen()
        self.frozen[id(module)] = frozen
        if depth > 1:
            for key, value in attrs.items():
                if isinstance(value, types.ModuleType) and value.__name__ not in self.names:
                    attrs[key] = self.freeze(value, depth - 1)
        object.__getattribute__(frozen, "__dict__").update(attrs)
        return frozen

    # -- functions and classes ----------------------------------------------------------------------
    def _defined_here(self, value: object) -> bool:
        return getattr(value, "__module__", None) in self.names

    def function(self, func: types.FunctionType, cls_cell: types.CellType | None = None) -> types.FunctionType:
        if id(func) in self.copies:
            return self.copies[id(func)]  # type: ignore[no-any-return]
        closure = func.__closure__
        if closure is not None and cls_cell is not None and "__class__" in func.__code__.co_freevars:
            cells = list(closure)
            cells[func.__code__.co_freevars.index("__class__")] = cls_cell
            closure = tuple(cells)
        copy = types.FunctionType(func.__code__, self.snapshots[func.__module__], func.__name__,
                                  self.mapped(func.__defaults__), closure)
        copy.__kwdefaults__ = self.mapped(func.__kwdefaults__)
        copy.__qualname__ = func.__qualname__
        copy.__doc__ = func.__doc__
        copy.__annotations__ = func.__annotations__
        copy.__dict__.update(func.__dict__)
        self.copies[id(func)] = copy
        return copy

    def member(self, value: Any, cell: types.CellType) -> Any:
        if isinstance(value, types.FunctionType) and self._defined_here(value):
            return self.function(value, cell)
        if isinstance(value, staticmethod | classmethod) and isinstance(value.__func__, types.FunctionType):
            return type(value)(self.member(value.__func__, cell))
        if isinstance(value, property):
            fget, fset, fdel = (self.member(f, cell) if f is not None else None
                                for f in (value.fget, value.fset, value.fdel))
            return property(fget, fset, fdel, value.__doc__)
        return value

    def klass(self, cls: type) -> type:
        if id(cls) in self.copies:
            return self.copies[id(cls)]  # type: ignore[no-any-return]
        if issubclass(cls, BaseException) or not any(
            isinstance(v, types.FunctionType | staticmethod | classmethod | property) for v in vars(cls).values()
        ):
            return cls
        bases = tuple(self.klass(b) if self._defined_here(b) else b for b in cls.__bases__)
        slots = set(vars(cls).get("__slots__", ()))
        cell = types.CellType()
        body = {k: self.member(v, cell) for k, v in vars(cls).items()
                if k not in _SKIPPED_CLASS_KEYS and k not in slots}
        metaclass: Any = type(cls)
        copy: type = metaclass(cls.__name__, bases, body)
        cell.cell_contents = copy
        self.copies[id(cls)] = copy
        return copy

    def mapped(self, value: Any) -> Any:
        """``value`` with every function/class of the guard modules replaced by its copy."""
        if isinstance(value, tuple):
            return tuple(self.mapped(v) for v in value)
        if isinstance(value, dict):
            return {k: self.mapped(v) for k, v in value.items()}
        if isinstance(value, types.FunctionType) and self._defined_here(value):
            return self.function(value)
        if isinstance(value, type) and self._defined_here(value):
            return self.klass(value)
        return value

    def seal(self) -> dict[str, dict[str, Any]]:
        for snapshot in self.snapshots.values():
            for key, value in list(snapshot.items()):
                if key == "__builtins__":
                    continue
                if isinstance(value, types.ModuleType):
                    if value.__name__ not in self.names:
                        snapshot[key] = self.freeze(value)
                    continue
                if isinstance(value, types.FunctionType | type):
                    snapshot[key] = self.mapped(value)
        return self.snapshots


def seal(module_names: Sequence[str] = GUARD_MODULES) -> SealedGuards:
    """Build the sealed copy of ``module_names`` (call once per worker, before any snippet)."""
    modules = [importlib.import_module(name) for name in module_names]
    namespaces = _Sealer(modules).seal()
    frozen = {name: types.MappingProxyType(ns) for name, ns in namespaces.items()}
    return SealedGuards(run_snippet=namespaces["cortex_lsp.tools.sandbox.restricted"]["run_snippet"],
                        namespaces=frozen)
