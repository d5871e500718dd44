"""The scripted model server (tests/scripted_model.py) in a process of its own, scripted over a pipe.

A real Ollama is a separate process; running the scripted server in the benchmark's own process would
make it share a GIL with the benchmark client and blur every timing.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _child(conn: Connection, tokens_per_second: float | None) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.scripted_model import Reply, ScriptedModelServer

    server = ScriptedModelServer(tokens_per_second=tokens_per_second).start()
    # Ollama (Go's net/http) sends with TCP_NODELAY; Python's http.server does not, and Nagle + delayed
    # ACKs then add ~40 ms to some streamed replies at random, for the bare client and Cortex alike.
    assert server._httpd is not None
    server._httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    conn.send(server.url)
    while True:
        op, args = conn.recv()
        if op == "stop":
            server.stop()
            conn.send(None)
            return
        if op == "on":
            reply, contains, times, first = args
            server.on(Reply(**reply), contains=contains, times=times, first=first)
            conn.send(None)
        elif op == "reset":
            server.reset()
            conn.send(None)
        elif op == "count":
            conn.send((len(server.chat_requests), len(server.embed_requests)))
        elif op == "pace":
            server.tokens_per_second = args
            conn.send(None)


class ModelProcess:
    """``with ModelProcess() as model: model.on({"content": "hi"}, contains="...")``."""

    def __init__(self, tokens_per_second: float | None = None) -> None:
        self.tokens_per_second = tokens_per_second
        self.url = ""
        self._conn: Connection | None = None
        self._proc: Any = None

    def __enter__(self) -> ModelProcess:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_child, args=(child, self.tokens_per_second), daemon=True)
        self._proc.start()
        self._conn = parent
        self.url = parent.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._call("stop", None)
        finally:
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()

    def _call(self, op: str, args: Any) -> Any:
        assert self._conn is not None
        self._conn.send((op, args))
        return self._conn.recv()

    def on(self, reply: dict[str, Any], *, contains: str | None = None, times: int | None = None,
           first: bool = False) -> None:
        self._call("on", (reply, contains, times, first))

    def reset(self) -> None:
        self._call("reset", None)

    def counts(self) -> tuple[int, int]:
        """(chat requests, embedding requests) received since the last reset."""
        return self._call("count", None)  # type: ignore[no-any-return]

    def pace(self, tokens_per_second: float | None) -> None:
        self._call("pace", tokens_per_second)
