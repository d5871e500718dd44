"""The OS layer's file and network rules: a Landlock ruleset the worker puts on itself (Linux ≥ 5.13).

Landlock is an unprivileged Linux security module: a process describes what it may still reach and
then restricts itself, for good (children included). The worker does it whether or not bubblewrap
runs, before any snippet (:func:`prepare` at start-up, :meth:`Confinement.confine` when the request
names the folder):

- **files: read-only, and only** the Python install (``sys.prefix``/``sys.base_prefix``, the package,
  the import path), the time-zone data, and the opened folder **without its hidden entries** (a folder
  holding a hidden entry somewhere below is granted directory listing and a rule per visible child,
  recursively, so ``.env``/``.git`` get no read right); symbolic links in the folder are not followed
  (their targets are reachable only when they are themselves inside the grant). No write, create,
  remove, rename, link, truncate or device ``ioctl`` right anywhere;
- **network** (ABI ≥ 4): no TCP ``bind``/``connect`` at all;
- **scopes** (ABI ≥ 6): no signals to processes outside the worker, no abstract unix sockets outside it.

The ABI is asked with ``landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)``; where the
kernel lacks Landlock (or it is not in the active security modules) :func:`abi` says why and the
worker, the result notes and the doctor report the layer as missing. The syscall numbers (444–446)
are the same on every architecture that has them (generic syscall table).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cortex_lsp.tools.sandbox.hidden import MAX_SCANNED_ENTRIES, hidden_entries

_NR_CREATE_RULESET, _NR_ADD_RULE, _NR_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# filesystem rights (ABI 1: bits 0-12; ABI 2: REFER; ABI 3: TRUNCATE; ABI 5: IOCTL_DEV)
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
READ_DIR_RIGHTS = FS_READ_FILE | FS_READ_DIR

#: Read-only system data a benign snippet may need (``time.localtime``): the time-zone database.
SYSTEM_READ = ("/usr/share/zoneinfo", "/etc/localtime")


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> tuple[int, str]:
    """The Landlock ABI version of this kernel (0 when unavailable) and a short reason when it is 0."""
    if not sys.platform.startswith("linux"):
        return 0, "not Linux"
    try:
        libc = _libc()
    except OSError as exc:
        return 0, f"no C library ({exc})"
    version = libc.syscall(ctypes.c_long(_NR_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if version < 0:
        code = ctypes.get_errno()
        if code == errno.ENOSYS:
            return 0, "the kernel has no Landlock (Linux ≥ 5.13 built with it)"
        if code == errno.EOPNOTSUPP:
            return 0, "Landlock is not enabled in this kernel's security modules (lsm=...,landlock)"
        return 0, f"Landlock could not be queried ({os.strerror(code)})"
    return int(version), ""


def handled_fs(version: int) -> int:
    rights = _FS_ABI1
    if version >= 2:
        rights |= FS_REFER
    if version >= 3:
        rights |= FS_TRUNCATE
    if version >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def describe(version: int) -> str:
    """What the ruleset of this ABI covers (for the ready message, the result notes and the doctor)."""
    parts = ["files read-only in the Python install and the folder without its hidden entries"]
    parts.append("no TCP bind/connect" if version >= 4 else "TCP not covered (ABI < 4; seccomp refuses sockets)")
    if version >= 6:
        parts.append("no signals or abstract sockets outside the worker")
    return f"ABI {version}: " + ", ".join(parts)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass
class Confinement:
    """A prepared ruleset (an open descriptor): add the folder, then restrict this process with it."""

    fd: int
    version: int
    #: entries of the folder that got no rule (hidden), kept for the tests and the notes
    hidden: int = 0
    notes: tuple[str, ...] = ()

    def allow(self, path: str, rights: int) -> bool:
        """Grant ``rights`` beneath ``path`` (not following a final symlink); ``False`` if it can't be."""
        flags = os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW
        try:
            target = os.open(path, flags)
        except OSError:
            return False
        try:
            attr = _PathBeneathAttr(rights, target)
            done = _libc().syscall(ctypes.c_long(_NR_ADD_RULE), ctypes.c_int(self.fd),
                                   ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr), ctypes.c_uint32(0))
            return done == 0
        finally:
            os.close(target)

    def add_folder(self, root: str) -> list[str]:
        """Read rights on ``root`` without its hidden entries; returns notes (empty when all is well)."""
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            return []
        hidden = hidden_entries(Path(real))
        if hidden is None:
            return [f"{real} has more than {MAX_SCANNED_ENTRIES} entries, too many to leave its hidden files "
                    "out: Landlock gives the sandbox no read right in it"]
        self.hidden += len(hidden)
        for path, rights in folder_rules(real, hidden):
            self.allow(path, rights)
        return []

    def restrict(self) -> None:
        """Put the ruleset on this process (and its future threads); raises ``OSError`` on failure."""
        libc = _libc()
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(ctypes.c_long(_NR_RESTRICT_SELF), ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = -1

    def confine(self, roots: Sequence[str]) -> list[str]:
        """Add the folders and restrict this process; returns notes. Raises ``OSError`` on failure."""
        notes: list[str] = []
        for root in roots:
            notes += self.add_folder(root)
        self.restrict()
        return notes


def folder_rules(root: str, hidden: Iterable[tuple[str, bool]]) -> list[tuple[str, int]]:
    """The (path, rights) rules that make ``root`` readable except its ``hidden`` entries.

    A folder with no hidden entry anywhere below gets one rule (read files and list, recursively); a
    folder holding one gets the right to list only (recursively: the names in a hidden folder can be
    listed, never read) and a rule per visible child; a symlink gets no rule.
    """
    mixed: set[str] = set()
    for path, _is_dir in hidden:
        parent = os.path.dirname(path)
        while parent.startswith(root) and parent not in mixed:
            mixed.add(parent)
            if parent == root:
                break
            parent = os.path.dirname(parent)
    rules: list[tuple[str, int]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        if folder not in mixed:
            rules.append((folder, READ_DIR_RIGHTS))
            continue
        rules.append((folder, FS_READ_DIR))
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(".") or entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    rules.append((entry.path, FS_READ_FILE))
    return rules


def prepare(read_dirs: Sequence[str]) -> tuple[Confinement | None, str]:
    """A ruleset (no writes anywhere; TCP and scopes by ABI) granting read-only ``read_dirs`` and the
    system's time-zone data. Returns it with ``"on (...)"``, or ``None`` with ``"missing (why)"``."""
    version, why = abi()
    if version <= 0:
        return None, f"missing ({why})"
    attr = _RulesetAttr(handled_fs(version), 0, 0)
    size = 8
    if version >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if version >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    libc = _libc()
    fd = libc.syscall(ctypes.c_long(_NR_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                      ctypes.c_uint32(0))
    if fd < 0:
        return None, f"missing (landlock_create_ruleset: {os.strerror(ctypes.get_errno())})"
    confinement = Confinement(fd=int(fd), version=version)
    for folder in read_dirs:
        confinement.allow(os.path.realpath(folder), READ_DIR_RIGHTS)
    for path in SYSTEM_READ:
        real = os.path.realpath(path)
        confinement.allow(real, READ_DIR_RIGHTS if os.path.isdir(real) else FS_READ_FILE)
    return confinement, f"on ({describe(version)})"
