"""The run-time half of the restricted backend: guards, builtins, read-only ``open()`` and the runner.

Runs inside the sandbox worker process (never in the server). Every attribute read goes through
:func:`guarded_getattr`, which refuses dunder names, frame/code/generator internals, any attribute whose
value is a module that is not itself allowed (this closes ``json → codecs → sys → os``) and a few
functions that evaluate strings or reach attributes by name (``operator.attrgetter``,
``typing.get_type_hints``, ...). ``str.format`` works through a formatter whose field lookups use the
same guard. ``open()`` reads a text file inside the roots (through the path guards, which refuse links
swapped in after the check) and returns an in-memory copy.
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]
import builtins
import functools
import importlib
import io
import operator
import string
import traceback
import typing
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from cortex_lsp.guards.paths import PathRefused, read_text_file, resolve_in_roots
from cortex_lsp.tools.sandbox.policy import (
    ALLOWED_MODULES,
    REPL_VALUE_NAME,
    SANDBOX_FILENAME,
    SUPER_DUNDERS,
    compile_snippet,
)

SANDBOX_MODULE = "__main__"
MAX_OPEN_BYTES = 1024 * 1024
STDOUT_LIMIT = 100_000
STDERR_LIMIT = 20_000
VALUE_LIMIT = 10_000

#: Objects that evaluate strings or fetch attributes by name, bypassing the attribute guard.
DENIED_OBJECTS: tuple[object, ...] = (
    operator.attrgetter,
    operator.methodcaller,
    typing.get_type_hints,
    typing.ForwardRef,
    functools.singledispatch,
    functools.singledispatchmethod,
    string.Formatter,
    uuid.getnode,
    uuid.uuid1,
)


class Refused(Exception):
    """Raised by a guard: the code asked for something the sandbox does not allow (a policy refusal)."""


class RefusedAttribute(Refused, AttributeError):
    pass


class RefusedImport(Refused, ImportError):
    pass


class RefusedOpen(Refused, PermissionError):
    pass


class RefusedWrite(Refused, TypeError):
    pass


class OutputLimitExceeded(BaseException):
    """Too much output; a BaseException so ``except Exception`` in the snippet cannot swallow it."""


class OutputCollector:
    """Collects printed text up to ``limit`` characters (shared by every scope, and by ``sys.stdout``)."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.truncated = False

    def write(self, text: object) -> int:
        piece = text if isinstance(text, str) else str(text)
        room = self.limit - self.size
        if len(piece) > room:
            self.parts.append(piece[: max(room, 0)])
            self.size = self.limit
            self.truncated = True
            raise OutputLimitExceeded(f"output limit reached ({self.limit} characters); the run was stopped")
        self.parts.append(piece)
        self.size += len(piece)
        return len(piece)

    def flush(self) -> None:
        return None

    def text(self) -> str:
        return "".join(self.parts)

    def __call__(self) -> str:  # RestrictedPython's ``printed``
        return self.text()

    def _call_print(self, *objects: object, **kwargs: Any) -> None:
        target = kwargs.get("file")
        if target is None:
            kwargs["file"] = self
        else:
            guarded_getattr(target, "write")
        builtins.print(*objects, **kwargs)


def is_sandbox_object(obj: object) -> bool:
    """True for classes defined by sandboxed code and their instances."""
    cls = obj if isinstance(obj, type) else type(obj)
    return getattr(cls, "__module__", None) == SANDBOX_MODULE


def _is_denied(value: object) -> bool:
    return any(value is denied for denied in DENIED_OBJECTS)


class _SafeFormatter(string.Formatter):
    """``str.format`` whose ``{0.attr}`` / ``{0[key]}`` lookups go through the guards."""

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Any) -> Any:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = guarded_getattr(obj, key) if is_attr else obj[key]
        return obj, first


def _safe_format(text: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        return _SafeFormatter().vformat(text, args, kwargs)

    return format


def _safe_format_map(text: str) -> Callable[[Any], str]:
    def format_map(mapping: Any) -> str:
        return _SafeFormatter().vformat(text, (), mapping)

    return format_map


_MISSING = object()


def guarded_getattr(obj: object, name: object, default: object = _MISSING) -> Any:
    """``getattr`` for sandboxed code (also the ``getattr`` builtin)."""
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    if name.startswith("__") or name in INSPECT_ATTRIBUTES:
        raise RefusedAttribute(f"access to {name!r} is not allowed in the sandbox")
    if name.startswith("_") and not is_sandbox_object(obj):
        raise RefusedAttribute(f"access to {name!r} is not allowed in the sandbox (private attribute)")
    if name in ("format", "format_map"):
        if isinstance(obj, str):
            return _safe_format(obj) if name == "format" else _safe_format_map(obj)
        if isinstance(obj, type) and issubclass(obj, str):
            raise RefusedAttribute(f"str.{name} must be called on a string ('...'.{name}(...))")
    try:
        value = getattr(obj, name)
    except AttributeError:
        if default is _MISSING:
            raise
        return default
    if isinstance(value, ModuleType) and value.__name__ not in ALLOWED_MODULES:
        raise RefusedAttribute(f"{name!r} is a module; reaching modules through attributes is not allowed")
    if _is_denied(value):
        raise RefusedAttribute(f"{name!r} is not available in the sandbox")
    return value


def guarded_hasattr(obj: object, name: object) -> bool:
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


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


def guarded_write(obj: Any) -> Any:
    """``_write_``: item writes anywhere but modules; attribute writes only on sandbox-defined classes."""
    if isinstance(obj, ModuleType):
        raise RefusedWrite("modules are read-only in the sandbox")
    if is_sandbox_object(obj) or type(obj) in (dict, list):
        return obj
    return _ItemWriter(obj)


def guarded_setattr(obj: Any, name: object, value: Any) -> None:
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    if name.startswith("__") or (name.startswith("_") and not is_sandbox_object(obj)):
        raise RefusedAttribute(f"setting {name!r} is not allowed in the sandbox")
    setattr(guarded_write(obj), name, value)


def guarded_delattr(obj: Any, name: object) -> None:
    if not isinstance(name, str) or name.startswith("__"):
        raise RefusedAttribute("deleting that attribute is not allowed in the sandbox")
    delattr(guarded_write(obj), name)


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "&=": operator.iand, "^=": operator.ixor, "|=": operator.ior,
    "@=": operator.imatmul,
}


def inplace_var(op: str, current: Any, value: Any) -> Any:
    return _INPLACE[op](current, value)


def aug_item(obj: Any, key: Any, op: str, value: Any) -> None:
    """``obj[key] op= value`` as one read, update and guarded write."""
    guarded_write(obj)[key] = inplace_var(op, obj[key], value)


def aug_attr(obj: Any, name: str, op: str, value: Any) -> None:
    guarded_setattr(obj, name, inplace_var(op, guarded_getattr(obj, name), value))


def super_attr(sup: object, name: str) -> Any:
    if type(sup) is not super or name not in SUPER_DUNDERS:
        raise RefusedAttribute(f"access to {name!r} is not allowed in the sandbox")
    return getattr(sup, name)


def guarded_import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Iterable[str] | None = (), level: int = 0
) -> ModuleType:
    if level:
        raise RefusedImport("relative imports are not allowed in the sandbox")
    if name not in ALLOWED_MODULES:
        raise RefusedImport(f"import of {name!r} is not allowed in the sandbox")
    module = importlib.import_module(name)
    for item in fromlist or ():
        if f"{name}.{item}" in ALLOWED_MODULES:
            continue
        value = getattr(module, item, None)
        if item == "*" or item.startswith("_") or isinstance(value, ModuleType) or _is_denied(value):
            raise RefusedImport(f"'from {name} import {item}' is not allowed in the sandbox")
    return module if fromlist else importlib.import_module(name.partition(".")[0])


def make_open(roots: Sequence[Path]) -> Callable[..., io.StringIO]:
    """A read-only, text-only ``open()`` confined to ``roots``; returns an in-memory copy."""

    def sandbox_open(file: object, mode: str = "r", *args: Any, **kwargs: Any) -> io.StringIO:
        if not isinstance(file, str):
            raise RefusedOpen("open() takes a path string in the sandbox")
        if not isinstance(mode, str) or "r" not in mode or set(mode) - set("rt"):
            raise RefusedOpen(f"open() is read-only and text-only in the sandbox (mode {mode!r} is refused)")
        try:
            target = resolve_in_roots(file, roots)
            text = read_text_file(target, max_bytes=MAX_OPEN_BYTES)
        except PathRefused as exc:
            if str(exc).startswith("Not found"):
                raise FileNotFoundError(str(exc)) from None
            raise RefusedOpen(str(exc)) from None
        return io.StringIO(text, newline=None)

    return sandbox_open


def _safe_type(obj: object) -> type:
    return type(obj)


def _safe_dir(obj: object) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


_PLAIN_BUILTINS = (
    "abs all any ascii bin bool bytearray bytes callable chr classmethod complex dict divmod enumerate "
    "filter float format frozenset hash hex id int isinstance issubclass iter len list map max min next "
    "object oct ord pow property range repr reversed round set slice sorted staticmethod str sum super "
    "tuple zip None True False Ellipsis NotImplemented __build_class__"
).split()


def make_builtins(collector: OutputCollector, roots: Sequence[Path]) -> dict[str, Any]:
    names: dict[str, Any] = {name: getattr(builtins, name) for name in _PLAIN_BUILTINS}
    for name, value in vars(builtins).items():
        if isinstance(value, type) and issubclass(value, BaseException):
            names[name] = value
    names.update(
        getattr=guarded_getattr,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        delattr=guarded_delattr,
        type=_safe_type,
        dir=_safe_dir,
        open=make_open(roots),
        print=collector._call_print,
        __import__=guarded_import,
    )
    return names


def make_globals(collector: OutputCollector, roots: Sequence[Path]) -> dict[str, Any]:
    return {
        "__builtins__": make_builtins(collector, roots),
        "__name__": SANDBOX_MODULE,
        "__metaclass__": type,
        "_getattr_": guarded_getattr,
        "_getitem_": operator.getitem,
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": guarded_write,
        "_inplacevar_": inplace_var,
        "_apply_": lambda func, *args, **kwargs: func(*args, **kwargs),
        "_print_": lambda *_args: collector,
        "_augitem_": aug_item,
        "_augattr_": aug_attr,
        "_super_attr_": super_attr,
    }


@dataclass
class RunOutcome:
    """What the worker sends back (plain data; the parent turns it into a ``SandboxResult``)."""

    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    error: str | None = None
    refused: bool = False
    notes: list[str] = field(default_factory=list)


def safe_repr(value: object, limit: int = VALUE_LIMIT) -> str:
    try:
        text = repr(value)
    except ValueError as exc:  # e.g. an int too large to print
        text = f"<{type(value).__name__}: {exc}>"
    except Exception as exc:
        text = f"<unrepresentable {type(value).__name__}: {exc.__class__.__name__}>"
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def format_error(exc: BaseException, source: str) -> str:
    """A traceback showing only the snippet's own frames (never the sandbox's internals)."""
    lines = source.splitlines()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SANDBOX_FILENAME]
    out: list[str] = []
    if frames:
        out.append("Traceback (most recent call last):")
        for frame in frames[-8:]:
            out.append(f"  line {frame.lineno}, in {frame.name}")
            lineno = frame.lineno or 0
            if 0 < lineno <= len(lines):
                out.append(f"    {lines[lineno - 1].strip()}")
    out.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
    return "\n".join(out)


def _snippet_line(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SANDBOX_FILENAME]
    return f" (line {frames[-1].lineno})" if frames else ""


def run_snippet(
    source: str,
    roots: Sequence[Path],
    *,
    stdout: OutputCollector | None = None,
    stderr: OutputCollector | None = None,
) -> RunOutcome:
    """Compile and run one snippet with the guards in place; never raises for the snippet's faults.

    ``stdout`` is shared with ``sys.stdout`` in the worker so library prints land in the same place.
    """
    compiled = compile_snippet(source)
    if compiled.code is None:
        return RunOutcome(error=compiled.error, refused=compiled.refused)
    collector = stdout if stdout is not None else OutputCollector(STDOUT_LIMIT)
    namespace = make_globals(collector, roots)
    outcome = RunOutcome()
    try:
        exec(compiled.code, namespace)
    except OutputLimitExceeded as exc:
        outcome.error = f"Stopped: {exc}."
    except Refused as exc:
        outcome.refused = True
        outcome.error = f"Refused by the sandbox{_snippet_line(exc)}: {exc}"
    except RecursionError as exc:
        outcome.error = format_error(exc, source) + " (recursion too deep)"
    except MemoryError as exc:
        outcome.error = format_error(exc, source) + " (memory limit reached)"
    except (Exception, SystemExit, KeyboardInterrupt, GeneratorExit) as exc:
        outcome.error = format_error(exc, source)
    else:
        outcome.value = _repl_value(namespace, compiled.value_names)
    outcome.stdout = collector.text()
    if collector.truncated:
        outcome.notes.append(f"stdout was cut at {collector.limit} characters")
    if stderr is not None:
        outcome.stderr = stderr.text()
    return outcome


def _repl_value(namespace: dict[str, Any], names: list[str]) -> str | None:
    if REPL_VALUE_NAME in namespace:
        value = namespace[REPL_VALUE_NAME]
        return None if value is None else safe_repr(value)
    present = [n for n in names if n in namespace]
    if not present:
        return None
    if len(present) == 1:
        return safe_repr(namespace[present[0]])
    return safe_repr(tuple(namespace[n] for n in present))
