"""OS isolation for the sandbox worker: the bubblewrap command line, detection, and the doctor check.

With bubblewrap the worker runs with no network (``--unshare-net`` via ``--unshare-all``), no
capabilities, as uid/gid 65534 in its own user namespace, a new session, its own PID namespace (so
killing bubblewrap ends every process the snippet could have made), ``--die-with-parent``, the seccomp
filter of :mod:`.seccomp` (``--seccomp FD``), an empty root with only the system folders and the Python
install bound read-only, a private ``/tmp``, no home folder, and the allowed roots bound read-only at
their own paths **with every hidden entry covered** (a hidden folder by an empty tmpfs, a hidden file by
``/dev/null``), so ``.env``/``.git`` are not there for the worker to read. A folder too large to scan
for hidden entries (:data:`MAX_SCANNED_ENTRIES`) is not bound at all.

``sandbox_isolation``: ``auto`` uses bubblewrap when it works and says so plainly when it does not
(then model-initiated ``python_exec`` is refused and user-initiated ``cortex.run`` runs with the
in-process layers only, with a warning in every result); ``bwrap`` refuses to run without it; ``none``
never uses it (the user's explicit choice: both run, with the same warning).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import landlock, seccomp
from cortex_lsp.tools.sandbox.hidden import MAX_SCANNED_ENTRIES, hidden_entries

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap)"
)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
PROBE_TIMEOUT_SECONDS = 15.0
SANDBOX_UID = 65534
IN_PROCESS_LAYERS = "RestrictedPython guards, the audit hook, the seccomp filter and resource limits"


@dataclass(frozen=True)
class IsolationPlan:
    """How workers will be started. ``refuse`` is set when isolation is required but unavailable;
    ``mode`` is the ``sandbox_isolation`` setting it was made from."""

    bwrap: str | None
    detail: str
    refuse: bool = False
    mode: str = "auto"

    @property
    def label(self) -> str:
        return "bwrap" if self.bwrap else f"none ({self.detail})"

    @property
    def model_code_allowed(self) -> bool:
        """May the model run code on its own (``python_exec``)? Not under ``auto`` without bubblewrap."""
        return not self.refuse and (self.bwrap is not None or self.mode == "none")

    @property
    def warning(self) -> str | None:
        """The plain sentence every result, the doctor and the session's first run carry without
        bubblewrap (``None`` with it)."""
        if self.bwrap:
            return None
        return (
            f"No OS isolation ({self.detail}): only the in-process layers apply ({IN_PROCESS_LAYERS})"
            f"{landlock_clause()}. To add it, {INSTALL_HINT}."
        )


def landlock_clause() -> str:
    """How the worker's Landlock rules stand, as the tail of the no-bubblewrap warning."""
    version, why = landlock.abi()
    if version > 0:
        return (f", and the worker's own Landlock rules ({landlock.describe(version)}) keep what an escape could "
                "reach to that")
    return f"; Landlock is missing too ({why}), so an escape could read whatever uid 65534 may"


def worker_command(parent_pid: int | None = None) -> list[str]:
    """The Python command of a worker (without any isolation wrapper)."""
    # the worker imports the same cortex_lsp as this process (a checkout run with PYTHONPATH, which -I ignores,
    # would otherwise import the installed copy, or none inside bubblewrap, which binds only this package)
    home = str(Path(__file__).resolve().parents[3])
    argv = [sys.executable, "-I", "-B", "-c",
            f"import sys; sys.path.insert(0, {home!r}); from cortex_lsp.tools.sandbox.worker import main; main()"]
    if parent_pid is not None:
        argv += ["--parent-pid", str(parent_pid)]
    return argv


def _python_dirs() -> list[Path]:
    import cortex_lsp

    dirs = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent}
    dirs.add(Path(cortex_lsp.__file__).resolve().parent)
    for entry in sys.path:
        path = Path(entry) if entry else None
        if path and path.is_dir() and "site-packages" in path.parts:
            dirs.add(path.resolve())
    system = tuple(Path(d) for d in _SYSTEM_DIRS)
    kept = [d for d in dirs if not any(d == s or s in d.parents for s in system)]
    # Drop folders already covered by another bound folder.
    return sorted(d for d in kept if not any(o != d and o in d.parents for o in kept))


@dataclass
class RootBinds:
    """How the roots appear inside bubblewrap: bound read-only, hidden entries covered."""

    args: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the hidden entries covered (compared again before a waiting worker is used)
    hidden: frozenset[str] = frozenset()


def root_binds(roots: Sequence[Path]) -> RootBinds:
    """The bind arguments for ``roots`` (run off the event loop: it walks the folders)."""
    binds = RootBinds()
    for root in roots:
        real = Path(root).resolve()
        if not real.is_dir():
            continue
        hidden = hidden_entries(real)
        if hidden is None:
            binds.notes.append(
                f"{real} has more than {MAX_SCANNED_ENTRIES} entries, too many to hide its hidden files: "
                "it is not visible to the sandbox"
            )
            continue
        binds.args += ["--ro-bind", str(real), str(real)]
        for path, is_dir in sorted(hidden):
            binds.args += ["--tmpfs", path] if is_dir else ["--ro-bind", os.devnull, path]
        binds.hidden |= {path for path, _ in hidden}
    return binds


def hidden_now(roots: Sequence[Path]) -> frozenset[str] | None:
    """The hidden entries below ``roots`` right now (``None`` when a folder is too large to scan)."""
    found: set[str] = set()
    for root in roots:
        real = Path(root).resolve()
        if real.is_dir():
            hidden = hidden_entries(real)
            if hidden is None:
                return None
            found |= {path for path, _ in hidden}
    return frozenset(found)


@contextlib.contextmanager
def seccomp_pipe() -> Iterator[int | None]:
    """A pipe holding the seccomp program for bubblewrap's ``--seccomp FD`` (``None`` off x86_64)."""
    prog = seccomp.program(deny_exec=False)
    if prog is None:
        yield None
        return
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, prog)
        os.close(write_end)
        write_end = -1
        yield read_end
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def bwrap_argv(
    bwrap: str,
    command: Sequence[str],
    roots: Sequence[Path],
    *,
    binds: RootBinds | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bubblewrap command line that runs ``command`` isolated, with ``roots`` read-only (hidden
    entries covered: pass ``binds`` computed off the event loop, else they are computed here)."""
    argv = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid", str(SANDBOX_UID),
        "--gid", str(SANDBOX_UID),
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--clearenv",
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "HOME", "/tmp",
        "--hostname", "sandbox",
        "--proc", "/proc",
        "--dev", "/dev",
        "--tmpfs", "/tmp",
    ]
    for name in _SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            argv += ["--symlink", str(path.readlink()), name]
        elif path.is_dir():
            argv += ["--ro-bind", name, name]
    for name in _SYSTEM_FILES:
        argv += ["--ro-bind-try", name, name]
    for folder in _python_dirs():
        argv += ["--ro-bind", str(folder), str(folder)]
    argv += (binds if binds is not None else root_binds(roots)).args
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--chdir", "/tmp", "--", *command]
    return argv


def probe_bwrap(bwrap: str) -> tuple[bool, str]:
    """Can bubblewrap start an isolated Python here? (It needs user or mount namespaces.)"""
    try:
        with seccomp_pipe() as fd:
            argv = bwrap_argv(bwrap, [sys.executable, "-I", "-S", "-c", "pass"], [], seccomp_fd=fd)
            done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_SECONDS, check=False,
                                  pass_fds=() if fd is None else (fd,))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap could not start ({exc.__class__.__name__})"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = reason[-1] if reason else f"exit status {done.returncode}"
        return False, f"bubblewrap cannot create namespaces here ({last})"
    return True, "bubblewrap"


def plan_isolation(settings: Settings) -> IsolationPlan:
    """Decide how workers start, from ``settings.sandbox_isolation`` and what this machine offers."""
    mode = settings.sandbox_isolation
    if mode == "none":
        return IsolationPlan(None, "isolation turned off by sandbox_isolation: none", mode=mode)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        detail = "bubblewrap not installed"
        return IsolationPlan(None, detail, refuse=mode == "bwrap", mode=mode)
    ok, why = probe_bwrap(bwrap)
    if not ok:
        return IsolationPlan(None, why, refuse=mode == "bwrap", mode=mode)
    return IsolationPlan(bwrap, "bubblewrap", mode=mode)


def isolation_status(settings: Settings) -> tuple[bool, str]:
    """For ``cortex.doctor``: is the sandbox OS-isolated, and if not, what that means and how to fix it."""
    plan = plan_isolation(settings)
    if plan.bwrap:
        return True, (
            f"Python sandbox: RestrictedPython, an audit hook and a seccomp filter in a worker isolated by "
            f"bubblewrap ({plan.bwrap}: no network, read-only folder without its hidden files, own PID namespace)."
        )
    if plan.refuse:
        return False, (
            f"Python sandbox is off: sandbox_isolation is 'bwrap' but {plan.detail}. Fix: {INSTALL_HINT}."
        )
    if settings.sandbox_isolation == "none":
        return True, (
            f"Python sandbox without OS isolation (sandbox_isolation: none): only the in-process layers apply "
            f"({IN_PROCESS_LAYERS}). Set sandbox_isolation: auto and {INSTALL_HINT} to add it."
        )
    return False, (
        f"Python sandbox without OS isolation: {plan.detail}. Only the in-process layers apply "
        f"({IN_PROCESS_LAYERS}); the model may not run code on its own (python_exec is refused), and "
        f"'Run this' runs with a warning. Fix: {INSTALL_HINT}."
    )
