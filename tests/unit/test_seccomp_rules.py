"""The libseccomp filter, checked for x86_64 and aarch64 on any machine.

libseccomp builds the program for a foreign architecture (``seccomp_arch_add``/``remove``) and exports
it (``seccomp_export_bpf``); a small classic-BPF interpreter then runs it on ``struct seccomp_data``
for each architecture's own syscall numbers. The numbers below are the kernel's (x86_64: the 64-bit
table; aarch64: the generic table).
"""

from __future__ import annotations

import errno
import struct

import pytest

from cortex_lsp.tools.sandbox import seccomp

ALLOW, KILL_PROCESS = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
O_WRONLY, O_CREAT, O_TRUNC, O_APPEND, O_RDWR = 0o1, 0o100, 0o1000, 0o2000, 0o2
CLONE_THREAD, PROT_WRITE, MAP_SHARED, MAP_PRIVATE = 0x10000, 0x2, 0x1, 0x2

#: (name, {arch: number}, args, worker profile answer, bubblewrap profile answer)
CASES: list[tuple[str, dict[str, int], tuple[int, ...], int, int]] = [
    ("socket", {"x86_64": 41, "aarch64": 198}, (2, 1, 0), EPERM, EPERM),
    ("connect", {"x86_64": 42, "aarch64": 203}, (), EPERM, EPERM),
    ("sendto", {"x86_64": 44, "aarch64": 206}, (), EPERM, EPERM),
    ("openat-read", {"x86_64": 257, "aarch64": 56}, (0, 0, 0), ALLOW, ALLOW),
    ("openat-write", {"x86_64": 257, "aarch64": 56}, (0, 0, O_WRONLY), EPERM, EPERM),
    ("openat-rdwr", {"x86_64": 257, "aarch64": 56}, (0, 0, O_RDWR), EPERM, EPERM),
    ("openat-create", {"x86_64": 257, "aarch64": 56}, (0, 0, O_CREAT), EPERM, EPERM),
    ("openat-trunc", {"x86_64": 257, "aarch64": 56}, (0, 0, O_TRUNC), EPERM, EPERM),
    ("openat-append", {"x86_64": 257, "aarch64": 56}, (0, 0, O_APPEND), EPERM, EPERM),
    ("openat2", {"x86_64": 437, "aarch64": 437}, (), ENOSYS, ENOSYS),
    ("read", {"x86_64": 0, "aarch64": 63}, (), ALLOW, ALLOW),
    ("unlinkat", {"x86_64": 263, "aarch64": 35}, (), EPERM, EPERM),
    ("renameat2", {"x86_64": 316, "aarch64": 276}, (), EPERM, EPERM),
    ("clone-thread", {"x86_64": 56, "aarch64": 220}, (CLONE_THREAD | 0x100,), ALLOW, ALLOW),
    ("clone-process", {"x86_64": 56, "aarch64": 220}, (0x11,), EPERM, EPERM),
    ("clone3", {"x86_64": 435, "aarch64": 435}, (), ENOSYS, ENOSYS),
    ("execve", {"x86_64": 59, "aarch64": 221}, (), EPERM, ALLOW),
    ("kill", {"x86_64": 62, "aarch64": 129}, (), EPERM, EPERM),
    ("rt_sigaction", {"x86_64": 13, "aarch64": 134}, (), EPERM, ALLOW),
    ("setitimer", {"x86_64": 38, "aarch64": 103}, (), EPERM, ALLOW),
    ("timer_create", {"x86_64": 222, "aarch64": 107}, (), EPERM, ALLOW),
    ("mmap-shared-write", {"x86_64": 9, "aarch64": 222}, (0, 4096, PROT_WRITE, MAP_SHARED), EPERM, EPERM),
    ("mmap-private-write", {"x86_64": 9, "aarch64": 222}, (0, 4096, PROT_WRITE, MAP_PRIVATE), ALLOW, ALLOW),
    ("ptrace", {"x86_64": 101, "aarch64": 117}, (), EPERM, EPERM),
    ("unshare", {"x86_64": 272, "aarch64": 97}, (), EPERM, EPERM),
    ("io_uring_setup", {"x86_64": 425, "aarch64": 425}, (), EPERM, EPERM),
    ("bpf", {"x86_64": 321, "aarch64": 280}, (), EPERM, EPERM),
]


def run_bpf(program: bytes, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """Run a classic-BPF seccomp program on one ``struct seccomp_data`` (the subset libseccomp emits)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * 6)[:6])
    insns = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, acc, index = 0, 0, 0
    for _step in range(10_000):
        code, jt, jf, k = insns[pc]
        kind = code & 0x07
        if kind == 0x00:  # BPF_LD
            assert code == 0x20, hex(code)  # BPF_LD | BPF_W | BPF_ABS
            acc = struct.unpack_from("<I", data, k)[0]
        elif kind == 0x01:  # BPF_LDX
            index = k if code == 0x01 else index
        elif kind == 0x02:  # BPF_ST: scratch memory, not needed for the decisions
            pass
        elif kind == 0x04:  # BPF_ALU
            operand = index if code & 0x08 else k
            ops = {0x00: acc + operand, 0x10: acc - operand, 0x40: acc | operand, 0x50: acc & operand}
            acc = ops[code & 0xF0] & 0xFFFFFFFF
        elif kind == 0x05:  # BPF_JMP
            operand = index if code & 0x08 else k
            op = code & 0xF0
            if op == 0x00:
                pc += k + 1
                continue
            taken = {0x10: acc == operand, 0x20: acc > operand, 0x30: acc >= operand, 0x40: bool(acc & operand)}[op]
            pc += 1 + (jt if taken else jf)
            continue
        elif kind == 0x06:  # BPF_RET
            return k
        elif kind == 0x07:  # BPF_MISC: TAX / TXA
            acc, index = (acc, acc) if code == 0x07 else (index, index)
        else:
            raise AssertionError(f"unexpected BPF class {kind:#x}")
        pc += 1
    raise AssertionError("the program did not return")


@pytest.fixture(scope="module", autouse=True)
def _libseccomp() -> None:
    ok, why = seccomp.available()
    if not ok and "libseccomp" in why:
        pytest.skip(why)


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize(("name", "numbers", "args", "worker", "bwrap"), CASES, ids=[c[0] for c in CASES])
def test_the_filter_decides_each_syscall_on_each_architecture(
    arch: str, name: str, numbers: dict[str, int], args: tuple[int, ...], worker: int, bwrap: int
) -> None:
    for profile, expected in ((True, worker), (False, bwrap)):
        program = seccomp.program(worker=profile, arch=arch)
        got = run_bpf(program, AUDIT_ARCH[arch], numbers[arch], args)
        assert got == expected, (arch, name, profile, hex(got))


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_other_architectures_and_x32_are_killed(arch: str) -> None:
    program = seccomp.program(worker=True, arch=arch)
    other = AUDIT_ARCH["aarch64" if arch == "x86_64" else "x86_64"]
    assert run_bpf(program, other, 0) == KILL_PROCESS
    assert run_bpf(program, 0x40000003, 0) == KILL_PROCESS  # AUDIT_ARCH_I386
    if arch == "x86_64":
        assert run_bpf(program, AUDIT_ARCH[arch], 0x40000000 | 41) == KILL_PROCESS  # socket through x32


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_libseccomps_listing_names_the_denied_syscalls(arch: str) -> None:
    listing = seccomp.pseudo_code(worker=True, arch=arch)
    assert f"filter for arch {arch}" in listing
    for name in ("socket", "connect", "execve", "rt_sigaction", "setitimer", "ptrace", "openat", "clone"):
        assert f'syscall "{name}"' in listing, (arch, name)
    socket_number = {"x86_64": 41, "aarch64": 198}[arch]
    assert f'syscall "socket" ({socket_number})' in listing  # each architecture's own number
    if arch == "aarch64":  # a syscall the architecture lacks (open) never gets x86_64's number
        assert 'syscall "open" (2)' not in listing
