"""The OS layer's syscall filter, built with libseccomp (through ``pyseccomp``) for the machine's architecture.

libseccomp turns one list of rules into the classic-BPF program of any architecture it knows (x86_64,
aarch64, arm, riscv64, ppc64le, s390x...): it checks the architecture field, maps every syscall name to
that architecture's number (a name the architecture lacks, such as ``open`` on aarch64, is left out),
and on x86_64 kills the x32 ABI. :func:`program` exports the compiled program
(``seccomp_export_bpf``); the server builds it once per profile and

- bubblewrap applies the ``bwrap`` profile (``--seccomp FD``) before it starts the worker's interpreter;
- the worker installs the ``worker`` profile itself (``prctl(PR_SET_SECCOMP)``, :func:`install`) before any
  snippet, with or without bubblewrap. That copy also denies ``execve``/``execveat`` and every way to
  get a signal handler run or a timer armed (``rt_sigaction``, ``sigaction``, ``signal``, ``alarm``,
  ``setitimer``, ``timer_create``, ``timer_settime``): a snippet can never have code called with an
  interrupted frame.

Both profiles answer ``EPERM`` to the syscalls a snippet never needs (:data:`DENIED`):

- network: ``socket``, ``socketpair``, ``connect``, ``bind``, ``listen``, ``accept``...;
- new processes: ``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``, ``clone3`` (``ENOSYS``, so a
  C library falls back to ``clone``);
- signals to others: ``kill``, ``tkill``, ``tgkill``, ``pidfd_*``, ``rt_(tg)sigqueueinfo``;
- other processes' limits, priority and CPUs: ``prlimit64``, ``setpriority``, ``sched_set*``,
  ``ioprio_set``, ``migrate_pages`` naming any process but the caller (:data:`OTHER_PROCESS_ARG`);
- changing files: ``open``/``openat`` with a write, create, truncate or append flag, ``creat``,
  ``openat2`` (``ENOSYS``), ``rename*``, ``unlink*``, ``rmdir``, ``mkdir*``, ``mknod*``, ``link*``,
  ``symlink*``, ``truncate``, ``ftruncate``, ``fallocate``, ``chmod``/``chown`` families, ``utime*``,
  ``*xattr`` writes, and a shared writable ``mmap``;
- the kernel's sharp edges: ``ptrace``, ``process_vm_readv/writev``, ``mount`` and the new mount API,
  ``umount2``, ``pivot_root``, ``chroot``, ``unshare``, ``setns``, ``kexec_*``, ``bpf``,
  ``perf_event_open``, ``keyctl``/``add_key``/``request_key``, ``personality``, ``userfaultfd``,
  ``io_uring_*``, ``*_module``, ``reboot``, ``swapon/off``, ``iopl``/``ioperm``, ``syslog``, ``acct``,
  clock setting, ``open_by_handle_at``, ``kcmp``, ``memfd_create``.

Where libseccomp is missing (the ``libseccomp2`` package) or the kernel has no seccomp filters,
:func:`available` says why; without bubblewrap the sandbox then refuses to run code (see
:mod:`.isolation`).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
from typing import Any

CLONE_THREAD = 0x00010000
PROT_WRITE = 0x2
MAP_SHARED = 0x1
#: O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND (the same values on x86_64 and the generic table)
WRITE_OPEN_FLAGS = (0o1, 0o2, 0o100, 0o1000, 0o2000)

#: answered with EPERM in both profiles
DENIED: tuple[str, ...] = (
    "socket", "socketpair", "connect", "accept", "accept4", "sendto", "recvfrom", "sendmsg", "recvmsg",
    "sendmmsg", "recvmmsg", "shutdown", "bind", "listen", "getsockname", "getpeername", "setsockopt",
    "getsockopt", "fork", "vfork", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
    "pidfd_send_signal", "pidfd_open", "pidfd_getfd",
    "truncate", "ftruncate", "fallocate", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "creat", "link", "linkat", "unlink", "unlinkat", "symlink", "symlinkat", "mknod", "mknodat",
    "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat", "utime", "utimes", "futimesat",
    "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "move_pages", "kcmp",
    "syslog", "personality", "adjtimex", "clock_adjtime", "clock_settime", "settimeofday", "chroot", "acct",
    "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "swapon", "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm", "init_module",
    "finit_module", "delete_module", "quotactl", "kexec_load", "kexec_file_load", "add_key", "request_key",
    "keyctl", "unshare", "setns", "perf_event_open", "name_to_handle_at", "open_by_handle_at",
    "memfd_create", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
)
#: calls that act on the process their argument names: refused unless it is 0 (the caller), so a worker
#: can't lower the server's limits, renice it or pin it to one CPU (the syscall -> the argument's index)
OTHER_PROCESS_ARG: dict[str, int] = {
    "prlimit64": 0, "setpriority": 1, "sched_setaffinity": 0, "sched_setscheduler": 0, "sched_setparam": 0,
    "sched_setattr": 0, "ioprio_set": 1, "migrate_pages": 0,
}
#: answered with ENOSYS, so the C library falls back to an older call the filter checks
NOT_IMPLEMENTED: tuple[str, ...] = ("clone3", "openat2")
#: the worker's own copy only: no new program, no signal handler, no timer
WORKER_ONLY: tuple[str, ...] = (
    "execve", "execveat", "rt_sigaction", "sigaction", "signal", "alarm", "setitimer", "timer_create",
    "timer_settime",
)

#: platform.machine() -> libseccomp's architecture token, for the architectures the tests cover by name
ARCHES: dict[str, int] = {
    "x86_64": 0xC000003E, "amd64": 0xC000003E,  # AUDIT_ARCH_X86_64
    "aarch64": 0xC00000B7, "arm64": 0xC00000B7,  # AUDIT_ARCH_AARCH64
}


def _library() -> Any:
    """The ``pyseccomp`` module (ctypes over the system's ``libseccomp.so.2``); raises ``OSError`` when
    the library is missing."""
    try:
        import pyseccomp
    except ImportError as exc:  # the Python package
        raise OSError(errno.ENOENT, f"the pyseccomp package is missing ({exc})") from None
    except RuntimeError as exc:  # pyseccomp raises this when libseccomp.so.2 is not found
        raise OSError(errno.ENOENT, f"libseccomp is missing ({exc}); install libseccomp2") from None
    return pyseccomp


def build(*, worker: bool, arch: str | None = None) -> Any:
    """The libseccomp filter (a ``pyseccomp.SyscallFilter``) of one profile for ``arch`` (a
    ``platform.machine()`` name; the machine's own when ``None``)."""
    lib = _library()
    eperm, enosys = lib.ERRNO(errno.EPERM), lib.ERRNO(errno.ENOSYS)
    rules = lib.SyscallFilter(lib.ALLOW)
    rules.set_attr(lib.Attr.ACT_BADARCH, lib.KILL_PROCESS)
    if arch is not None and ARCHES.get(arch.lower()) != lib.system_arch():
        token = ARCHES.get(arch.lower())
        if token is None:
            raise ValueError(f"unknown architecture {arch!r}")
        rules.add_arch(token)
        rules.remove_arch(lib.Arch.NATIVE)

    def add(action: int, name: str, *args: Any) -> None:
        number = lib.resolve_syscall(lib.Arch.NATIVE, name)
        if number == -1:  # unknown to this libseccomp: nothing to deny
            return
        rules.add_rule(action, number, *args)

    for name in (*DENIED, *(WORKER_ONLY if worker else ())):
        add(eperm, name)
    for name in NOT_IMPLEMENTED:
        add(enosys, name)
    # open(path, flags) and openat(dirfd, path, flags): any write/create/truncate/append bit
    for name, index in (("open", 1), ("openat", 2)):
        for bit in WRITE_OPEN_FLAGS:
            add(eperm, name, lib.Arg(index, lib.MASKED_EQ, bit, bit))
    # mmap(addr, len, prot, flags, fd, off): PROT_WRITE together with MAP_SHARED
    add(eperm, "mmap", lib.Arg(2, lib.MASKED_EQ, PROT_WRITE, PROT_WRITE),
        lib.Arg(3, lib.MASKED_EQ, MAP_SHARED, MAP_SHARED))
    # clone(flags, ...): threads only
    add(eperm, "clone", lib.Arg(0, lib.MASKED_EQ, CLONE_THREAD, 0))
    # another process's limits, priority, scheduling and CPUs (pid/who 0 is the caller itself)
    for name, index in OTHER_PROCESS_ARG.items():
        add(eperm, name, lib.Arg(index, lib.NE, 0))
    return rules


def _export(rules: Any, kind: str) -> bytes:
    fd = os.memfd_create("cortex-seccomp", os.MFD_CLOEXEC)
    with open(fd, "w+b", closefd=True) as buffer:
        (rules.export_bpf if kind == "bpf" else rules.export_pfc)(buffer)
        buffer.seek(0)
        return buffer.read()


@functools.lru_cache(maxsize=8)
def program(*, worker: bool, arch: str | None = None) -> bytes:
    """The compiled classic-BPF program (packed ``struct sock_filter`` entries) of one profile.
    Raises ``OSError`` when libseccomp is missing."""
    return _export(build(worker=worker, arch=arch), "bpf")


def pseudo_code(*, worker: bool, arch: str | None = None) -> str:
    """libseccomp's readable listing of the same filter (for the tests and for debugging)."""
    return _export(build(worker=worker, arch=arch), "pfc").decode("utf-8")


_PR_GET_SECCOMP = 21
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


@functools.lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """Can this host filter the worker's syscalls? (libseccomp present, the kernel has seccomp filters.)"""
    if not platform.system() == "Linux":
        return False, "not Linux"
    try:
        program(worker=True)
    except (OSError, ValueError) as exc:
        return False, str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_GET_SECCOMP, 0, 0, 0, 0) < 0:
        return False, f"the kernel has no seccomp ({os.strerror(ctypes.get_errno())})"
    return True, "libseccomp"


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(prog: bytes) -> None:
    """Install ``prog`` on this process (and its future threads); raises ``OSError`` on failure."""
    if not prog or len(prog) % 8:
        raise OSError(errno.EINVAL, "not a seccomp program")
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(prog, len(prog))
    fprog = _SockFprog(len(prog) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")

