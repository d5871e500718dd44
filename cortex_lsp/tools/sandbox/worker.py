"""The sandbox worker process: waits for one snippet, runs it under limits, answers, and exits.

Started by :mod:`cortex_lsp.tools.sandbox.pool` (inside bubblewrap where available) as
``python -I -B -c "from cortex_lsp.tools.sandbox.worker import main; main()"``. It preloads the allowed
modules, says it is ready, then blocks on its input. When a request arrives it sets its resource limits
(address space, CPU seconds, no file writes, no new processes, few descriptors), runs the snippet with
the restricted guards, sends the outcome and exits: a worker never runs a second snippet.

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
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from cortex_lsp.tools.sandbox.policy import ALLOWED_MODULES
from cortex_lsp.tools.sandbox.restricted import (
    STDERR_LIMIT,
    STDOUT_LIMIT,
    OutputCollector,
    RunOutcome,
    run_snippet,
)

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
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
    """Move the protocol pipes off fds 0 and 1; point 0 and 1 at /dev/null."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    return proto_in, proto_out, devnull


def _preload() -> None:
    for name in sorted(ALLOWED_MODULES):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


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
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _set_limit(resource.RLIMIT_FSIZE, 0, 0)
    _set_limit(resource.RLIMIT_NPROC, 0, 0)
    _set_limit(resource.RLIMIT_NOFILE, 64, 64)
    _set_limit(resource.RLIMIT_CORE, 0, 0)


def _release_memory_limit() -> None:
    with contextlib.suppress(ValueError, OSError):
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def serve_one(proto_in: BinaryIO, proto_out: BinaryIO, devnull: int) -> None:
    request = read_message(proto_in)
    if request is None:
        return
    os.dup2(devnull, 2)
    code = str(request.get("code", ""))
    roots = [Path(str(r)) for r in request.get("roots", [])]
    apply_limits(float(request.get("timeout", 10)), int(request.get("memory_bytes", 512 * 1024 * 1024)))
    out = OutputCollector(STDOUT_LIMIT)
    err = OutputCollector(STDERR_LIMIT)
    sys.stdout = out  # type: ignore[assignment]
    sys.stderr = err  # type: ignore[assignment]
    try:
        outcome = run_snippet(code, roots, stdout=out, stderr=err)
    except MemoryError:
        outcome = RunOutcome(stdout=out.text(), error="MemoryError (memory limit reached)")
    _release_memory_limit()
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
    _preload()
    proto_out.write(encode_message({"ready": True, "pid": os.getpid()}))
    proto_out.flush()
    try:
        serve_one(proto_in, proto_out, devnull)
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
