"""A minimal raw JSON-RPC-over-stdio LSP client for benchmarks.

No pygls/lsprotocol on the client side, so what is timed is the server (plus a few microseconds of
``json`` here), and any stdio server (Cortex, jedi-language-server) is driven the same way. Every
incoming message is stamped with ``time.perf_counter()`` on arrival; server requests that an editor
would answer (progress create, configuration, applyEdit, registerCapability) are answered at once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Note:
    """A notification from the server, stamped on arrival."""

    at: float
    method: str
    params: Any


@dataclass
class RawClient:
    proc: asyncio.subprocess.Process
    notes: list[Note] = field(default_factory=list)
    listeners: list[Callable[[Note], None]] = field(default_factory=list)
    _pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def spawn(cls, argv: Sequence[str], env: dict[str, str] | None = None,
                    cwd: Path | None = None) -> RawClient:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env or dict(os.environ), cwd=cwd,
            limit=64 * 1024 * 1024)
        client = cls(proc=proc)
        client._reader = asyncio.create_task(client._read())
        return client

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- wire ------------------------------------------------------------------------------------
    def _send(self, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = 0
                while True:
                    line = await out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                data = await out.readexactly(length)
                at = time.perf_counter()
                self._dispatch(json.loads(data), at)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("server exited"))

    def _dispatch(self, msg: dict[str, Any], at: float) -> None:
        if "method" in msg and "id" in msg:  # a request from the server
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": _answer(msg["method"], msg.get("params"))})
            return
        if "method" in msg:
            note = Note(at, msg["method"], msg.get("params"))
            self.notes.append(note)
            for listener in list(self.listeners):
                listener(note)
            return
        fut = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
        if fut is not None and not fut.done():
            if "error" in msg:
                fut.set_exception(RuntimeError(json.dumps(msg["error"])))
            else:
                fut.set_result((at, msg.get("result")))

    # -- API -------------------------------------------------------------------------------------
    def request_nowait(self, method: str, params: Any) -> asyncio.Future[Any]:
        """Send a request; the future resolves to ``(arrival_time, result)``."""
        rid = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return fut

    async def request(self, method: str, params: Any, limit: float = 120) -> Any:
        _, result = await asyncio.wait_for(self.request_nowait(method, params), limit)
        return result

    async def wait_note(self, match: Callable[[Note], bool], since: int, done: asyncio.Future[Any]) -> bool:
        """Wait until a notification after index ``since`` matches (True) or ``done`` resolves (False)."""
        if any(match(n) for n in self.notes[since:]):
            return True
        seen = asyncio.Event()

        def listener(note: Note) -> None:
            if match(note):
                seen.set()

        self.listeners.append(listener)
        try:
            waiter = asyncio.ensure_future(seen.wait())
            await asyncio.wait({waiter, done}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            return seen.is_set()
        finally:
            self.listeners.remove(listener)

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, root: Path | None, options: dict[str, Any] | None = None) -> Any:
        params = initialize_params(root, options)
        result = await self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def open_document(self, path: Path, text: str, language: str = "python") -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language,
                                                              "version": 1, "text": text}})
        return uri

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 10)
        except Exception:
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()


def _answer(method: str, params: Any) -> Any:
    if method == "workspace/configuration":
        return [None for _ in (params or {}).get("items", [])]
    if method == "workspace/applyEdit":
        return {"applied": True}
    return None


def initialize_params(root: Path | None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": root.as_uri() if root else None,
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}] if root else None,
        "initializationOptions": options,
        "capabilities": {
            "window": {"workDoneProgress": True},
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True,
                                                               "resourceOperations": ["create"]},
                          "workspaceFolders": True, "configuration": True},
            "textDocument": {"synchronization": {"didSave": True},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {
                                 "valueSet": ["", "quickfix", "refactor", "source"]}}}},
        },
    }


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def tree_rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` and every process below it (the vector process, sandbox workers), in MB."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            total += rss_mb(current)
        except OSError:
            continue
        todo += parents.get(current, [])
    return total


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` (from /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


async def wait_quiet(pid: int, *, settle: float = 0.5, limit: float = 30.0) -> float:
    """Wait until ``pid`` used under 20 ms of CPU in ``settle`` seconds; returns the seconds waited."""
    started = time.perf_counter()
    last = cpu_seconds(pid)
    while time.perf_counter() - started < limit:
        await asyncio.sleep(settle)
        now = cpu_seconds(pid)
        if now - last < 0.02:
            break
        last = now
    return time.perf_counter() - started
