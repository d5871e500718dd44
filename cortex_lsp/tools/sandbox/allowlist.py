"""What sandboxed code may reach, and why: the module and builtin tables, and the run-time guards.

Runs inside the sandbox worker. This is the first layer (the audit hook in :mod:`.audit` and the OS
layer in :mod:`.seccomp` / :mod:`.isolation` assume it will be bypassed again). It closes classes of
escape rather than single payloads:

- **Modules are views.** ``import json`` gives a fresh module object holding only the public names of
  the real module, with the entries of :data:`REMOVED` taken out, the entries of the substitutes put in,
  metaclasses taken out, and submodules replaced by their own view (or dropped when not allowed). The
  real module (its ``__dict__``, its ``__loader__``, ``sys`` behind it) is never handed out.
- **Private attributes** (``_x``) are refused on everything, except on instances and classes the
  snippet itself built (tracked by identity in :class:`SandboxClasses`, not by ``__module__``, which
  can be forged) and only when no class the snippet did *not* write defines that name (so a subclass
  of a library class can't reach the library's internals, e.g. ``ForwardRef._evaluate``).
- **No class building outside ``class`` statements:** ``type()`` takes one argument and never returns a
  metaclass; metaclasses are not in any module view; ``class X(metaclass=...)`` is refused.
- **No attribute access by a name the caller chooses** outside the guards: ``operator.attrgetter`` /
  ``methodcaller`` are removed; ``functools.wraps``/``update_wrapper`` copy only a fixed list of
  names onto a function the snippet wrote; ``str.format``/``format_map`` (also through ``super()``)
  look fields up through :meth:`Guards.getattr`.
- **Nothing that evaluates strings:** ``typing.get_type_hints``, ``typing.ForwardRef`` and
  ``dataclasses.make_dataclass`` are removed; ``string.Formatter`` and ``collections.UserString`` (its
  ``format`` is the real ``str.format``) are removed.
- **Nothing the snippet can copy, deepcopy or walk leads to a real callable:** every guard the snippet
  holds (the guarded builtins, RestrictedPython's hooks, the substitutes in module views) is a plain
  function whose state sits in its closure (:func:`_closure`): ``copy``/``deepcopy`` treat functions as
  atoms and ``__closure__`` is a dunder. ``copy.deepcopy`` takes no ``memo`` (a memo would see every
  object the copy walks), ``copy.dispatch_table`` is removed (it lets code pick any type's reduce, whose
  state ``copy`` then sets with an unguarded ``setattr``).
- **Class building is checked on every path:** ``Enum('E', names)`` checks its member names like a class
  body (:func:`.enum_names.install_enum_check`), ``functools.total_ordering`` and the ``dataclasses`` helpers work on
  the snippet's own classes only.
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]
import abc
import builtins
import collections
import copy
import dataclasses
import functools
import importlib
import keyword
import operator
import string
import sys
import types
import typing
import uuid
import weakref
from collections.abc import Callable, Iterable, Sequence
from types import FunctionType, ModuleType
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from cortex_lsp.tools.sandbox.policy import ALLOWED_MODULES, SANDBOX_FILENAME, SUPER_DUNDERS

#: Names removed from a module's view, with the reason (the "what is allowed and why" table's
#: other half: every module in ``ALLOWED_MODULES`` is offered minus these).
REMOVED: dict[str, dict[str, str]] = {
    "operator": {
        "attrgetter": "fetches attributes by a name the caller chooses (bypasses the attribute guard)",
        "methodcaller": "calls methods by a name the caller chooses (bypasses the attribute guard)",
    },
    "typing": {
        "get_origin": "returns the class behind a generic alias (the real metaclass type for typing.Type)",
        "get_args": "returns the classes inside a generic alias (the real metaclass type in Type[type])",
        "get_type_hints": "evaluates annotation strings with eval()",
        "ForwardRef": "evaluates its string with eval()",
        "get_overloads": "returns functions registered by any module (a process-wide registry)",
        "clear_overloads": "empties a process-wide registry",
        "no_type_check": "sets an attribute on whatever it is given, library functions included",
        "no_type_check_decorator": "sets an attribute on whatever it is given, library functions included",
    },
    "copy": {"dispatch_table": "copyreg's table: lets the code pick the reduce function of any type, whose "
                               "state copy's _reconstruct then sets with an unguarded setattr"},
    "functools": {
        "singledispatch": "resolves annotation strings (get_type_hints)",
        "singledispatchmethod": "resolves annotation strings (get_type_hints)",
    },
    "string": {"Formatter": "its field lookup walks attributes unguarded"},
    "collections": {"UserString": "its format and format_map call the real str.format, whose field lookup "
                                  "walks attributes unguarded"},
    "uuid": {"getnode": "may run system commands", "uuid1": "calls getnode()"},
    "dataclasses": {"make_dataclass": "builds a class from a namespace of any names, dunders included",
                    "FunctionType": "builds a function from a code object and any globals"},
    "abc": {"update_abstractmethods": "sets a dunder attribute on any class"},
    "enum": {"global_enum": "writes the members into the globals of whatever module the enum names "
                            "(sys.modules[cls.__module__].__dict__): the guards' own module included"},
    "calendar": {"main": "reads the command line and imports argparse"},
    "base64": {"main": "reads files named on the command line", "test": "reads the command line"},
}
#: The module name of the snippet's own code (its classes' ``__module__``).
SANDBOX_MODULE_NAME = "__main__"
#: Module views never hold these (whatever module they come from).
REMOVED_EVERYWHERE = {"main": "command-line entry points read argv and files"}

#: Why each allowed module is allowed (checked against ``ALLOWED_MODULES`` by the tests).
MODULE_REASONS: dict[str, str] = {
    "math": "pure arithmetic", "cmath": "pure complex arithmetic", "statistics": "pure arithmetic on lists",
    "random": "pseudo-random numbers (os.urandom for the seed only)", "decimal": "pure arithmetic",
    "fractions": "pure arithmetic", "numbers": "abstract number classes", "json": "text <-> data, no I/O",
    "datetime": "date arithmetic", "time": "clock reads and sleep (bounded by the time limit)",
    "_strptime": "loaded by datetime.strptime; no I/O",
    "itertools": "iteration helpers",
    "functools": "reduce, partial, lru_cache (wraps is replaced; total_ordering only on the snippet's "
                 "classes)",
    "operator": "operators as functions (attrgetter/methodcaller removed)", "re": "regular expressions",
    "string": "string constants, Template, capwords (Formatter removed)", "textwrap": "text layout",
    "collections": "containers (namedtuple builds its class from a fixed template)",
    "collections.abc": "abstract container classes", "heapq": "heap algorithms", "bisect": "binary search",
    "calendar": "calendar arithmetic and text", "uuid": "uuid4/uuid3/uuid5 (getnode/uuid1 removed)",
    "hashlib": "hash functions", "base64": "encodings", "unicodedata": "character data",
    "typing": "annotations (get_type_hints/ForwardRef removed)",
    "enum": "enumerations (global_enum removed; the functional API's member names are checked like a "
            "class body's)",
    "dataclasses": "dataclasses (make_dataclass removed; @dataclass, fields, asdict, astuple and replace only "
                   "on the snippet's classes)",
    "copy": "copy/deepcopy (no memo argument; dispatch_table removed; a snippet can't define __reduce__)",
    "pprint": "pretty printing (calls repr only)",
    "abc": "abstract base classes (ABCMeta itself is not offered)",
    "__future__": "compiler directives (from __future__ import annotations); feature records only",
}

#: Builtins offered unchanged, and why each is safe.
PLAIN_BUILTINS: dict[str, str] = {
    **dict.fromkeys(
        "abs all any ascii bin bool bytearray bytes callable chr complex dict divmod enumerate filter "
        "float frozenset hash hex int iter len list map max min next oct ord pow range repr reversed "
        "round set slice sorted str sum tuple zip".split(),
        "plain values and functions over them",
    ),
    "classmethod": "decorator", "staticmethod": "decorator", "property": "decorator",
    "isinstance": "type test", "issubclass": "type test", "id": "a number", "format": "calls __format__",
    "object": "base class (its dunders are refused by the attribute guard)",
    "super": "attribute access on it goes through the guard (format/private names included)",
    "None": "constant", "True": "constant", "False": "constant", "Ellipsis": "constant",
    "NotImplemented": "constant",
}
#: Builtins replaced by a guarded version, and why.
GUARDED_BUILTINS: dict[str, str] = {
    "getattr": "the attribute guard", "hasattr": "the attribute guard", "setattr": "the write guard",
    "delattr": "the write guard", "type": "one argument only; never returns a metaclass",
    "dir": "public names only", "open": "read-only text copy of a file in the folder (not hidden)",
    "print": "to the output collector",
    "__import__": "allowed modules only, as views; and the folder's own modules",
    "__build_class__": "records the snippet's classes; no metaclass keyword",
}
#: Not offered at all (refused before the code runs, with this reason).
NOT_OFFERED = "eval exec compile globals locals vars breakpoint input exit quit memoryview help"


def plain_str(value: object, what: str) -> str:
    """``value`` as an exact ``str`` (a copy for a subclass), before any guard looks at it.

    A guard must never read a snippet's value through that value's own methods: a ``str`` subclass can
    override ``startswith``, ``__eq__``, ``__hash__``, ``__contains__`` or ``__iter__`` and so answer the
    guard's question with a lie (``getattr(o, S('__class__'))``). ``str.__str__`` copies the characters
    without calling anything the snippet defined.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string")
    return str.__str__(value)


class Refused(Exception):
    """Raised by a guard: the code asked for something the sandbox does not allow (a policy refusal)."""


class RefusedAttribute(Refused, AttributeError):
    pass


class RefusedImport(Refused, ImportError):
    pass


class RefusedWrite(Refused, TypeError):
    pass


def _removed_reason(module: str, name: str) -> str | None:
    return REMOVED.get(module, {}).get(name) or REMOVED_EVERYWHERE.get(name)


def _is_metaclass(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, type)


def _forbidden_base(cls: type) -> bool:
    """Classes a snippet may not extend: ``dataclasses.Field`` (the dataclass code generator pastes a
    field's ``name`` into source it runs with the real builtins)."""
    return issubclass(cls, dataclasses.Field)


def _check_field_names(klass: type) -> None:
    """Every field ``@dataclass`` will generate code for — the class's own annotations and the fields it
    inherits — must be a plain identifier (a name is pasted into generated source)."""
    names: list[object] = list(vars(klass).get("__annotations__", {}))
    for base in klass.__mro__[1:]:
        inherited = vars(base).get("__dataclass_fields__")
        if isinstance(inherited, dict):
            for key, field in inherited.items():
                names += [key, getattr(field, "name", key)]
    for name in names:
        if type(name) is not str or not str.isidentifier(name) or keyword.iskeyword(name):
            raise Refused(f"@dataclass field name {name!r} is not a plain identifier")


_ALWAYS_DENIED: tuple[object, ...] = (
    operator.attrgetter, operator.methodcaller, typing.get_type_hints, typing.ForwardRef, typing.get_origin,
    typing.get_args,
    functools.singledispatch, functools.singledispatchmethod, string.Formatter, collections.UserString,
    uuid.getnode, uuid.uuid1,
    dataclasses.make_dataclass, abc.update_abstractmethods,
)


def is_denied(value: object) -> bool:
    """A value the snippet may never hold (wherever it came from), metaclasses included."""
    return any(value is denied for denied in _ALWAYS_DENIED) or _is_metaclass(value)


#: namedtuple's public API is spelled with one underscore (the values are tuples, dicts and classes).
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})


def _namedtuple_api(obj: object, name: str) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return name in NAMEDTUPLE_API and issubclass(cls, tuple) and "_fields" in vars(cls)


def _lookup_path(obj: object) -> list[type]:
    """The classes an attribute lookup on ``obj`` consults: its class's MRO, and for a class also its
    metaclass's (where ``EnumType._convert_`` is found for the snippet's ``class E(enum.Enum)``)."""
    cls = obj if isinstance(obj, type) else type(obj)
    path: list[type] = list(cls.__mro__)
    if isinstance(obj, type):
        metaclass: type = type(obj)
        path.extend(type.__dict__["__mro__"].__get__(metaclass))
    return path


class SandboxClasses:
    """The classes the snippet built (by identity), so private names are allowed on them only."""

    def __init__(self) -> None:
        self._classes: weakref.WeakSet[type] = weakref.WeakSet()

    def add(self, cls: type) -> None:
        self._classes.add(cls)

    def owns(self, obj: object) -> bool:
        cls = obj if isinstance(obj, type) else type(obj)
        return cls in self._classes

    def _definers(self, obj: object, name: str) -> tuple[bool, bool]:
        """Does a class the snippet built, and does a foreign class, define ``name`` on ``obj``'s lookup
        path (:func:`_lookup_path`)?"""
        owned = foreign = False
        for klass in _lookup_path(obj):
            if name in vars(klass):
                if klass in self._classes:
                    owned = True
                else:
                    foreign = True
        return owned, foreign

    def _foreign_bases_built_in(self, obj: object) -> bool:
        """Every class ``obj`` (an instance) inherits that the snippet did not build is built into the
        interpreter (a Python base class may have set private attributes on it: ``PrettyPrinter._stream``)."""
        return all(k in self._classes or k.__module__ == "builtins" for k in type(obj).__mro__)

    def private_ok(self, obj: object, name: str) -> bool:
        """``_name`` on ``obj``: only on the snippet's objects, only where the lookup finds it in a class
        the snippet built (or, for an instance, in its own namespace), and only if no foreign class on
        the lookup path defines it. A class's lookup path includes its metaclass's: ``EnumType._convert_``
        or ``ABCMeta._dump_registry`` reached through the snippet's ``class E(enum.Enum)`` is foreign.
        An instance's own private attributes count only when :meth:`_foreign_bases_built_in`."""
        if not self.owns(obj):
            return False
        owned, foreign = self._definers(obj, name)
        if foreign or owned or isinstance(obj, type):
            return owned and not foreign
        if not self._foreign_bases_built_in(obj):
            return False
        try:
            return name in vars(obj)
        except TypeError:  # no instance namespace (slots only)
            return False

    def private_settable(self, obj: object, name: str) -> bool:
        """May the snippet set or delete ``_name`` on ``obj``: its own object, no foreign class on the
        lookup path defines the name, and (for an instance) :meth:`_foreign_bases_built_in`."""
        if not self.owns(obj) or self._definers(obj, name)[1]:
            return False
        return isinstance(obj, type) or self._foreign_bases_built_in(obj)

    def private_missing(self, obj: object, name: str) -> bool:
        """``_name`` is nowhere on the lookup path of the snippet's own ``obj`` (so ``getattr``'s default
        applies, and nothing foreign is asked for it)."""
        if not self.owns(obj) or any(self._definers(obj, name)):
            return False
        try:
            return isinstance(obj, type) or name not in vars(obj)
        except TypeError:
            return True

class Guards:
    """The guard functions of one run (bound to that run's :class:`SandboxClasses` and module views)."""

    def __init__(self) -> None:
        self.classes = SandboxClasses()
        self._views: dict[str, ModuleType] = {}
        #: the modules from the folder this run may import (a ``folder_loader.FolderLoader``, set by
        #: the runner; ``None``: the allow-list only)
        self.folder: Any = None
        #: the file names of the code this run compiled (the snippet's, and each folder module's)
        self.code_files: frozenset[str] = frozenset({SANDBOX_FILENAME})
        #: what the snippet is handed: plain functions over this object (see :func:`_closure`)
        self.api: dict[str, Callable[..., Any]] = {
            name: _closure(getattr(self, name), name.rstrip("_"))
            for name in ("getattr", "hasattr", "setattr", "delattr", "type", "dir", "import_", "build_class",
                         "write", "write_private", "super_attr")
        }
        update_wrapper = _closure(self.update_wrapper, "update_wrapper")

        def wraps(wrapped: Any, assigned: Sequence[str] = (), updated: Sequence[str] = ()) -> Callable[[Any], Any]:
            def decorate(wrapper: Any) -> Any:
                return update_wrapper(wrapper, wrapped, assigned, updated)

            return decorate

        # (real, substitute) pairs, compared by identity (not ``id()``: that is an audited event)
        self._substitutes: tuple[tuple[object, object], ...] = (
            (functools.wraps, wraps),
            (functools.update_wrapper, update_wrapper),
            (functools.total_ordering, _closure(self.total_ordering, "total_ordering")),
            (dataclasses.dataclass, _closure(self.dataclass, "dataclass")),
            (dataclasses.fields, _closure(self.fields, "fields")),
            (dataclasses.asdict, _closure(self.asdict, "asdict")),
            (dataclasses.astuple, _closure(self.astuple, "astuple")),
            (dataclasses.replace, _closure(self.replace, "replace")),
            (copy.deepcopy, _closure(self.deepcopy, "deepcopy")),
        )

    def _substitute(self, value: object) -> object:
        for real, substitute in self._substitutes:
            if value is real:
                return substitute
        return value

    # -- modules -----------------------------------------------------------------------------------
    def view(self, module: ModuleType) -> ModuleType:
        """The snippet's view of an allowed module (see the module docstring)."""
        name = module.__name__
        if name in self._views:
            return self._views[name]
        view = ModuleType(name, module.__doc__)
        self._views[name] = view
        for key, value in vars(module).items():
            if key.startswith("_") or _removed_reason(name, key) or is_denied(value):
                continue
            if isinstance(value, ModuleType):
                if value.__name__ in ALLOWED_MODULES and value.__name__.startswith(name + "."):
                    setattr(view, key, self.view(value))
                continue
            setattr(view, key, self._substitute(value))
        return view

    def import_(
        self, name: str, globals: Any = None, locals: Any = None, fromlist: Iterable[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        return self.import_in(None, name, fromlist, level)

    def importer(self, package: str) -> Callable[..., ModuleType]:
        """The ``__import__`` of a module from the folder: relative imports resolve against its
        ``package`` (held in this closure, never read from the module's globals)."""

        def __import__(name: str, globals: Any = None, locals: Any = None, fromlist: Iterable[str] | None = (),
                       level: int = 0) -> ModuleType:
            return self.import_in(package, name, fromlist, level)

        return __import__

    def import_in(self, package: str | None, name: object, fromlist: Iterable[object] | None, level: object
                  ) -> ModuleType:
        """An import by the snippet (``package`` ``None``) or by a module from the folder: an allowed
        module's view, else a module the folder serves (:attr:`folder`), else refused."""
        name = plain_str(name, "the module name")
        fromlist = tuple(plain_str(item, "an imported name") for item in fromlist or ())
        if type(level) is not int or level < 0:
            raise RefusedImport("the import level must be a plain number")
        if level:
            if not package or self.folder is None:
                raise RefusedImport("relative imports are not allowed in the sandbox (only inside a package in the "
                                    "folder)")
            return self.folder.import_relative(package, level, name, fromlist)  # type: ignore[no-any-return]
        if name not in ALLOWED_MODULES:
            if self.folder is not None and self.folder.serves(name):
                return self.folder.import_(name, fromlist)  # type: ignore[no-any-return]
            raise RefusedImport(f"import of {name!r} is not allowed in the sandbox")
        module = importlib.import_module(name)
        for item in fromlist or ():
            if f"{name}.{item}" in ALLOWED_MODULES:
                continue
            reason = _removed_reason(name, item)
            value = getattr(module, item, None)
            if item == "*" or item.startswith("_") or reason or isinstance(value, ModuleType) or is_denied(value):
                why = f" ({reason})" if reason else ""
                raise RefusedImport(f"'from {name} import {item}' is not allowed in the sandbox{why}")
        if fromlist:
            return self.view(module)
        return self.view(importlib.import_module(name.partition(".")[0]))

    # -- attributes --------------------------------------------------------------------------------
    def getattr(self, obj: object, name: object, default: object = ...) -> Any:
        """``getattr`` for sandboxed code (also the ``getattr`` builtin and ``_getattr_``)."""
        name = plain_str(name, "attribute name")
        if name.startswith("__") or name in INSPECT_ATTRIBUTES:
            raise RefusedAttribute(f"access to {name!r} is not allowed in the sandbox")
        target = obj.__self__ if isinstance(obj, super) else obj  # type: ignore[attr-defined]  # super() is checked like its object
        if name.startswith("_") and not self.classes.private_ok(target, name) and not _namedtuple_api(target, name) \
                and not self._folder_private(target, name):
            if self.classes.private_missing(target, name) or (self.folder is not None
                                                              and self.folder.private_missing(target, name)):
                if default is not ...:
                    return default
                raise AttributeError(f"{type(target).__name__!r} object has no attribute {name!r}")
            raise RefusedAttribute(f"access to {name!r} is not allowed in the sandbox (private attribute)")
        if name in ("format", "format_map"):
            if isinstance(target, str):
                text = str.__str__(target)
                return self._safe_format(text) if name == "format" else self._safe_format_map(text)
            if isinstance(target, type) and issubclass(target, str):
                raise RefusedAttribute(f"str.{name} must be called on a string ('...'.{name}(...))")
        if isinstance(obj, ModuleType) and not self._from_folder(obj):
            reason = _removed_reason(obj.__name__, name)
            if reason:
                raise RefusedAttribute(f"{obj.__name__}.{name} is not available in the sandbox: {reason}")
        try:
            value = getattr(obj, name)
        except AttributeError:
            if default is ...:
                raise
            return default
        if isinstance(value, ModuleType):
            if self._from_folder(value):
                return value
            if value.__name__ not in ALLOWED_MODULES:
                raise RefusedAttribute(f"{name!r} is a module; reaching modules through attributes is not allowed")
            return self.view(value)
        if is_denied(value):
            raise RefusedAttribute(f"{name!r} is not available in the sandbox")
        return self._substitute(value)

    def _from_folder(self, obj: object) -> bool:
        """Is ``obj`` a module object this run made for a module from the folder (by identity)?"""
        return self.folder is not None and bool(self.folder.owns(obj))

    def _folder_private(self, obj: object, name: str) -> bool:
        """``_name`` bound by a folder module's own code in its namespace (what the snippet could write)."""
        return self.folder is not None and bool(self.folder.private_ok(obj, name))

    def hasattr(self, obj: object, name: object) -> bool:
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def write(self, obj: Any) -> Any:
        """``_write_``: item writes anywhere but modules; attribute writes only on the snippet's objects."""
        if isinstance(obj, ModuleType):
            raise RefusedWrite("modules are read-only in the sandbox")
        if self.classes.owns(obj) or type(obj) in (dict, list):
            return obj
        return _ItemWriter(obj)

    def write_private(self, obj: Any) -> Any:
        """``_write_private_``: the target of ``obj._name = ...`` / ``del obj._name``, checked by name."""
        return _PrivateWriter(obj, self)

    def setattr(self, obj: Any, name: object, value: Any) -> None:
        name = plain_str(name, "attribute name")
        if name.startswith("__") or (name.startswith("_") and not self.classes.private_settable(obj, name)):
            raise RefusedAttribute(f"setting {name!r} is not allowed in the sandbox")
        setattr(self.write(obj), name, value)

    def delattr(self, obj: Any, name: object) -> None:
        name = plain_str(name, "attribute name")
        if name.startswith("__"):
            raise RefusedAttribute("deleting that attribute is not allowed in the sandbox")
        if name.startswith("_") and not self.classes.private_settable(obj, name):
            raise RefusedAttribute(f"deleting {name!r} is not allowed in the sandbox")
        delattr(self.write(obj), name)

    def super_attr(self, sup: object, name: str) -> Any:
        """``super().__init__`` and the other magic methods a snippet's class may call on its base."""
        name = plain_str(name, "attribute name")
        if type(sup) is not super or name not in SUPER_DUNDERS:
            raise RefusedAttribute(f"access to {name!r} is not allowed in the sandbox")
        return getattr(sup, name)

    # -- builtins ----------------------------------------------------------------------------------
    def type(self, obj: object, *rest: object) -> type:
        if rest:
            raise Refused("type() with three arguments (building a class) is not allowed in the sandbox")
        result = type(obj)
        if is_denied(result):
            raise Refused(f"type() of this object ({result.__name__}) is not available in the sandbox")
        return result

    def build_class(self, func: Callable[..., Any], name: str, *bases: Any, **kwargs: Any) -> Any:
        if kwargs.pop("metaclass", type) is not type:  # RestrictedPython passes metaclass=type
            raise Refused("class ... (metaclass=...) is not allowed in the sandbox")
        if kwargs:
            raise Refused(f"class {name}(...) keywords are not allowed in the sandbox")
        for base in bases:
            if is_denied(base) or not (isinstance(base, type) or hasattr(base, "__mro_entries__")):
                raise Refused(f"class {name} may not derive from {base!r} in the sandbox")
        # the bases as Python resolves them (``typing.Type`` is ``type`` once its __mro_entries__ ran)
        for base in types.resolve_bases(bases):
            if is_denied(base) or not isinstance(base, type) or _forbidden_base(base):
                raise Refused(f"class {name} may not derive from {base!r} in the sandbox")
        cls = builtins.__build_class__(func, name, *bases, **kwargs)
        if _is_metaclass(cls) or _forbidden_base(cls):
            raise Refused(f"class {name} would be a metaclass or a dataclass field type; not in the sandbox")
        self.classes.add(cls)
        return cls

    def dataclass(self, cls: Any = None, /, **options: Any) -> Any:
        """``@dataclass`` on the snippet's own classes only; the result (slots=True makes a new class)
        is recorded as the snippet's."""

        def wrap(klass: Any) -> Any:
            if not self.classes.owns(klass) or not isinstance(klass, type):
                raise Refused("@dataclass works only on classes the snippet defines")
            _check_field_names(klass)
            module = vars(klass).get("__module__")
            # a folder module's class: dataclasses reads sys.modules[cls.__module__] (string annotations),
            # which folder modules never enter; it reads __main__'s, as for the snippet's classes
            renamed = type(module) is str and module not in sys.modules
            if renamed:
                type.__setattr__(klass, "__module__", SANDBOX_MODULE_NAME)
            try:
                made: type = dataclasses.dataclass(klass, **options)
            finally:
                if renamed:
                    type.__setattr__(klass, "__module__", module)
            if renamed and made is not klass:  # slots=True makes a new class
                type.__setattr__(made, "__module__", module)
            self.classes.add(made)
            return made

        return wrap if cls is None else wrap(cls)

    def _own(self, obj: object, what: str) -> None:
        if not self.classes.owns(obj):
            raise Refused(f"{what} works only on the snippet's own classes and their instances in the sandbox")

    def fields(self, class_or_instance: Any) -> Any:
        self._own(class_or_instance, "dataclasses.fields")
        return dataclasses.fields(class_or_instance)

    def asdict(self, obj: Any, *, dict_factory: Callable[..., Any] = dict) -> Any:
        self._own(obj, "dataclasses.asdict")
        return dataclasses.asdict(obj, dict_factory=dict_factory)

    def astuple(self, obj: Any, *, tuple_factory: Callable[..., Any] = tuple) -> Any:
        self._own(obj, "dataclasses.astuple")
        return dataclasses.astuple(obj, tuple_factory=tuple_factory)

    def replace(self, obj: Any, /, **changes: Any) -> Any:
        self._own(obj, "dataclasses.replace")
        return dataclasses.replace(obj, **changes)

    def total_ordering(self, cls: Any) -> Any:
        """``functools.total_ordering`` sets comparison dunders on the class it is given: only the
        snippet's own classes."""
        if not isinstance(cls, type):
            raise Refused("functools.total_ordering takes a class")
        self._own(cls, "functools.total_ordering")
        return functools.total_ordering(cls)

    def deepcopy(self, x: Any, memo: Any = None) -> Any:
        """``copy.deepcopy`` without a caller's memo: the memo sees every object the copy walks."""
        if memo is not None:
            raise Refused("copy.deepcopy(x, memo) is not allowed in the sandbox (the memo would see every object "
                          "the copy walks)")
        return copy.deepcopy(x)

    def update_wrapper(
        self, wrapper: Any, wrapped: Any, assigned: Sequence[str] = (), updated: Sequence[str] = ()
    ) -> Any:
        """``functools.update_wrapper`` that copies only ``__name__``/``__qualname__``/``__doc__`` onto a
        function the snippet wrote (never names the caller picks)."""
        if assigned or updated:
            raise Refused("update_wrapper(assigned=..., updated=...) is not allowed in the sandbox")
        if not (isinstance(wrapper, FunctionType) and wrapper.__code__.co_filename in self.code_files):
            raise Refused("functools.wraps works only on functions the snippet defines")
        for attr in ("__name__", "__qualname__", "__doc__"):
            value = getattr(wrapped, attr, None)
            if isinstance(value, str) or (attr == "__doc__" and value is None):
                setattr(wrapper, attr, value)
        setattr(wrapper, "__wrapped__", wrapped)  # noqa: B010
        return wrapper

    def dir(self, obj: object) -> list[str]:
        return sorted(n for n in dir(obj) if not n.startswith("_") or self.classes.private_ok(obj, n))

    # -- str.format --------------------------------------------------------------------------------
    def _safe_format(self, text: str) -> Callable[..., str]:
        def format(*args: Any, **kwargs: Any) -> str:
            return _SafeFormatter(self).vformat(text, args, kwargs)

        return format

    def _safe_format_map(self, text: str) -> Callable[[Any], str]:
        def format_map(mapping: Any) -> str:
            return _SafeFormatter(self).vformat(text, (), mapping)

        return format_map


def _closure(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A plain function that calls ``method``. ``copy``/``deepcopy``/``pickle`` treat functions as atoms
    and its closure is only reachable through ``__closure__`` (a dunder, refused), so nothing the snippet
    can copy, reduce or walk leads from it to the guards' state (a bound method would: its ``__self__``
    is copied like any object, ``_substitutes`` and all)."""

    def guard(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    guard.__name__ = guard.__qualname__ = name
    return guard


class _SafeFormatter(string.Formatter):
    """``str.format`` whose ``{0.attr}`` / ``{0[key]}`` lookups go through the guards."""

    def __init__(self, guards: Guards) -> None:
        self._guards = guards

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Any) -> Any:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self._guards.getattr(obj, key) if is_attr else obj[key]
        return obj, first


class _PrivateWriter:
    """Forwards ``_name`` writes to ``target`` through :meth:`Guards.setattr` / :meth:`Guards.delattr`."""

    __slots__ = ("guards", "target")
    guards: Guards
    target: Any

    def __init__(self, target: Any, guards: Guards) -> None:
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "guards", guards)

    def __setattr__(self, name: str, value: Any) -> None:
        self.guards.setattr(self.target, name, value)

    def __delattr__(self, name: str) -> None:
        self.guards.delattr(self.target, name)


class _ItemWriter:
    """What ``_write_`` returns for objects whose attributes sandboxed code may not set."""

    __slots__ = ("target",)
    target: Any

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "target", target)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.target[key] = value

    def __delitem__(self, key: Any) -> None:
        del self.target[key]

    def __setattr__(self, name: str, value: Any) -> None:
        raise RefusedWrite(f"cannot set attributes on {type(self.target).__name__} objects in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise RefusedWrite(f"cannot delete attributes of {type(self.target).__name__} objects in the sandbox")
