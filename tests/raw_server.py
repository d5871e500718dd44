"""The real server driven by raw frames over stdio (no LSP client library between the test and the
bytes): for the lifecycle, start-up and exit tests that need messages a client would never send, or the
process itself (its exit code, its children, its stderr)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

WAIT = 60.0


class RawServer:
    """The real server (``python -m cortex_lsp``) driven by raw frames; a thread reads what it sends."""

    def __init__(self, env: dict[str, str], cwd: Path, *, argv: Sequence[str] = ("-m", "cortex_lsp"),
                 stderr: IO[bytes] | int = subprocess.DEVNULL) -> None:
        """``argv``: the interpreter's arguments (a test's own driver script with ``-c``)."""
        self.proc = subprocess.Popen([sys.executable, *argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=cwd)
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._next_id = 100
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, pipe: IO[bytes]) -> None:
        while True:
            length = None
            while (line := pipe.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                self.inbox.put(None)
                return
            self.inbox.put(json.loads(pipe.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def answer(self, msg_id: int, timeout: float = WAIT) -> dict[str, Any]:
        """The response to ``msg_id``; requests from the server are answered null on the way."""
        found = self.wait_for(lambda m: "method" not in m and m.get("id") == msg_id, timeout)
        if found is None:
            raise AssertionError(f"no answer to request {msg_id} within {timeout:g} s")
        return found

    def wait_for(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = WAIT) -> dict[str, Any] | None:
        """The first message ``wanted`` accepts (None after ``timeout``); requests from the server are
        answered null on the way."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            assert message is not None, "the server closed its stdout"
            self.seen.append(message)
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif wanted(message):
                return message
        return None

    def initialize(self, root: Path, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self.answer(self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities or {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]}))
        self.send({"method": "initialized", "params": {}})
        return reply

    def children(self) -> list[int]:
        found: list[int] = []
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            with open(task / "children", encoding="ascii") as handle:
                found += [int(pid) for pid in handle.read().split()]
        return found

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.answer(self.request("shutdown"), timeout=30)
                self.send({"method": "exit"})
                self.proc.wait(timeout=30)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
