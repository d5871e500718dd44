"""The sandbox worker process: waits for one snippet, runs it under limits, answers, and exits.

Started by :mod:`cortex_lsp.tools.sandbox.pool` (inside bubblewrap where available) as
``python -I -B -c "from cortex_lsp.tools.sandbox.worker import main; main()"``. Start-up, in order:
move the protocol pipes off fds 0/1; read the set-up message (the seccomp program the server compiled
with libseccomp); arm the parent-death signal; preload the allowed modules;
prepare the Landlock ruleset (:mod:`.landlock`); as root (without bubblewrap), drop to uid/gid 65534
with no capability at all (:func:`drop_root`); install the seccomp filter (:mod:`.seccomp`, ``execve``
denied too) and the audit hook (:mod:`.audit`); say it is ready (and which layers are in place), then
block on its input. When a request arrives it restricts itself with the Landlock ruleset plus the
request's folders (read-only, hidden entries left out; when the request requires Landlock and it
cannot be applied, the snippet is refused, not run), sets its resource limits (address space, CPU
seconds, no file writes, no new processes, few descriptors), compiles the snippet, arms the audit hook,
runs the snippet with the restricted guards (a sealed copy made at start-up: :mod:`.sealed`), sends
the outcome and exits: a worker never runs a second snippet. The folder modules the snippet imports come
in the request, as text the server read (:mod:`.folder_modules`); the worker never opens them.

It dies with its parent: ``PR_SET_PDEATHSIG`` (and bubblewrap's ``--die-with-parent`` when isolated),
and an end-of-file on its input while idle.

Protocol on the original stdin/stdout (moved off fds 0/1 so nothing the snippet does can write to
them): each message is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import resource
import signal
import struct
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from cortex_lsp.tools.sandbox import audit, landlock, seccomp
from cortex_lsp.tools.sandbox.policy import ALLOWED_MODULES
from cortex_lsp.tools.sandbox.restricted import (
    STDERR_LIMIT,
    STDOUT_LIMIT,
    OutputCollector,
    RunHooks,
    RunOutcome,
)
from cortex_lsp.tools.sandbox.sealed import GUARD_MODULES, SealedGuards, seal

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
_RESTRICTED = "cortex_lsp.tools.sandbox.restricted"
_ENUM_NAMES = "cortex_lsp.tools.sandbox.enum_names"
_PR_SET_PDEATHSIG = 1
_PR_SET_KEEPCAPS = 8
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_CAP_SETUID = 7
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
UNPRIVILEGED_ID = 65534
#: Codecs a snippet may need after start-up (imports are refused once the audit hook is armed).
PRELOADED_CODECS = (
    "encodings.latin_1", "encodings.ascii", "encodings.cp1252", "encodings.utf_16", "encodings.utf_32",
    "encodings.utf_8_sig", "encodings.utf_16_le", "encodings.utf_16_be", "encodings.raw_unicode_escape",
    "encodings.unicode_escape", "encodings.idna", "encodings.punycode", "encodings.hex_codec",
    "encodings.base64_codec", "encodings.cp437", "encodings.iso8859_15", "encodings.mac_roman",
)
_HEADER = struct.Struct(">I")


def encode_message(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return _HEADER.pack(len(body)) + body


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    header = _read_exact(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_MESSAGE_BYTES:
        return None
    body = _read_exact(stream, size)
    if body is None:
        return None
    data = json.loads(body.decode("utf-8"))
    return data if isinstance(data, dict) else None


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)


def _die_with_parent(parent_pid: int) -> None:
    _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    if parent_pid and os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the death signal was armed


def _take_protocol_streams() -> tuple[BinaryIO, BinaryIO, int]:
    """Move the protocol pipes off fds 0 and 1; point 0 and 1 at /dev/null (read-only: the seccomp
    filter refuses opening anything for writing)."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    return proto_in, proto_out, devnull


def _preload() -> None:
    """Import, before root is dropped, every module the worker needs later: the ones snippets may use,
    the codecs, and the guard modules :func:`.sealed.seal` copies (a checkout in a 0700 folder is
    unreadable once the file-system uid is no longer root)."""
    for name in (*sorted(ALLOWED_MODULES), *PRELOADED_CODECS, *GUARD_MODULES):
        with contextlib.suppress(ImportError, LookupError):
            importlib.import_module(name)


def _has_capability(cap: int) -> bool:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> cap & 1)
    except (OSError, ValueError):
        pass
    return False


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _capset_empty(libc: ctypes.CDLL, keep: int = 0) -> bool:
    """Set effective and permitted to ``keep`` (a bit mask), inheritable to nothing."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(keep, keep, 0), _CapData(0, 0, 0))
    return bool(libc.capset(ctypes.byref(header), data) == 0)


def drop_root(*, files_as_owner: bool = False) -> str | None:
    """As root with real capabilities (no bubblewrap): become uid/gid 65534 with **no** capability left
    (bounding, permitted, effective, inheritable and ambient sets empty), so ``RLIMIT_NPROC`` applies,
    nothing of root's can be signalled or changed, and no file is read past its permission bits.

    ``files_as_owner`` (only when the Landlock ruleset is ready: it alone then decides *which* files):
    the file-system uid stays 0, so a folder only root may enter (a root user's project, pytest's
    0700 temporary folders) can still be read, as its owner, without any capability. Without Landlock
    the file-system uid is 65534 too and the worker reads only what anyone may read. The interpreter
    has imported everything it needs before this (see :func:`main`). Returns what happened, for the
    ready message; ``None`` when not root."""
    if os.geteuid() != 0 or not _has_capability(_CAP_SETUID):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):  # the bounding set only limits what could be gained later: empty it now
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails (EINVAL) past the last capability: fine
    libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setresgid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    os.setresuid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    files = "files by their permission bits"
    if files_as_owner and _capset_empty(libc, 1 << _CAP_SETUID):
        libc.setfsuid(0)
        files = "files as their owner root where Landlock allows"
    libc.prctl(_PR_SET_KEEPCAPS, 0, 0, 0, 0)
    if not _capset_empty(libc) or _capabilities_left():
        os._exit(1)  # never run a snippet with a capability left
    return f"uid {UNPRIVILEGED_ID} (no capabilities; {files})"


def _capabilities_left() -> bool:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.split(":")[0] in ("CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"):
                    if int(line.split()[1], 16):
                        return True
    except (OSError, ValueError):
        return True
    return False


def _python_dirs() -> list[str]:
    """What the worker's interpreter reads: the Python install, the import path, and this package (the
    package folder itself, not the checkout that holds it when the server runs from a source tree)."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    checkout = os.path.dirname(package)
    dirs = {sys.prefix, sys.base_prefix, package}
    dirs.update(p for p in sys.path if p and os.path.isdir(p) and os.path.realpath(p) != os.path.realpath(checkout))
    for name in ("RestrictedPython",):  # the third-party packages the worker imports, wherever they are
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.add(os.path.dirname(os.path.abspath(module.__file__ or "")))
    return sorted(os.path.realpath(d) for d in dirs)


def install_seccomp(prog: bytes | None = None) -> str:
    """The worker's own copy of the syscall filter (``execve``, signal handlers and timers denied too);
    returns its layer state. ``prog`` is the program the server compiled; ``None`` builds it here."""
    if prog == b"":
        return "missing (no program: libseccomp is not available)"
    try:
        if prog is None:
            prog = seccomp.program(worker=True)
        seccomp.install(prog)
    except (OSError, ValueError) as exc:
        return f"missing ({getattr(exc, 'strerror', None) or exc})"
    return "on"


def start_os_layers(parent_pid: int = 0, seccomp_program: bytes | None = None
                    ) -> tuple[landlock.Confinement | None, dict[str, str]]:
    """The start-up of the OS layer, in order: import what snippets may use (as whoever started us,
    so an interpreter only root can read is fine), prepare the Landlock ruleset (read-only Python
    install; the folder is added per request), drop root (no capability kept), re-arm the parent-death
    signal (a credential change clears it), ignore ``SIGXFSZ`` (the filter then refuses every new
    signal disposition), install the seccomp filter."""
    _preload()
    if seccomp_program is None:  # built before the drop: libseccomp's loader reads files root may own
        try:
            seccomp_program = seccomp.program(worker=True)
        except (OSError, ValueError):
            seccomp_program = b""
    confinement, landlock_state = landlock.prepare(_python_dirs())
    dropped = drop_root(files_as_owner=confinement is not None)
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    layers = {"seccomp": install_seccomp(seccomp_program), "landlock": landlock_state}
    if dropped:
        layers["uid"] = dropped
    return confinement, layers


def confine(confinement: landlock.Confinement | None, roots: Sequence[str]) -> list[str]:
    """Put the Landlock ruleset on the worker with the request's folders (before the snippet runs);
    returns notes for the result (``[]`` when all is well or when Landlock is missing: the ready
    message already said so)."""
    if confinement is None:
        return []
    try:
        return confinement.confine(roots)
    except OSError as exc:
        return [f"the worker runs without its Landlock layer (it could not be applied: {exc.strerror or exc})"]


def harden(reply_fd: int) -> tuple[audit.AuditControls, dict[str, str]]:
    """The seccomp filter and the audit hook (after the imports, before any snippet). Kept for callers
    that want layers 2 and 3 without Landlock; :func:`main` uses :func:`start_os_layers`."""
    layers = {"seccomp": install_seccomp()}
    controls = audit.install(reply_fd, _python_dirs())
    layers["audit"] = "on"
    return controls, layers


def _set_limit(which: int, soft: int, hard: int) -> None:
    with contextlib.suppress(ValueError, OSError):
        _soft, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))


def apply_limits(timeout_seconds: float, memory_bytes: int) -> None:
    """Resource limits for the snippet (the parent's wall-clock timeout is the first line)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(usage.ru_utime + usage.ru_stime + timeout_seconds) + 2
    _set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    # The hard memory limit leaves room to report a MemoryError after the snippet ends.
    _set_limit(resource.RLIMIT_AS, memory_bytes, memory_bytes + 64 * 1024 * 1024)
    _set_limit(resource.RLIMIT_FSIZE, 0, 0)
    _set_limit(resource.RLIMIT_NPROC, 0, 0)
    _set_limit(resource.RLIMIT_NOFILE, 64, 64)
    _set_limit(resource.RLIMIT_CORE, 0, 0)


def _release_memory_limit() -> None:
    with contextlib.suppress(ValueError, OSError):
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def serve_one(proto_in: BinaryIO, proto_out: BinaryIO, devnull: int, controls: audit.AuditControls,
              confinement: landlock.Confinement | None = None, sealed: SealedGuards | None = None) -> None:
    """Read one request and run it with the sealed guards (:mod:`.sealed`; made here if not given)."""
    sealed = sealed or seal()
    request = read_message(proto_in)
    if request is None:
        return
    os.dup2(devnull, 2)
    code = str(request.get("code", ""))
    roots = [Path(str(r)) for r in request.get("roots", [])]
    notes = confine(confinement, [str(r) for r in roots])
    if request.get("require_landlock") and (confinement is None or confinement.fd != -1):
        why = "; ".join(notes) or "Landlock is missing"
        refusal = RunOutcome(error=f"Not run: the worker could not confine itself with Landlock ({why}).",
                             refused=True)
        proto_out.write(encode_message(asdict(refusal)))
        proto_out.flush()
        return
    apply_limits(float(request.get("timeout", 10)), int(request.get("memory_bytes", 512 * 1024 * 1024)))
    hooks = RunHooks(arm=lambda codes: controls.arm(codes, [str(r) for r in roots]),
                     reading_frames=controls.reading_frames)
    collector = sealed.get(_RESTRICTED, "OutputCollector")
    out: OutputCollector = collector(STDOUT_LIMIT)
    err: OutputCollector = collector(STDERR_LIMIT)
    sys.stdout = out  # type: ignore[assignment]
    sys.stderr = err  # type: ignore[assignment]
    try:
        outcome = sealed.run_snippet(code, roots, stdout=out, stderr=err, hooks=hooks,
                                     modules=request.get("modules"), unavailable=request.get("unavailable"))
    except MemoryError:
        outcome = RunOutcome(stdout=out.text(), error="MemoryError (memory limit reached)")
    _release_memory_limit()
    outcome.notes.extend(notes)
    try:
        message = encode_message(asdict(outcome))
    except (MemoryError, ValueError):
        message = encode_message(asdict(RunOutcome(error="The result could not be reported (too large).")))
    proto_out.write(message)
    proto_out.flush()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    parent_pid = int(args[args.index("--parent-pid") + 1]) if "--parent-pid" in args else 0
    proto_in, proto_out, devnull = _take_protocol_streams()
    _die_with_parent(parent_pid)
    setup = read_message(proto_in) or {}
    program = bytes.fromhex(str(setup.get("seccomp") or ""))
    confinement, layers = start_os_layers(parent_pid, program or b"")
    sealed = seal()
    sealed.get(_ENUM_NAMES, "install_enum_check")()
    controls = audit.install(proto_out.fileno(), _python_dirs())
    layers["audit"] = "on"
    proto_out.write(encode_message({"ready": True, "pid": os.getpid(), "layers": layers}))
    proto_out.flush()
    try:
        serve_one(proto_in, proto_out, devnull, controls, confinement, sealed)
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
