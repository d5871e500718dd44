"""The OS boundary for the sandbox worker: which one is in force, the bubblewrap command line, the doctor line.

**No code runs without an OS boundary.** :func:`plan_isolation` picks, in order:

1. **bubblewrap** (``boundary == "bwrap"``), with the seccomp program of :mod:`.seccomp`
   (``--seccomp FD``): no network (``--unshare-all``), no capabilities, uid/gid 65534 in its own user
   namespace, a new session, its own PID namespace (killing it ends every process the snippet could
   have made), ``--die-with-parent``, an empty root with only the system folders and the Python install
   bound read-only, a private ``/tmp``, no home folder, and the allowed roots bound read-only at their
   own paths **with every hidden entry covered** (a hidden folder by an empty tmpfs, a hidden file by
   ``/dev/null``, or a folder with many rebuilt as a tmpfs holding only its visible entries), in at most
   :data:`MAX_HIDING_MOUNTS` mounts (:func:`hiding_binds`), passed through ``--args FD``. A folder too
   large to scan for hidden entries (:data:`MAX_SCANNED_ENTRIES`) or to hide them in that many mounts
   is not bound at all.
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


#: The most mounts bubblewrap is asked for to hide one folder's hidden entries. Each mount makes its
#: start slower (bubblewrap re-reads the mount table for each: 500 cost about a second here, 2,000 about
#: twenty), and it takes at most 9,000 arguments in all. Past it a folder's subfolders holding the most
#: hidden entries are not shown at all; if even that is not enough, the folder is not bound.
MAX_HIDING_MOUNTS = 400


@dataclass
class RootBinds:
    """How the roots appear inside bubblewrap: bound read-only, hidden entries covered."""

    args: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the hidden entries covered (compared again before a waiting worker is used)
    hidden: frozenset[str] = frozenset()


@dataclass
class _Folder:
    """A folder of the root holding a hidden entry somewhere below (a *mixed* folder)."""

    path: str
    #: its hidden entries (path, is a folder), its mixed subfolders, its other visible entries
    #: (path, link target or ``None``)
    hidden: list[tuple[str, bool]] = field(default_factory=list)
    mixed: list[str] = field(default_factory=list)
    plain: list[tuple[str, str | None]] = field(default_factory=list)
    count: int = 0  # hidden entries below it, all levels
    cover: int = 0  # mounts to hide them when the folder is bound: one per hidden entry, and below
    rebuild: int = 0  # mounts to rebuild it instead: a tmpfs (made read-only), one per visible entry, and below
    dropped: bool = False

    def cost(self) -> int:
        return _EMPTY_COST if self.dropped else min(self.cover, self.rebuild)


#: An empty read-only folder in place of one: a tmpfs, then its remount read-only.
_EMPTY_COST = 2


def _mixed_folders(root: str, hidden: Sequence[tuple[str, bool]]) -> dict[str, _Folder]:
    """Every folder of ``root`` (``root`` too) with a hidden entry below it, with its children."""
    folders: dict[str, _Folder] = {}
    for path, is_dir in hidden:
        parent = os.path.dirname(path)
        folders.setdefault(parent, _Folder(parent)).hidden.append((path, is_dir))
        while parent != root and parent.startswith(root + os.sep):
            parent = os.path.dirname(parent)
            folders.setdefault(parent, _Folder(parent))
    for folder in folders.values():
        folder.count = len(folder.hidden)
        with contextlib.suppress(OSError), os.scandir(folder.path) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.path in folders and entry.is_dir(follow_symlinks=False):
                    folder.mixed.append(entry.path)
                else:
                    target = os.readlink(entry.path) if entry.is_symlink() else None
                    folder.plain.append((entry.path, target))
    return folders


def _costs(folders: dict[str, _Folder]) -> None:
    """Each mixed folder's mounts, deepest first: covering its hidden entries (it is visible through its
    parent's bind) or rebuilding it (an empty tmpfs with each visible entry bound again, no hidden one)."""
    for folder in sorted(folders.values(), key=lambda f: f.path.count(os.sep), reverse=True):
        below = [folders[m] for m in folder.mixed]
        folder.count = len(folder.hidden) + sum(f.count for f in below)
        folder.cover = len(folder.hidden) + sum(f.cost() for f in below)
        folder.rebuild = _EMPTY_COST + len(folder.plain) + sum(1 + f.cost() for f in below)


def _hiding_args(root: str, folders: dict[str, _Folder]) -> list[str]:
    """The mounts that bind ``root`` and hide its hidden entries, parents before their children; the
    tmpfs made for a folder is remounted read-only once everything inside it is in place."""
    args = ["--ro-bind", root, root]
    made: list[str] = []
    pending = [root]
    while pending:
        folder = folders[pending.pop()]
        if folder.dropped:
            args += ["--tmpfs", folder.path]
            made.append(folder.path)
            continue
        if folder.rebuild < folder.cover:
            args += ["--tmpfs", folder.path]
            made.append(folder.path)
            for path, target in folder.plain:
                args += ["--symlink", target, path] if target is not None else ["--ro-bind", path, path]
            for path in folder.mixed:
                args += ["--ro-bind", path, path]
        else:
            for path, is_dir in folder.hidden:
                args += ["--tmpfs", path] if is_dir else ["--ro-bind", os.devnull, path]
        pending += folder.mixed
    for path in made:
        args += ["--remount-ro", path]
    return args


def hiding_binds(root: str, hidden: Sequence[tuple[str, bool]], limit: int = MAX_HIDING_MOUNTS
                 ) -> tuple[list[str] | None, list[str]]:
    """The bubblewrap arguments that show ``root`` without its ``hidden`` entries in at most ``limit``
    mounts, and notes; ``None`` when even that can't be done (the folder is then not bound).

    Each folder holding a hidden entry is either bound with its hidden entries covered (one mount each)
    or rebuilt (a read-only tmpfs with each visible entry bound: none of the hidden ones exists there),
    whichever takes fewer mounts. Past ``limit``, the subfolders that cost the most are left out whole
    (an empty read-only tmpfs: nothing of them shows, hidden or not), until the rest fits."""
    if not hidden:
        return ["--ro-bind", root, root], []
    folders = _mixed_folders(root, hidden)
    _costs(folders)
    if 1 + folders[root].cost() > limit:
        excess = 1 + folders[root].cost() - limit
        for folder in sorted((f for f in folders.values() if f.path != root), key=lambda f: -f.cost()):
            if excess <= 0 or folder.cost() <= _EMPTY_COST:
                break
            parent = os.path.dirname(folder.path)
            while parent != root and not folders[parent].dropped:
                parent = os.path.dirname(parent)
            if parent != root:
                continue  # inside a folder already left out
            excess -= folder.cost() - _EMPTY_COST
            folder.dropped = True
        _costs(folders)
    if 1 + folders[root].cost() > limit:
        return None, [f"{root} has {len(hidden)} hidden entries, too many for bubblewrap to hide (more than "
                      f"{limit} mounts): it is not visible to the sandbox"]
    notes = [f"{os.path.relpath(f.path, root)}/ in {root} holds {f.count} hidden entries, too many to hide "
             "one by one: it is not visible to the sandbox" for f in sorted(folders.values(), key=lambda f: f.path)
             if f.dropped]
    return _hiding_args(root, folders), notes


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
        binds.hidden |= {path for path, _ in hidden}
        args, notes = hiding_binds(str(real), hidden)
        binds.notes += notes
        if args is not None:
            binds.args += args
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
def args_file(args: Sequence[str]) -> Iterator[int]:
    """A descriptor holding ``args`` for bubblewrap's ``--args FD`` (NUL-separated, in memory): however
    many binds a folder needs, the command line stays short (no ``E2BIG``)."""
    fd = os.memfd_create("bwrap-args")
    try:
        os.write(fd, b"".join(os.fsencode(arg) + b"\0" for arg in args))
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


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
    binds_fd: int | None = None,
) -> list[str]:
    """The bubblewrap command line that runs ``command`` isolated, with ``roots`` read-only (hidden
    entries covered: pass ``binds`` computed off the event loop, else they are computed here). With
    ``binds_fd`` (:func:`args_file` of the binds' arguments) the binds are read from it instead."""
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
    if binds_fd is not None:
        argv += ["--args", str(binds_fd)]
    else:
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
