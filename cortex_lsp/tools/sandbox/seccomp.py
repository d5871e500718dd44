"""The OS layer's syscall filter: a classic-BPF seccomp program, written here, for x86_64 Linux.

The same program is used twice: bubblewrap applies it (``--seccomp FD``) before it starts the worker's
interpreter, and the worker installs it again itself (``prctl(PR_SET_SECCOMP)``) before any snippet runs,
this time also denying ``execve`` — so the filter is there even where bubblewrap is not.

The program checks the architecture first (anything but x86_64, and the x32 ABI, is killed), then
answers ``EPERM`` to the syscalls a snippet never needs:

- network: ``socket``, ``socketpair``, ``connect``, ``bind``, ``listen``, ``accept``...;
- new processes: ``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``, ``clone3`` (``ENOSYS``, so a
  libc falls back to ``clone``), and ``execve``/``execveat`` in the worker's own copy;
- signals to others: ``kill``, ``tkill``, ``tgkill``, ``pidfd_*``, ``rt_(tg)sigqueueinfo``;
- changing files: ``open``/``openat`` with a write, create, truncate or append flag, ``creat``,
  ``openat2`` (``ENOSYS``), ``rename*``, ``unlink*``, ``rmdir``, ``mkdir*``, ``mknod*``, ``link*``,
  ``symlink*``, ``truncate``, ``ftruncate``, ``fallocate``, ``chmod``/``chown`` families, ``utime*``,
  ``*xattr`` writes, and a shared writable ``mmap``;
- the kernel's sharp edges: ``ptrace``, ``process_vm_readv/writev``, ``mount`` and the new mount API,
  ``umount2``, ``pivot_root``, ``chroot``, ``unshare``, ``setns``, ``kexec_*``, ``bpf``,
  ``perf_event_open``, ``keyctl``/``add_key``/``request_key``, ``personality``, ``userfaultfd``,
  ``io_uring_*``, ``*_module``, ``reboot``, ``swapon/off``, ``iopl``/``ioperm``, ``syslog``, ``acct``,
  clock setting, ``open_by_handle_at``, ``kcmp``, ``memfd_create``.

Elsewhere (another architecture) :func:`program` returns ``None`` and the caller says that this layer
is missing.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000
PROT_WRITE = 0x2
MAP_SHARED = 0x1
_WRITE_OPEN_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_OFF_NR, _OFF_ARCH = 0, 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index  # the low 32 bits of args[index] (little-endian)


# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

#: x86_64 syscall numbers answered with EPERM (name -> number)
DENIED: dict[str, int] = {
    "socket": 41, "connect": 42, "accept": 43, "sendto": 44, "recvfrom": 45, "sendmsg": 46, "recvmsg": 47,
    "shutdown": 48, "bind": 49, "listen": 50, "getsockname": 51, "getpeername": 52, "socketpair": 53,
    "setsockopt": 54, "getsockopt": 55, "fork": 57, "vfork": 58, "kill": 62,
    "truncate": 76, "ftruncate": 77, "rename": 82, "mkdir": 83, "rmdir": 84, "creat": 85, "link": 86,
    "unlink": 87, "symlink": 88, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94,
    "ptrace": 101, "syslog": 103, "rt_sigqueueinfo": 129, "utime": 132, "mknod": 133, "personality": 135,
    "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172,
    "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "pivot_root": 155,
    "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "tkill": 200, "clock_settime": 227, "tgkill": 234, "utimes": 235,
    "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250, "mkdirat": 258, "mknodat": 259,
    "fchownat": 260, "futimesat": 261, "unlinkat": 263, "renameat": 264, "linkat": 265, "symlinkat": 266,
    "fchmodat": 268, "unshare": 272, "move_pages": 279, "utimensat": 280, "fallocate": 285, "accept4": 288,
    "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "recvmmsg": 299, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "sendmmsg": 307, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
    "renameat2": 316, "memfd_create": 319, "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "pidfd_getfd": 438, "process_madvise": 440,
}
#: answered with ENOSYS, so the C library falls back to an older call the filter checks
NOT_IMPLEMENTED: dict[str, int] = {"clone3": 435, "openat2": 437}
EXEC: dict[str, int] = {"execve": 59, "execveat": 322}
_NR_OPEN, _NR_OPENAT, _NR_MMAP, _NR_CLONE = 2, 257, 9, 56


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _ret(value: int) -> bytes:
    return _insn(_RET_K, 0, 0, value)


def _errno(number: int) -> int:
    return SECCOMP_RET_ERRNO | (number & 0xFFFF)


def program(*, deny_exec: bool) -> bytes | None:
    """The filter as packed ``struct sock_filter`` entries, or ``None`` off x86_64."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    eperm = _ret(_errno(errno.EPERM))
    insns: list[bytes] = [
        _insn(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _ret(SECCOMP_RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, _OFF_NR),
        _insn(_JGE_K, 0, 1, X32_SYSCALL_BIT),
        _ret(SECCOMP_RET_KILL_PROCESS),
    ]
    denied = dict(DENIED)
    if deny_exec:
        denied.update(EXEC)
    for number in sorted(denied.values()):
        insns += [_insn(_JEQ_K, 0, 1, number), eperm]
    for number in sorted(NOT_IMPLEMENTED.values()):
        insns += [_insn(_JEQ_K, 0, 1, number), _ret(_errno(errno.ENOSYS))]
    allow = _ret(SECCOMP_RET_ALLOW)
    # open(path, flags): args[1]; openat(dirfd, path, flags): args[2]
    for number, arg in ((_NR_OPEN, 1), (_NR_OPENAT, 2)):
        block = [_insn(_LD_W_ABS, 0, 0, _arg_low(arg)), _insn(_JSET_K, 0, 1, _WRITE_OPEN_FLAGS), eperm, allow]
        insns += [_insn(_JEQ_K, 0, len(block), number), *block]
    # mmap(addr, len, prot, flags, fd, off): refuse PROT_WRITE together with MAP_SHARED
    block = [
        _insn(_LD_W_ABS, 0, 0, _arg_low(2)), _insn(_JSET_K, 0, 3, PROT_WRITE),
        _insn(_LD_W_ABS, 0, 0, _arg_low(3)), _insn(_JSET_K, 0, 1, MAP_SHARED), eperm, allow,
    ]
    insns += [_insn(_JEQ_K, 0, len(block), _NR_MMAP), *block]
    # clone(flags, ...): threads only
    block = [_insn(_LD_W_ABS, 0, 0, _arg_low(0)), _insn(_JSET_K, 1, 0, CLONE_THREAD), eperm, allow]
    insns += [_insn(_JEQ_K, 0, len(block), _NR_CLONE), *block]
    insns.append(allow)
    return b"".join(insns)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def install(prog: bytes) -> None:
    """Install ``prog`` on this process (and its future threads); raises ``OSError`` on failure."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(prog, len(prog))
    fprog = _SockFprog(len(prog) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
