"""OS isolation for the sandbox worker: the bubblewrap command line, detection, and the doctor check.

With bubblewrap the worker runs with no network (``--unshare-net`` via ``--unshare-all``), no
capabilities, a new session, its own PID namespace, ``--die-with-parent``, an empty root with only the
system folders and the Python install bound read-only, a private ``/tmp``, no home folder, and the
allowed roots bound read-only at their own paths. ``sandbox_isolation``: ``auto`` uses bubblewrap when it
works and says so when it does not; ``bwrap`` refuses to run without it; ``none`` never uses it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cortex_lsp.config import Settings

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap)"
)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
PROBE_TIMEOUT_SECONDS = 15.0


@dataclass(frozen=True)
class IsolationPlan:
    """How workers will be started. ``refuse`` is set when isolation is required but unavailable."""

    bwrap: str | None
    detail: str
    refuse: bool = False

    @property
    def label(self) -> str:
        return "bwrap" if self.bwrap else f"none ({self.detail})"


def worker_command(parent_pid: int | None = None) -> list[str]:
    """The Python command of a worker (without any isolation wrapper)."""
    argv = [sys.executable, "-I", "-B", "-c", "from cortex_lsp.tools.sandbox.worker import main; main()"]
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


def bwrap_argv(bwrap: str, command: Sequence[str], roots: Sequence[Path]) -> list[str]:
    """The bubblewrap command line that runs ``command`` isolated, with ``roots`` read-only."""
    argv = [
        bwrap,
        "--unshare-all",
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
    for root in roots:
        real = Path(root).resolve()
        if real.is_dir():
            argv += ["--ro-bind", str(real), str(real)]
    argv += ["--chdir", "/tmp", "--", *command]
    return argv


def probe_bwrap(bwrap: str) -> tuple[bool, str]:
    """Can bubblewrap start an isolated Python here? (It needs user or mount namespaces.)"""
    argv = bwrap_argv(bwrap, [sys.executable, "-I", "-S", "-c", "pass"], [])
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_SECONDS, check=False)
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
        return IsolationPlan(None, "isolation turned off by sandbox_isolation: none")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        detail = "bubblewrap not installed"
        return IsolationPlan(None, detail, refuse=mode == "bwrap")
    ok, why = probe_bwrap(bwrap)
    if not ok:
        return IsolationPlan(None, why, refuse=mode == "bwrap")
    return IsolationPlan(bwrap, "bubblewrap")


def isolation_status(settings: Settings) -> tuple[bool, str]:
    """For ``cortex.doctor``: is the sandbox OS-isolated, and if not, how to fix it."""
    plan = plan_isolation(settings)
    if plan.bwrap:
        return True, f"Python sandbox: RestrictedPython in a worker isolated by bubblewrap ({plan.bwrap})."
    if settings.sandbox_isolation == "none":
        return True, (
            "Python sandbox: RestrictedPython in a separate worker without OS isolation "
            "(sandbox_isolation: none). Set sandbox_isolation: auto and " + INSTALL_HINT + " to add it."
        )
    if plan.refuse:
        return False, (
            f"Python sandbox is off: sandbox_isolation is 'bwrap' but {plan.detail}. Fix: {INSTALL_HINT}."
        )
    return False, (
        f"Python sandbox runs without OS isolation: {plan.detail}. RestrictedPython guards still apply. "
        f"Fix: {INSTALL_HINT}."
    )
