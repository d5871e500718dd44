"""The OS boundary for the sandbox worker: which one is in force, the bubblewrap command line, the doctor line.

**No code runs without an OS boundary.** :func:`plan_isolation` picks, in order:

1. **bubblewrap** (``boundary == "bwrap"``), with the seccomp program of :mod:`.seccomp`
   (``--seccomp FD``): no network (``--unshare-all``), no capabilities, uid/gid 65534 in its own user
   namespace, a new session, its own PID namespace (killing it ends every process the snippet could
   have made), ``--die-with-parent``, an empty root with only the system folders and the Python install
   bound read-only, a private ``/tmp``, no home folder, and the allowed roots bound read-only at their
   own paths **with every hidden entry covered** (a hidden folder by an empty tmpfs, a hidden file by
   ``/dev/null``). A folder too large to scan for hidden entries (:data:`MAX_SCANNED_ENTRIES`) is not
   bound at all.
2. without bubblewrap (not installed, or no namespaces here), **Landlock and seccomp together**
   (``boundary == "landlock"``): the worker restricts itself (read-only: the folder without its hidden
   entries and the interpreter; no write anywhere; no TCP) and installs the syscall filter. A worker
   that reports either layer missing is not given the code.
3. otherwise **nothing runs**: ``cortex.run`` and ``python_exec`` refuse with one sentence saying what
   to install. The only exception is ``sandbox_isolation: none``, set by the user: then code runs with
   whatever layers the worker can put in place, and every result says "not isolated".

``sandbox_isolation: bwrap`` accepts only the first.
"""

from __future__ import annotations

import contextlib
import importlib.util
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
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`)"
)
SECCOMP_HINT = (
    "install libseccomp (Debian/Ubuntu: `sudo apt-get install libseccomp2`; Fedora: `sudo dnf install libseccomp`)"
)
NOT_ISOLATED = "not isolated"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
PROBE_TIMEOUT_SECONDS = 15.0
SANDBOX_UID = 65534
IN_PROCESS_LAYERS = "RestrictedPython guards, the audit hook and resource limits"


@dataclass(frozen=True)
class IsolationPlan:
    """How workers will be started. ``boundary``: ``"bwrap"``, ``"landlock"`` (Landlock and seccomp in the
    worker) or ``"none"`` (only with ``sandbox_isolation: none``). ``refuse`` is set when no boundary the
    setting accepts is available (``detail`` then says why, ``fix`` what to install); ``mode`` is the
    ``sandbox_isolation`` setting it was made from."""

    bwrap: str | None
    detail: str
    refuse: bool = False
    mode: str = "auto"
    boundary: str = "none"
    fix: str = ""

    @property
    def label(self) -> str:
        """The ``isolation`` field of every result."""
        if self.boundary == "bwrap":
            return "bwrap"
        if self.boundary == "landlock":
            return "landlock+seccomp"
        return f"{NOT_ISOLATED} ({self.detail})"

    @property
    def model_code_allowed(self) -> bool:
        """May the model run code on its own (``python_exec``)? Whenever code may run at all."""
        return not self.refuse

    @property
    def refusal(self) -> str:
        """The one sentence a refused run gets."""
        return f"Not run: no OS boundary for code here ({self.detail}); {self.fix}."

    @property
    def warning(self) -> str | None:
        """The plain sentence every result, the doctor and the session's first run carry when code runs
        without an OS boundary (``sandbox_isolation: none``); ``None`` otherwise."""
        if self.boundary != "none" or self.refuse:
            return None
        return (
            f"Code is {NOT_ISOLATED} (sandbox_isolation: none): only the in-process layers are guaranteed "
            f"({IN_PROCESS_LAYERS}); the worker adds Landlock and seccomp where this host has them. "
            "Set sandbox_isolation: auto to require an OS boundary."
        )


def describe_boundary(plan: IsolationPlan) -> str:
    """The boundary in force, in words (doctor, ready notes)."""
    if plan.boundary == "bwrap":
        return (f"bubblewrap ({plan.bwrap}: no network, read-only folder without its hidden files, own PID "
                "namespace) with the libseccomp filter")
    if plan.boundary == "landlock":
        version, _why = landlock.abi()
        return (f"Landlock ({landlock.describe(version)}) and the libseccomp filter, in the worker itself "
                f"(bubblewrap: {plan.detail})")
    return plan.detail


def package_root() -> str:
    """The folder holding the ``cortex_lsp`` package this server runs (so the worker runs the same code,
    whatever ``-I`` and an editable install would otherwise pick)."""
    import cortex_lsp

    return str(Path(cortex_lsp.__file__).resolve().parent.parent)


def worker_command(parent_pid: int | None = None) -> list[str]:
    """The Python command of a worker (without any isolation wrapper)."""
    start = (f"import sys; sys.path.insert(0, {package_root()!r}); "
             "from cortex_lsp.tools.sandbox.worker import main; main()")
    argv = [sys.executable, "-I", "-B", "-c", start]
    if parent_pid is not None:
        argv += ["--parent-pid", str(parent_pid)]
    return argv


#: the third-party packages the worker imports (bound wherever they are installed)
WORKER_PACKAGES = ("RestrictedPython",)


def _python_dirs() -> list[Path]:
    import cortex_lsp

    dirs = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent}
    dirs.add(Path(cortex_lsp.__file__).resolve().parent)
    for entry in sys.path:
        path = Path(entry) if entry else None
        if path and path.is_dir() and "site-packages" in path.parts:
            dirs.add(path.resolve())
    for name in WORKER_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            dirs.add(Path(spec.origin).resolve().parent)
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
    """A pipe holding the seccomp program for bubblewrap's ``--seccomp FD`` (``None`` without libseccomp)."""
    try:
        prog = seccomp.program(worker=False)
    except (OSError, ValueError):
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


def _without_bwrap(mode: str, bwrap_detail: str) -> IsolationPlan:
    """No bubblewrap: Landlock and seccomp in the worker, or a refusal that says what to install."""
    if mode == "bwrap":
        return IsolationPlan(None, f"{bwrap_detail}, and sandbox_isolation is 'bwrap'", refuse=True, mode=mode,
                             fix=INSTALL_HINT)
    filtered, filter_why = seccomp.available()
    version, landlock_why = landlock.abi()
    if filtered and version > 0:
        return IsolationPlan(None, bwrap_detail, mode=mode, boundary="landlock")
    missing = [bwrap_detail]
    if version <= 0:
        missing.append(f"no Landlock: {landlock_why}")
    if not filtered:
        missing.append(f"no seccomp filter: {filter_why}")
    if not filtered:
        fix = SECCOMP_HINT + (f", and {INSTALL_HINT}" if "not installed" in bwrap_detail else "")
    elif "not installed" in bwrap_detail:
        fix = INSTALL_HINT
    else:
        fix = ("let bubblewrap create user namespaces (`sudo sysctl -w kernel.unprivileged_userns_clone=1`, or run "
               "outside a container that forbids them), or use Linux 5.13 or later with Landlock enabled")
    return IsolationPlan(None, "; ".join(missing), refuse=True, mode=mode, fix=fix)


def plan_isolation(settings: Settings) -> IsolationPlan:
    """Decide how workers start, from ``settings.sandbox_isolation`` and what this machine offers."""
    mode = settings.sandbox_isolation
    if mode == "none":
        return IsolationPlan(None, "sandbox_isolation: none", mode=mode)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return _without_bwrap(mode, "bubblewrap not installed")
    filtered, filter_why = seccomp.available()
    if not filtered:  # bubblewrap always runs with the syscall filter
        return IsolationPlan(None, f"no seccomp filter for bubblewrap: {filter_why}", refuse=True, mode=mode,
                             fix=SECCOMP_HINT)
    ok, why = probe_bwrap(bwrap)
    if not ok:
        return _without_bwrap(mode, why)
    return IsolationPlan(bwrap, "bubblewrap", mode=mode, boundary="bwrap")


def isolation_status(settings: Settings) -> tuple[bool, str]:
    """For ``cortex.doctor``: which OS boundary is in force, and if none, what that means and how to fix it."""
    plan = plan_isolation(settings)
    if plan.refuse:
        return False, (f"Python sandbox refuses to run code: no OS boundary ({plan.detail}). Fix: {plan.fix}.")
    if plan.boundary == "none":
        return True, plan.warning or ""
    return True, (f"Python sandbox: RestrictedPython and an audit hook in a worker confined by "
                  f"{describe_boundary(plan)}.")
