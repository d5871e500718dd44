"""The second layer: a Python audit hook in the worker that needs no cooperation from the snippet.

:func:`install` adds a ``sys.addaudithook`` hook after the worker's own start-up imports. It lets
everything through until :meth:`AuditControls.arm` (called with the compiled snippet, right before it
runs); from then on it is **deny by default**: any audit event not listed below ends the worker at once
(``os._exit``, after writing a refusal reply on the protocol pipe), whatever the snippet did to get
there. Allowed while armed:

- ``resource.setrlimit`` raising the soft memory limit to the hard one (the worker, after the run);
- ``open`` read-only (no ``w``/``a``/``x``/``+`` mode, no write/create/truncate/append flag) of a path
  that resolves (symlinks followed with the hook's own ``lstat``/``readlink``) inside a root and has no
  hidden (``.``) component below it, or an already-open descriptor read-only;
- ``exec`` of the snippet's own code object and of each folder module's (compiled before arming), each
  once;
- ``compile``/``exec``/``sys._getframe`` only from the few standard-library functions that need them
  for benign snippets (``@dataclass``, ``namedtuple``, ``Enum('E', 'A B')``, ``TypeVar``, a string
  annotation's ``ForwardRef``), checked by their code objects;
- ``object.__getattr__`` except frames (``tb_frame``, ``gi_frame``, ``cr_frame``, ``ag_frame``),
  ``object.__setattr__``/``__delattr__`` on classes (on functions only ``namedtuple``'s defaults: no
  ``__code__`` swaps),
  ``builtins.id``, ``time.sleep``.

So ``socket.*``, ``subprocess.*``, ``os.system``/``exec*``/``fork``/``spawn*``/``kill``/``rename``/
``remove``/``unlink``/``truncate``/``chmod``..., ``mmap``, ``ctypes.*``, ``import`` of anything new,
``marshal``/``pickle``, ``gc.get_referrers``, ``sys._current_frames``, ``sys.settrace`` and every event
added in later Python versions end the run. The hook keeps everything it uses in its closure (captured at
install time), so a snippet that patches ``os.path`` or ``builtins`` can't change its answers.

No code of the snippet ever runs inside the hook (where nested events go unchecked): it looks only at
exact ``str``/``bytes``/``int`` values (a ``str`` subclass is copied first; a refusal names only a value's
type) and switches the cyclic garbage collector off while it runs, so no finaliser can run there.
``signal`` raises no audit event for handlers and timers: :meth:`AuditControls.arm` replaces
:data:`SIGNAL_FUNCTIONS` in ``signal`` and ``_signal`` with a function that ends the worker (the worker's
seccomp filter refuses the syscalls underneath too), so nothing is ever called with an interrupted
frame that could walk to this hook's state.
:meth:`AuditControls.reading_frames` opens a short window, used only by the runner after the snippet
stopped, in which traceback frames and the Python install's source files may be read.
"""

from __future__ import annotations

import _signal
import collections
import contextlib
import dataclasses
import enum
import gc
import json
import os
import posix
import resource
import signal
import stat
import sys
import typing
from collections.abc import Callable, Iterator, Sequence
from types import CodeType
from typing import Any

KILLED_STATUS = 86
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_FRAME_NAMES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
_ALWAYS = frozenset({"builtins.id", "time.sleep"})
#: ``signal`` functions that install handlers, arm timers or send signals (none raises an audit event):
#: replaced, in ``signal`` and ``_signal``, by a function that ends the worker once the hook is armed.
#: The worker's seccomp filter refuses the syscalls behind them too (``rt_sigaction``, ``setitimer``...).
SIGNAL_FUNCTIONS = ("signal", "setitimer", "alarm", "set_wakeup_fd", "siginterrupt", "pthread_kill",
                    "raise_signal", "pthread_sigmask", "sigwait", "sigwaitinfo", "sigtimedwait", "pidfd_send_signal")


def _code(func: Any) -> CodeType:
    return func.__code__  # type: ignore[no-any-return]


def _allowed_callers() -> dict[str, frozenset[CodeType]]:
    create_fn = _code(dataclasses._create_fn)  # type: ignore[attr-defined]
    namedtuple = _code(collections.namedtuple)
    forward_ref = _code(typing.ForwardRef.__init__)
    create = vars(enum.EnumType)["_create_"]
    enum_create = _code(getattr(create, "__wrapped__", create))
    typing_caller = _code(typing._caller)  # type: ignore[attr-defined]
    return {
        "compile": frozenset({create_fn, namedtuple, forward_ref}),
        "exec": frozenset({create_fn, namedtuple}),
        "sys._getframe": frozenset({namedtuple, enum_create, typing_caller}),
        "function.__defaults__": frozenset({namedtuple}),  # namedtuple(..., defaults=...)
    }


@dataclasses.dataclass(frozen=True)
class AuditControls:
    """What the worker keeps of the hook: switch it on, and read a traceback after the snippet."""

    arm: Callable[[CodeType | Sequence[CodeType], Sequence[str]], None]
    reading_frames: Callable[[], contextlib.AbstractContextManager[object]]


def _show(value: object) -> str:
    """``value`` for a refusal message without calling anything the snippet defined: the repr of an
    exact ``str``/``bytes``/``int``, else only its type's name."""
    kind = type(value)
    if kind is str or kind is bytes or kind is int:
        return repr(value)
    return f"<{kind.__name__}>"


def _refusal_message(event: str, detail: str) -> bytes:
    text = (
        f"Stopped by the sandbox: the code tried an operation that is never allowed ({event}{detail}). "
        "The worker was ended."
    )
    body = json.dumps({"stdout": "", "stderr": "", "value": None, "error": text, "refused": True,
                       "notes": ["ended by the audit layer"]}).encode("utf-8")
    return len(body).to_bytes(4, "big") + body


def install(reply_fd: int, python_dirs: Sequence[str]) -> AuditControls:
    """Add the hook (permissive until armed) and return its controls."""
    callers = _allowed_callers()
    # Everything the hook calls is captured now, so a snippet patching modules can't change it.
    lstat, readlink, getcwd, write, exit_now = posix.lstat, posix.readlink, posix.getcwd, posix.write, os._exit
    is_link, getframe, isinstance_, str_, int_, bytes_ = stat.S_ISLNK, sys._getframe, isinstance, str, int, bytes
    type_, tuple_, any_, len_, show, plain = type, tuple, any, len, _show, str.__str__
    join_bytes = b"".join
    gc_enabled, gc_disable, gc_enable = gc.isenabled, gc.disable, gc.enable
    message, frame_names, always, write_flags = _refusal_message, _FRAME_NAMES, _ALWAYS, _WRITE_FLAGS
    rlimit_as = resource.RLIMIT_AS
    state: dict[str, Any] = {"armed": False, "busy": False, "codes": [], "roots": (), "frames": False}
    code_type, range_ = CodeType, range
    install_dirs = tuple_(d.rstrip("/") for d in python_dirs if d)

    def kill(event: str, detail: str = "") -> None:
        try:
            write(reply_fd, message(event, detail))
        finally:
            exit_now(KILLED_STATUS)

    def resolve(path: str) -> str | None:
        """The path with every symlink followed (``None`` when it can't be resolved)."""
        pending = path if path.startswith("/") else getcwd() + "/" + path
        parts: list[str] = []
        hops = 0
        todo = [p for p in pending.split("/") if p not in ("", ".")]
        while todo:
            part = todo.pop(0)
            if part == "..":
                if parts:
                    parts.pop()
                continue
            candidate = "/" + "/".join([*parts, part])
            try:
                mode = lstat(candidate).st_mode
            except OSError:
                parts.append(part)  # does not exist: the open fails by itself
                continue
            if is_link(mode):
                hops += 1
                if hops > 40:
                    return None
                target = readlink(candidate)
                if target.startswith("/"):
                    parts = []
                todo = [p for p in target.split("/") if p not in ("", ".")] + todo
                continue
            parts.append(part)
        return "/" + "/".join(parts)

    def readable(path: str) -> bool:
        real = resolve(path)
        if real is None:
            return False
        for root in state["roots"]:
            if real == root or real.startswith(root + "/"):
                below = real[len(root):].split("/")
                return not any_(p.startswith(".") for p in below if p)
        if state["frames"]:
            return any_(real.startswith(d + "/") for d in install_dirs)
        return False

    def check_open(args: tuple[Any, ...]) -> None:
        # Only exact str/bytes/int are looked at (copied first): a snippet's str subclass could answer
        # ``startswith``/``in`` with its own code while the hook runs.
        path, mode, flags = (*tuple_(args), None, None, None)[:3]
        if mode is not None and type_(mode) is not str_:
            kill("open", f" with a mode of type {show(mode)}")
        if isinstance_(mode, str_) and any_(c in mode for c in "wax+"):
            kill("open", f" for writing: {show(path)}")
        if flags is not None and type_(flags) is not int_:
            kill("open", f" with flags of type {show(flags)}")
        if isinstance_(flags, int_) and flags & write_flags:
            kill("open", f" for writing: {show(path)}")
        if isinstance_(path, int_):
            return
        if isinstance_(path, bytes_):
            path = join_bytes((path,)).decode("utf-8", "surrogateescape")
        elif isinstance_(path, str_):
            path = plain(path)
        else:
            kill("open", f" of a {show(path)} path")
        if not readable(path):
            kill("open", f" outside the folder or of a hidden file: {show(path)}")

    def take_code(obj: object) -> bool:
        """Is ``obj`` one of the code objects the run may ``exec`` (by identity)? Each is taken once."""
        codes = state["codes"]
        for i in range_(len_(codes)):
            if codes[i] is obj:
                del codes[i]
                return True
        return False

    def caller_code() -> CodeType | None:
        try:
            return getframe(3).f_code  # 0: this function, 1: check, 2: the hook, 3: the function that raised
        except ValueError:
            return None

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not state["armed"] or state["busy"]:
            return
        # While busy, no event is checked: so no code of the snippet may run in here. The hook only
        # looks at exact built-in types, and the cyclic collector (which could run a finaliser) is off.
        state["busy"] = True
        collecting = gc_enabled()
        gc_disable()
        try:
            check(event, args)
        finally:
            if collecting:
                gc_enable()
            state["busy"] = False

    def check(event: str, args: tuple[Any, ...]) -> None:
        if type_(event) is not str_ or type_(args) is not tuple_:
            kill("audit", ": an event of an unexpected shape")
        if event in always:
            return
        if event == "open":
            check_open(args)
        elif event == "exec" and args and take_code(args[0]):
            pass
        elif event in ("compile", "exec", "sys._getframe"):
            if caller_code() not in callers[event]:
                kill(event)
        elif event == "object.__getattr__":
            name = args[1] if len_(args) > 1 else None
            if type_(name) is not str_ or (name in frame_names and not state["frames"]):
                kill(event, f": {show(name)}")
        elif event == "resource.setrlimit":
            # only the worker's own "soft memory limit up to the hard one" after the snippet
            limits: Any = args[1] if len_(args) == 2 else None
            if not (type_(args[0]) is int_ and args[0] == rlimit_as and type_(limits) is tuple_ and len_(limits) == 2
                    and type_(limits[0]) is int_ and type_(limits[1]) is int_ and limits[0] == limits[1]):
                kill(event)
        elif event in ("object.__setattr__", "object.__delattr__"):
            on_class = bool(args) and isinstance_(args[0], type_)
            if not on_class and caller_code() not in callers["function.__defaults__"]:
                kill(event, f": {show(args[1])}" if len_(args) > 1 else "")
        else:
            kill(event)

    def refuse_signal(*_args: Any, **_kwargs: Any) -> None:
        kill("signal", ": handlers, timers and signals are not available to sandboxed code")

    def arm(code: CodeType | Sequence[CodeType], roots: Sequence[str]) -> None:
        for module in (signal, _signal):
            for name in SIGNAL_FUNCTIONS:
                if hasattr(module, name):
                    setattr(module, name, refuse_signal)
        state["roots"] = tuple_(r.rstrip("/") or "/" for r in roots)
        codes: Sequence[object] = (code,) if isinstance_(code, code_type) else code  # type: ignore[assignment]
        state["codes"] = [c for c in codes if isinstance_(c, code_type)]
        state["armed"] = True

    @contextlib.contextmanager
    def reading_frames() -> Iterator[None]:
        # no finaliser of the snippet may run while frames are readable
        collecting = gc_enabled()
        gc_disable()
        state["frames"] = True
        try:
            yield
        finally:
            state["frames"] = False
            if collecting:
                gc_enable()

    sys.addaudithook(hook)
    return AuditControls(arm=arm, reading_frames=reading_frames)
