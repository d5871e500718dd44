"""The warm worker pool: the server-side half of the Python sandbox.

A worker is a fresh Python process (inside bubblewrap where available) that has already imported the
sandbox and the allowed modules and waits for one snippet. :meth:`SandboxPool.run` takes the waiting
worker, immediately starts its replacement, sends the snippet, waits at most
``code_exec_timeout_seconds`` and then discards the worker whatever happened (so no state or damage
carries over). A worker started for other roots is replaced, since the roots are bound into its
isolation when it starts. The folder modules the snippet imports are found and read here, through the
path guards, and sent with it (:mod:`.folder_modules`): the worker never opens them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex_lsp import telemetry
from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import seccomp
from cortex_lsp.tools.sandbox.folder_modules import FolderImports, gather
from cortex_lsp.tools.sandbox.isolation import (
    IsolationPlan,
    args_file,
    bwrap_argv,
    hidden_now,
    plan_isolation,
    root_binds,
    seccomp_pipe,
    worker_command,
)
from cortex_lsp.tools.sandbox.policy import MAX_CODE_CHARS

MAX_REPLY_BYTES = 8 * 1024 * 1024
MEMORY_LIMIT_BYTES = 512 * 1024 * 1024
STARTUP_TIMEOUT_SECONDS = 30.0
#: how long reaping a killed worker may wait before its pipes are closed (see :func:`_reap`)
REAP_TIMEOUT_SECONDS = 5.0
_HEADER = struct.Struct(">I")


@dataclass
class SandboxResult:
    """The outcome of one run. ``refused``: the sandbox refused the code (policy, or no OS boundary),
    rather than the code failing while it ran. ``isolation``: ``"bwrap"``, ``"landlock+seccomp"`` or
    ``"not isolated (<why>)"``."""

    stdout: str
    stderr: str
    value: str | None
    error: str | None
    duration_ms: float
    backend: str = "restricted"
    isolation: str = "none"
    refused: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


class SandboxStartError(RuntimeError):
    """A worker could not be started (bubblewrap failure, missing interpreter, ...)."""


@dataclass
class _Worker:
    proc: asyncio.subprocess.Process
    roots: tuple[str, ...]
    #: what the worker's start-up and bubblewrap could not put in place (one note each)
    missing: list[str] = field(default_factory=list)
    #: the hidden entries bubblewrap covered when the worker started (``None``: no bubblewrap)
    hidden: frozenset[str] | None = None
    #: the OS layers the plan's boundary needs but the worker reported missing (it is then not used)
    unconfined: list[str] = field(default_factory=list)


def _encode(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return _HEADER.pack(len(body)) + body


async def _read_reply(stream: asyncio.StreamReader) -> dict[str, Any]:
    header = await stream.readexactly(_HEADER.size)
    (size,) = _HEADER.unpack(header)
    if size > MAX_REPLY_BYTES:
        raise ValueError(f"reply of {size} bytes is too large")
    try:
        data = json.loads((await stream.readexactly(size)).decode("utf-8"))
    except RecursionError:  # nested deeper than the decoder goes: no worker of ours sends that
        raise ValueError("reply is nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError("reply is not an object")
    return data


def _notes(value: object) -> list[str]:
    """The reply's notes: a list of strings, else none (the worker may be the snippet's forgery)."""
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def too_long_message() -> str:
    return f"Not run: the code is over {MAX_CODE_CHARS} characters (checked before reading it)."


def _text(value: object) -> str | None:
    """A reply string made safe to send on (lone surrogates from the snippet become U+FFFD)."""
    if not isinstance(value, str):
        return None
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if value else value


def _roots_key(roots: list[Path]) -> tuple[str, ...]:
    return tuple(os.path.realpath(r) for r in roots)


def _folder_imports(code: str, roots: tuple[str, ...], stop: threading.Event | None = None) -> FolderImports:
    """The folder modules ``code`` imports (read through the path guards); none if reading them fails.
    ``stop``: set when the run no longer waits (the search ends at its next name)."""
    try:
        return gather(code, [Path(r) for r in roots], stop)
    except Exception as exc:  # a file system error past the guards' own: run without the folder's modules
        return FolderImports(notes=[f"the folder's modules could not be read ({type(exc).__name__})"])


def _kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the worker's process group (it leads its own session). Not ``proc.kill()``: that polls
    and may reap the child behind asyncio's child watcher, which then loses its exit status. Also when
    the leader has already exited: bubblewrap's pid-1 inside the namespace can outlive it (waiting for a
    parent that is gone, holding our pipes), and Linux keeps the group's id while any member lives."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _describe_exit(returncode: int | None, timeout: float) -> str:
    if returncode is None:
        return "The sandbox worker stopped answering."
    if returncode < 0:
        sig = -returncode
        if sig == signal.SIGXCPU:
            return f"Stopped: the code used more than its CPU time limit ({timeout:g} s)."
        if sig == signal.SIGKILL:
            return "Stopped: the sandbox worker was killed (memory or process limit)."
        if sig == signal.SIGSEGV:
            return "Stopped: the sandbox worker crashed (stack overflow: recursion too deep?)."
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return f"Stopped: the sandbox worker ended on signal {name}."
    return f"Stopped: the sandbox worker exited with status {returncode}."


def _worker_filter() -> bytes:
    """The worker's own seccomp program (empty when libseccomp is missing: the worker then reports the
    layer missing, and the plan decides whether that may run)."""
    try:
        return seccomp.program(worker=True)
    except (OSError, ValueError):
        return b""


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed worker (at most ``REAP_TIMEOUT_SECONDS``), then close its pipes on our side.
    asyncio's ``wait()`` returns only once the process has exited *and* its pipes are closed, so a
    sandbox process that outlived bubblewrap (its pid-1 inside the namespace) and still holds stdout
    would keep every pending ``wait()`` waiting forever; closing the pipes ends them."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), REAP_TIMEOUT_SECONDS)
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()


class SandboxPool:
    """Runs Python snippets in recycled, pre-started sandbox workers."""

    def __init__(self, settings: Settings, *, keep_warm: bool = True) -> None:
        self._settings = settings
        self._keep_warm = keep_warm
        self._plan: IsolationPlan | None = None
        self._filter = b""
        self._plan_lock: asyncio.Lock | None = None
        self._take_lock: asyncio.Lock | None = None
        self._warm: asyncio.Task[_Worker] | None = None
        self._warm_roots: tuple[str, ...] = ()
        self._reapers: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def timeout_seconds(self) -> float:
        """The per-snippet time limit (``code_exec_timeout_seconds``)."""
        return self._settings.code_exec_timeout_seconds

    # -- isolation -------------------------------------------------------------------------------
    async def isolation(self) -> IsolationPlan:
        """The isolation plan (probed once, off the event loop)."""
        if self._plan is None:
            if self._plan_lock is None:
                self._plan_lock = asyncio.Lock()
            async with self._plan_lock:
                if self._plan is None:
                    self._filter = await asyncio.to_thread(_worker_filter)
                    self._plan = await asyncio.to_thread(plan_isolation, self._settings)
        return self._plan

    # -- workers ---------------------------------------------------------------------------------
    async def _spawn(self, roots: tuple[str, ...]) -> _Worker:
        plan = await self.isolation()
        missing: list[str] = []
        hidden: frozenset[str] | None = None
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        binds = await asyncio.to_thread(root_binds, [Path(r) for r in roots]) if plan.bwrap else None
        with seccomp_pipe() as seccomp_fd, args_file(binds.args if binds is not None else []) as binds_fd:
            passed: tuple[int, ...] = ()
            if plan.bwrap and binds is not None:
                missing += binds.notes
                hidden = binds.hidden
                if seccomp_fd is None:
                    missing.append("bubblewrap runs without the seccomp filter (libseccomp is missing)")
                argv = bwrap_argv(plan.bwrap, worker_command(), [], seccomp_fd=seccomp_fd, binds_fd=binds_fd)
                passed = (binds_fd,) if seccomp_fd is None else (seccomp_fd, binds_fd)
            else:
                argv = worker_command(parent_pid=os.getpid())
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    env=env,
                    cwd="/",
                    start_new_session=True,
                    pass_fds=passed,
                )
            except OSError as exc:  # no process at all (E2BIG, EMFILE, ...): the run says so, never raises
                raise SandboxStartError(f"the sandbox worker could not be started ({exc.strerror or exc})") from None
        assert proc.stdout is not None and proc.stdin is not None
        unconfined: list[str] = []
        try:
            proc.stdin.write(_encode({"seccomp": self._filter.hex()}))
            await proc.stdin.drain()
            hello = await asyncio.wait_for(_read_reply(proc.stdout), STARTUP_TIMEOUT_SECONDS)
            if not hello.get("ready"):
                raise ValueError("unexpected greeting")
            reported = hello.get("layers")
            layers: dict[str, Any] = reported if isinstance(reported, dict) else {}
            for layer in ("seccomp", "audit"):
                if layers.get(layer) != "on":
                    missing.append(f"the worker runs without its {layer} layer ({layers.get(layer) or 'not reported'})")
            landlock_state = str(layers.get("landlock") or "not reported")
            if not landlock_state.startswith("on"):  # file/network rules of the OS layer (also without bwrap)
                why = landlock_state.removeprefix("missing ")
                missing.append(f"the worker runs without its Landlock layer ({why})")
            needed = {"bwrap": ("seccomp", "audit"), "landlock": ("seccomp", "audit", "landlock")}
            unconfined = [f"{layer}: {layers.get(layer) or 'not reported'}" for layer in needed.get(plan.boundary, ())
                          if not str(layers.get(layer) or "").startswith("on")]
        except (asyncio.IncompleteReadError, TimeoutError, ValueError, ConnectionError) as exc:
            _kill(proc)
            detail = ""
            if proc.stderr is not None:
                with contextlib.suppress(TimeoutError):
                    detail = (await asyncio.wait_for(proc.stderr.read(4000), 2)).decode("utf-8", "replace")
            await _reap(proc)
            raise SandboxStartError(f"the sandbox worker did not start: {detail.strip() or exc!r}") from None
        except BaseException:  # cancelled while starting: don't leave the process behind
            self._discard(_Worker(proc=proc, roots=roots))
            raise
        return _Worker(proc=proc, roots=roots, missing=missing, hidden=hidden, unconfined=unconfined)

    def _discard(self, worker: _Worker) -> None:
        _kill(worker.proc)
        for stream in (worker.proc.stdin,):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
        task = asyncio.ensure_future(_reap(worker.proc))
        self._reapers.add(task)
        task.add_done_callback(self._reapers.discard)

    def _start_warm(self, roots: tuple[str, ...]) -> None:
        self._warm = asyncio.ensure_future(self._spawn(roots))
        self._warm_roots = roots

    async def _drop_warm(self) -> None:
        task, self._warm = self._warm, None
        if task is None:
            return
        if not task.done():
            task.cancel()
            # bounded: a start cancelled inside create_subprocess_exec waits for the process (see _reap)
            await asyncio.wait({task}, timeout=STARTUP_TIMEOUT_SECONDS)
        if task.done():  # a worker that started before the cancel reached it is discarded too
            with contextlib.suppress(BaseException):
                self._discard(task.result())

    async def prewarm(self, roots: list[Path]) -> None:
        """Start a worker for ``roots`` now so the first run is fast (optional)."""
        key = _roots_key(roots)
        if self._take_lock is None:
            self._take_lock = asyncio.Lock()
        async with self._take_lock:
            if self._warm is None or self._warm_roots != key:
                await self._drop_warm()
                self._start_warm(key)

    async def wait_ready(self) -> None:
        """Wait until the waiting worker (if any) has started."""
        task = self._warm
        if task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(task)

    async def _take(self, roots: tuple[str, ...]) -> _Worker:
        if self._take_lock is None:
            self._take_lock = asyncio.Lock()
        async with self._take_lock:
            task = self._warm if self._warm_roots == roots else None
            if task is None:
                await self._drop_warm()
            self._warm = None
            if task is None:
                task = asyncio.ensure_future(self._spawn(roots))
            if self._keep_warm and not self._closed:
                self._start_warm(roots)
        worker = await task
        if worker.proc.returncode is not None:  # died while waiting: start a fresh one
            self._discard(worker)
            worker = await self._spawn(roots)
        return worker

    # -- the public API --------------------------------------------------------------------------
    async def run(self, code: str, *, roots: list[Path]) -> SandboxResult:
        """Run ``code`` in a fresh worker; never raises for the code's faults (a ``sandbox.run`` span)."""
        with telemetry.span("sandbox.run", {"cortex.sandbox.code_chars": len(code)},
                            content={"cortex.sandbox.code": code[:4000]}) as span:
            outcome = await self._run(code, roots=roots)
            span.set({"cortex.sandbox.backend": outcome.backend, "cortex.sandbox.isolation": outcome.isolation,
                        "cortex.sandbox.refused": outcome.refused, "cortex.sandbox.ok": outcome.ok,
                        "cortex.sandbox.duration_ms": round(outcome.duration_ms, 1)})
        return outcome

    async def _run(self, code: str, *, roots: list[Path]) -> SandboxResult:
        plan = await self.isolation()
        isolation = plan.label
        started = time.perf_counter()

        def result(**values: Any) -> SandboxResult:
            base: dict[str, Any] = dict(stdout="", stderr="", value=None, error=None, isolation=isolation)
            base.update(values)
            notes = list(base.pop("notes", []))
            if plan.warning:  # no silent downgrade: every result says so
                notes.append(plan.warning)
            return SandboxResult(duration_ms=(time.perf_counter() - started) * 1000, notes=notes, **base)

        if self._closed:
            return result(error="The sandbox is shut down.")
        if plan.refuse:
            return result(refused=True, error=plan.refusal)
        if len(code) > MAX_CODE_CHARS:
            return result(refused=True, error=too_long_message())
        key = _roots_key(roots)
        # the folder modules the code imports (no thread hop for code without an import); a cancelled
        # run stops the search too (the thread itself can't be cancelled: it looks at ``stop``)
        folder = FolderImports()
        if "import" in code:
            stop = threading.Event()
            try:
                folder = await asyncio.to_thread(_folder_imports, code, key, stop)
            finally:
                stop.set()
        try:
            worker = await self._take(key)
            if worker.hidden is not None:
                # a hidden file made after the waiting worker started would be visible in its bind
                now = await asyncio.to_thread(hidden_now, [Path(r) for r in key])
                if now != worker.hidden:
                    self._discard(worker)
                    worker = await self._spawn(key)
        except SandboxStartError as exc:
            return result(error=f"Not run: {exc}")
        if worker.unconfined:  # never run code outside the boundary the plan promised
            self._discard(worker)
            return result(refused=True, error="Not run: the sandbox worker could not put its OS boundary in place ("
                          + "; ".join(worker.unconfined) + ").")
        timeout = self._settings.code_exec_timeout_seconds
        request = {"code": code, "roots": list(key), "timeout": timeout, "memory_bytes": MEMORY_LIMIT_BYTES,
                   "require_landlock": plan.boundary == "landlock", **folder.request()}
        started = time.perf_counter()
        try:
            assert worker.proc.stdin is not None and worker.proc.stdout is not None
            worker.proc.stdin.write(_encode(request))
            await worker.proc.stdin.drain()
            reply = await asyncio.wait_for(_read_reply(worker.proc.stdout), timeout)
        except TimeoutError:
            return result(error=f"Stopped: the code ran longer than the time limit ({timeout:g} s).")
        except (asyncio.IncompleteReadError, ConnectionError, BrokenPipeError, ValueError):
            _kill(worker.proc)
            await _reap(worker.proc)
            return result(error=_describe_exit(worker.proc.returncode, timeout))
        finally:
            self._discard(worker)
        return result(
            stdout=_text(reply.get("stdout")) or "",
            stderr=_text(reply.get("stderr")) or "",
            value=_text(reply.get("value")),
            error=_text(reply.get("error")),
            refused=bool(reply.get("refused")),
            notes=_notes(reply.get("notes")) + worker.missing + folder.notes,
        )

    async def aclose(self) -> None:
        """Stop the waiting worker and reap every discarded one."""
        self._closed = True
        await self._drop_warm()
        if self._reapers:
            await asyncio.gather(*list(self._reapers), return_exceptions=True)
