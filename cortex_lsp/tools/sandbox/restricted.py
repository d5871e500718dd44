"""The run-time half of the restricted backend: the output collector, read-only ``open()`` and the runner.

Runs inside the sandbox worker process (never in the server). The guards themselves (attribute, write,
import, ``type``, class building, module views) and the table of what is allowed and why live in
:mod:`cortex_lsp.tools.sandbox.allowlist`; :func:`make_globals` wires one run's
:class:`~cortex_lsp.tools.sandbox.allowlist.Guards` into the snippet's namespace. ``open()`` reads a text
file inside the roots (through the path guards, which refuse hidden files and links swapped in after the
check) and returns an in-memory copy. :func:`run_snippet` takes an ``arm`` callback, called with the
compiled code objects (the snippet's and its folder modules') right before the snippet runs, so the
worker's audit hook turns strict only once the sandbox's own compile is done. The folder modules the
server sent are compiled and served by :mod:`.folder_loader`, with the same builtins and hooks.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import operator
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from cortex_lsp.guards.paths import PathRefused, read_text_file, resolve_in_roots
from cortex_lsp.tools.sandbox.allowlist import (
    GUARDED_BUILTINS,
    PLAIN_BUILTINS,
    Guards,
    Refused,
    RefusedAttribute,
    RefusedImport,
    RefusedWrite,
    plain_str,
)
from cortex_lsp.tools.sandbox.folder_loader import FolderLoader, compile_folder_modules
from cortex_lsp.tools.sandbox.policy import REPL_VALUE_NAME, SANDBOX_FILENAME, ImportScope, compile_snippet

__all__ = [
    "Refused", "RefusedAttribute", "RefusedImport", "RefusedOpen", "RefusedWrite", "RunOutcome", "run_snippet",
]

SANDBOX_MODULE = "__main__"
MAX_OPEN_BYTES = 1024 * 1024
STDOUT_LIMIT = 100_000
STDERR_LIMIT = 20_000
VALUE_LIMIT = 10_000


class RefusedOpen(Refused, PermissionError):
    pass


class OutputLimitExceeded(BaseException):
    """Too much output; a BaseException so ``except Exception`` in the snippet cannot swallow it."""


def _unwired_print(*_objects: object, **_kwargs: Any) -> None:
    raise RuntimeError("print is not wired to a run's guards")


class OutputCollector:
    """Collects printed text up to ``limit`` characters (shared by every scope, and by ``sys.stdout``)."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.truncated = False
        self._call_print: Callable[..., None] = _unwired_print

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

    def printer(self, guards: Guards) -> Callable[..., None]:
        """The ``print`` builtin (RestrictedPython's ``print`` statement calls ``_call_print``, the same):
        to this collector, or to a ``file=`` whose ``write`` passes the attribute guard."""

        def sandbox_print(*objects: object, **kwargs: Any) -> None:
            target = kwargs.get("file")
            if target is None:
                kwargs["file"] = self
            else:
                guards.getattr(target, "write")
            builtins.print(*objects, **kwargs)

        self._call_print = sandbox_print
        return sandbox_print


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "&=": operator.iand, "^=": operator.ixor, "|=": operator.ior,
    "@=": operator.imatmul,
}


def inplace_var(op: str, current: Any, value: Any) -> Any:
    return _INPLACE[op](current, value)


def make_builtins(collector: OutputCollector, roots: Sequence[Path], guards: Guards) -> dict[str, Any]:
    names: dict[str, Any] = {name: getattr(builtins, name) for name in PLAIN_BUILTINS}
    for name, value in vars(builtins).items():
        if isinstance(value, type) and issubclass(value, BaseException):
            names[name] = value
    api = guards.api
    names.update(
        getattr=api["getattr"],
        hasattr=api["hasattr"],
        setattr=api["setattr"],
        delattr=api["delattr"],
        type=api["type"],
        dir=api["dir"],
        open=make_open(roots),
        print=collector.printer(guards),
        __import__=api["import_"],
        __build_class__=api["build_class"],
    )
    missing = set(GUARDED_BUILTINS) - set(names)
    if missing:
        raise RuntimeError(f"guarded builtins not wired: {sorted(missing)}")
    return names


def make_globals(
    collector: OutputCollector, roots: Sequence[Path], guards: Guards | None = None
) -> dict[str, Any]:
    """The snippet's namespace: the guarded builtins and RestrictedPython's hooks, for one run."""
    run = guards or Guards()
    return {"__builtins__": make_builtins(collector, roots, run), "__name__": SANDBOX_MODULE,
            **make_hooks(collector, run)}


def module_builtins(collector: OutputCollector, roots: Sequence[Path], guards: Guards, package: str
                    ) -> dict[str, Any]:
    """A folder module's ``__builtins__``: the snippet's builtins with an ``__import__`` bound to the
    module's package, and RestrictedPython's hooks (here, not in the module's namespace, so the module
    object holds only what its own code binds)."""
    names = make_builtins(collector, roots, guards)
    names["__import__"] = guards.importer(package)
    names.update(make_hooks(collector, guards))
    return names


def make_hooks(collector: OutputCollector, run: Guards) -> dict[str, Any]:
    """RestrictedPython's hooks (``_getattr_``, ``_write_``, ...) for one run's guards."""

    def aug_item(obj: Any, key: Any, op: str, value: Any) -> None:  # ``obj[key] op= value``
        run.write(obj)[key] = inplace_var(op, obj[key], value)

    def aug_attr(obj: Any, name: str, op: str, value: Any) -> None:  # ``obj.name op= value``
        run.setattr(obj, name, inplace_var(op, run.getattr(obj, name), value))

    return {
        "__metaclass__": type,  # RestrictedPython adds metaclass=__metaclass__ to every class statement
        "_getattr_": run.api["getattr"],
        "_getitem_": operator.getitem,
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": run.api["write"],
        "_write_private_": run.api["write_private"],
        "_inplacevar_": inplace_var,
        "_apply_": lambda func, *args, **kwargs: func(*args, **kwargs),
        "_print_": lambda *_args: collector,
        "_augitem_": aug_item,
        "_augattr_": aug_attr,
        "_super_attr_": run.api["super_attr"],
    }


def make_open(roots: Sequence[Path]) -> Callable[..., io.StringIO]:
    """A read-only, text-only ``open()`` confined to ``roots``; returns an in-memory copy."""

    def sandbox_open(file: object, mode: str = "r", *args: Any, **kwargs: Any) -> io.StringIO:
        if not isinstance(file, str) or not isinstance(mode, str):
            raise RefusedOpen("open() takes a path string and a mode string in the sandbox")
        file, mode = plain_str(file, "the path"), plain_str(mode, "the mode")  # never the snippet's own methods
        if "r" not in mode or set(mode) - set("rt"):
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


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception as inner:
        return f"<{type(exc).__name__}: str() failed with {type(inner).__name__}>"


def format_error(
    exc: BaseException,
    source: str,
    frames: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
    folder: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """A traceback showing only the snippet's own frames and its folder modules' (``folder``: file name
    -> (path, source)), never the sandbox's internals.

    Only the frame walk runs inside ``frames()`` (the audit layer's window); the exception's text, which
    may run the snippet's own ``__str__``, is made outside it.
    """
    texts = {SANDBOX_FILENAME: ("", source), **(folder or {})}
    with frames():
        snippet_frames = _snippet_frames(exc, texts)[-8:]
    out: list[str] = []
    if snippet_frames:
        out.append("Traceback (most recent call last):")
        for filename, lineno, name in snippet_frames:
            path, text = texts[filename]
            out.append(f"  {path + ', ' if path else ''}line {lineno}, in {name}")
            lines = text.splitlines()
            if lineno and 0 < lineno <= len(lines):
                out.append(f"    {lines[lineno - 1].strip()}")
    try:
        out.append("".join(traceback.format_exception_only(type(exc), exc)).strip())
    except Exception:
        out.append(f"{type(exc).__name__}: {safe_str(exc)}")
    return "\n".join(out)


def _snippet_frames(exc: BaseException, texts: Mapping[str, object]) -> list[tuple[str, int, str]]:
    """(file name, line, function name) of the frames in ``exc``'s traceback whose code is the
    snippet's or a folder module's (file names in ``texts``), read from the code objects alone: never
    through ``linecache`` (a snippet could plant an entry whose line runs its own code while the
    frames window is open), never a ``str`` method of anything the snippet made."""
    found: list[tuple[str, int, str]] = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in texts:
            found.append((code.co_filename, tb.tb_lineno or 0, code.co_name))
        tb = tb.tb_next
    return found


def _snippet_line(exc: BaseException, folder: Mapping[str, tuple[str, str]]) -> str:
    """Where a refusal happened: `` (line 3)`` in the snippet, `` (utils.py, line 3)`` in a folder module."""
    frames = _snippet_frames(exc, {SANDBOX_FILENAME: None, **folder})
    if not frames:
        return ""
    filename, lineno, _name = frames[-1]
    return f" ({folder[filename][0]}, line {lineno})" if filename in folder else f" (line {lineno})"


@dataclass(frozen=True)
class RunHooks:
    """The worker's audit layer, seen from the runner: ``arm`` turns it strict (with the code objects it
    may ``exec``, each once: the snippet's and its folder modules'); ``reading_frames`` lets the runner
    itself walk a traceback."""

    arm: Callable[[Sequence[CodeType]], None]
    reading_frames: Callable[[], AbstractContextManager[object]]


def run_snippet(
    source: str,
    roots: Sequence[Path],
    *,
    stdout: OutputCollector | None = None,
    stderr: OutputCollector | None = None,
    hooks: RunHooks | None = None,
    modules: object = None,
    unavailable: object = None,
) -> RunOutcome:
    """Compile and run one snippet with the guards in place; never raises for the snippet's faults.

    ``stdout`` is shared with ``sys.stdout`` in the worker so library prints land in the same place.
    ``modules``/``unavailable``: the folder modules the server sent (:mod:`.folder_loader`).
    """
    folder_modules, refused = compile_folder_modules(modules, unavailable)
    scope = ImportScope(folder=frozenset(n.partition(".")[0] for n in folder_modules), unavailable=refused)
    compiled = compile_snippet(source, scope)
    if compiled.code is None:
        return RunOutcome(error=compiled.error, refused=compiled.refused)
    collector = stdout if stdout is not None else OutputCollector(STDOUT_LIMIT)
    guards = Guards()
    loader = FolderLoader(folder_modules, refused,
                          lambda package: module_builtins(collector, roots, guards, package))
    guards.folder = loader
    folder = loader.sources()
    guards.code_files = frozenset({SANDBOX_FILENAME, *folder})
    namespace = make_globals(collector, roots, guards)
    outcome = RunOutcome()
    frames = hooks.reading_frames if hooks is not None else contextlib.nullcontext
    try:
        if hooks is not None:
            hooks.arm([compiled.code, *loader.codes()])
        exec(compiled.code, namespace)
    except OutputLimitExceeded as exc:
        outcome.error = f"Stopped: {exc}."
    except Refused as exc:
        outcome.refused = True
        with frames():
            line = _snippet_line(exc, folder)
        outcome.error = f"Refused by the sandbox{line}: {safe_str(exc)}"
    except RecursionError as exc:
        outcome.error = format_error(exc, source, frames, folder) + " (recursion too deep)"
    except MemoryError as exc:
        outcome.error = format_error(exc, source, frames, folder) + " (memory limit reached)"
    except BaseException as exc:  # any exception of the snippet's, BaseException included
        outcome.error = format_error(exc, source, frames, folder)
    else:
        try:
            outcome.value = _repl_value(namespace, compiled.value_names)
        except OutputLimitExceeded as exc:  # a __repr__ that prints past the limit
            outcome.error = f"Stopped: {exc}."
        except BaseException as exc:  # a __repr__ raising anything, BaseException included
            outcome.error = f"The value could not be shown: {type(exc).__name__}"
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
