"""An independent check of the benchmark's loop figures: the server started as a user starts it, timed by a
client that shares no code with the suite's, then the suite's own functions for the same figures, side by
side in one run (same machine, same minute).

    .venv/bin/python -m benchmarks.outside_check                  # 3 fresh servers, 30 asks, 1,000 actions
    .venv/bin/python -m benchmarks.outside_check --fresh 5 --asks 50 --actions 600

The outside client (:class:`OutsideClient`): ``.venv/bin/cortex-lsp serve`` (the console script an editor
runs; this checkout first on ``PYTHONPATH``), plain ``subprocess`` pipes and one reader thread that stamps
each message with ``time.perf_counter()`` as its last byte arrives; requests are written from the caller's
thread. The bare model call is a raw ``http.client`` request streamed to the end (not the ``ollama``
package the suite uses). The model is the same scripted process (benchmarks/model_proc.py): what is checked
is how the server's figures are measured, not the model.

Figures: a fresh server asked at once (executeCommand → first ``$/progress`` and → result, against the bare
call); a warm ask, median over back-to-back asks, minus the median bare call; codeAction latency 2 ms
apart over runs streaming flat out and at 200 tokens/s (median, p99). The load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from benchmarks.common import med, pct
from benchmarks.lsp_bench import (
    ANSWER_100,
    DIRECT_PLAN,
    Options,
    Session,
    _script_direct,
    ask_direct,
    code_actions,
    code_actions_paced,
)
from benchmarks.model_proc import ModelProcess
from benchmarks.warm_bench import first_vs_second
from cortex_lsp.agent.prompts import ROLE_PLANNER

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("cortex-lsp")
QUESTION = "What is the capital of Japan?"
SOURCE = "\n".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(60))


class OutsideClient:
    """The server over its stdio, written to and read from with blocking pipes."""

    def __init__(self, model_url: str, tmp: Path) -> None:
        self.root = tmp / "ws"
        self.root.mkdir(parents=True, exist_ok=True)
        (tmp / "data").mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
        env.update({"PYTHONPATH": str(ROOT), "CORTEX_MODEL_BACKEND": "ollama", "CORTEX_OLLAMA_BASE_URL": model_url,
                    "CORTEX_DATA_DIR": str(tmp / "data"), "CORTEX_CONFIG": str(tmp / "none.yaml"),
                    "CORTEX_LOG_LEVEL": "INFO"})
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen([str(CLI), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=self.root)
        self.inbox: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.seen: list[tuple[float, dict[str, Any]]] = []
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        pipe = self.proc.stdout
        assert pipe is not None
        while True:
            length = 0
            while (line := pipe.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                return
            body = pipe.read(length)
            self.inbox.put((time.perf_counter(), json.loads(body)))

    def send(self, message: dict[str, Any]) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        sent = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return sent

    def request(self, method: str, params: Any) -> tuple[int, float]:
        self._id += 1
        return self._id, self.send({"id": self._id, "method": method, "params": params})

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def until(self, match: Any, timeout: float = 120) -> tuple[float, dict[str, Any]]:
        """Read messages (answering the server's requests) until one matches; returns it with its time."""
        deadline = time.monotonic() + timeout
        for at, message in self.seen:
            if match(message):
                self.seen.remove((at, message))
                return at, message
        while True:
            at, message = self.inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            if "method" in message and "id" in message:  # workDoneProgress/create, configuration…
                result: Any = [None] if message["method"] == "workspace/configuration" else None
                self.send({"id": message["id"], "result": result})
            if match(message):
                return at, message
            self.seen.append((at, message))

    def answer(self, msg_id: int, timeout: float = 120) -> tuple[float, dict[str, Any]]:
        return self.until(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def start(self) -> float:
        """initialize → initialized → a document opened; returns spawn → initialize result (ms)."""
        caps = {"window": {"workDoneProgress": True}, "workspace": {"applyEdit": True, "configuration": True}}
        msg_id, _ = self.request("initialize", {"processId": os.getpid(), "rootUri": self.root.as_uri(),
                                                "capabilities": caps, "workspaceFolders": [
                                                    {"uri": self.root.as_uri(), "name": "ws"}]})
        at, _ = self.answer(msg_id)
        self.notify("initialized", {})
        path = self.root / "sample.py"
        path.write_text(SOURCE)
        self.uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "python",
                                                               "version": 1, "text": SOURCE}})
        return (at - self.spawned) * 1000

    def ask(self, message: str) -> tuple[float, float, dict[str, Any]]:
        """One cortex.ask: (→ first $/progress, → result) in ms, and the result."""
        self.seen.clear()
        msg_id, sent = self.request("workspace/executeCommand",
                                    {"command": "cortex.ask", "arguments": [{"message": message}]})
        done, reply = self.answer(msg_id)
        progress = [at for at, m in self.seen if m.get("method") == "$/progress"]
        if not progress:  # a fast run may end before the progress token was made: its begin comes after
            progress = [self.until(lambda m: m.get("method") == "$/progress", 10)[0]]
        return (progress[0] - sent) * 1000, (done - sent) * 1000, reply["result"]

    def code_action(self) -> float:
        msg_id, sent = self.request("textDocument/codeAction", {
            "textDocument": {"uri": self.uri}, "context": {"diagnostics": []},
            "range": {"start": {"line": 41, "character": 4}, "end": {"line": 41, "character": 4}}})
        at, _ = self.answer(msg_id)
        return (at - sent) * 1000

    def warm(self) -> None:
        self.until(lambda m: m.get("method") == "window/logMessage" and "warm-up done" in m["params"]["message"])

    def close(self) -> None:
        msg_id, _ = self.request("shutdown", None)
        try:
            self.answer(msg_id, 30)
            self.notify("exit", None)
            self.proc.wait(30)
        except Exception:
            self.proc.kill()


def bare_call(url: str) -> float:
    """The same reply straight from the model: one streamed /api/chat read to its end (ms)."""
    where = urlparse(url)
    body = json.dumps({"model": "qwen2.5:7b", "stream": True, "messages": [{"role": "user", "content": QUESTION}]})
    started = time.perf_counter()
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port or 80, timeout=60)
    conn.request("POST", "/api/chat", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    while response.read(65536):
        pass
    conn.close()
    return (time.perf_counter() - started) * 1000


def script(model: ModelProcess) -> None:
    model.reset()
    model.on({"content": DIRECT_PLAN}, contains=ROLE_PLANNER, first=True)
    model.on({"content": ANSWER_100}, contains="capital of Japan", times=None)
    model.on({"content": " ".join(f"tok{i}" for i in range(20000))}, contains="STREAMLONG", times=None)
    model.on({"content": " ".join(f"tok{i}" for i in range(600)), "token_delay": 1 / 200}, contains="STREAMPACE",
             times=None)


def during(client: OutsideClient, message: str, gap: float = 0.002) -> list[float]:
    """codeActions ``gap`` s apart from the moment ``message`` is asked until its result has arrived."""
    msg_id, _ = client.request("workspace/executeCommand",
                               {"command": "cortex.ask", "arguments": [{"message": message}]})
    samples: list[float] = []
    while True:
        samples.append(client.code_action())
        if any(m.get("id") == msg_id and "method" not in m for _, m in client.seen):
            return samples
        time.sleep(gap)


def outside(model: ModelProcess, args: argparse.Namespace) -> dict[str, Any]:
    fresh: list[tuple[float, float, float]] = []
    for _ in range(args.fresh):
        with tempfile.TemporaryDirectory() as folder:
            script(model)
            client = OutsideClient(model.url, Path(folder))
            try:
                started = client.start()
                progress, result, answer = client.ask(QUESTION)  # at once: the warm-up still runs
                assert answer["stop_reason"] == "answered", answer
                fresh.append((started, progress, result))
            finally:
                client.close()
    with tempfile.TemporaryDirectory() as folder:
        script(model)
        client = OutsideClient(model.url, Path(folder))
        try:
            client.start()
            client.warm()
            for _ in range(3):
                client.ask(QUESTION)
                bare_call(model.url)
            asks, bares = [], []
            for _ in range(args.asks):
                asks.append(client.ask(QUESTION)[1])
                bares.append(bare_call(model.url))
            flat: list[float] = []
            paced: list[float] = []
            while len(flat) < args.actions:
                flat += during(client, "STREAMLONG: write a long text")
            while len(paced) < args.actions:
                paced += during(client, "STREAMPACE: write a long text")
        finally:
            client.close()
    return {"fresh": fresh, "asks": asks, "bares": bares, "flat": flat, "paced": paced}


async def suite(model: ModelProcess, args: argparse.Namespace) -> dict[str, Any]:
    rows = await first_vs_second(args.fresh)
    with tempfile.TemporaryDirectory() as folder:
        s = await Session.start(model.url, Path(folder))
        try:
            opt = Options(quick=True, actions=args.actions)
            asked = await ask_direct(s, model, opt)
            flat = await code_actions(s, model, opt)
            paced = await code_actions_paced(s, model, opt)
        finally:
            await s.client.close()
    return {"first": rows[0].raw["first"], "bare": rows[1].raw["bare"], "asks": asked[0].raw["e2e"],
            "bares": asked[0].raw["bare"], "flat": flat.raw["busy"], "paced": paced.raw["busy"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", type=int, default=3, help="fresh servers asked at once")
    parser.add_argument("--asks", type=int, default=30, help="warm asks back to back")
    parser.add_argument("--actions", type=int, default=1000, help="codeActions while runs stream (each way)")
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with ModelProcess() as model:
        out = outside(model, args)
        _script_direct(model)
        ours = asyncio.run(suite(model, args))
    after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    fresh = out["fresh"]
    rows = [
        ("fresh server asked at once: → first $/progress (median)", med([f[1] for f in fresh]),
         med([f[0] for f in ours["first"]])),
        ("fresh server asked at once: → result (median)", med([f[2] for f in fresh]),
         med([f[2] for f in ours["first"]])),
        ("bare model call (median)", med(out["bares"]), med(ours["bares"])),
        ("warm ask → result (median)", med(out["asks"]), med(ours["asks"])),
        ("warm ask over bare (median − median)", med(out["asks"]) - med(out["bares"]),
         med(ours["asks"]) - med(ours["bares"])),
        ("codeAction while streaming flat out: median", med(out["flat"]), med(ours["flat"])),
        ("codeAction while streaming flat out: p99", pct(out["flat"], 0.99), pct(ours["flat"], 0.99)),
        ("codeAction at 200 tokens/s: median", med(out["paced"]), med(ours["paced"])),
        ("codeAction at 200 tokens/s: p99", pct(out["paced"], 0.99), pct(ours["paced"], 0.99)),
    ]
    print(f"load average {load} at the start, {after} at the end; spawn → initialize (outside, median): "
          f"{med([f[0] for f in fresh]):.0f} ms")
    print("| figure (ms) | outside client, `cortex-lsp serve` | the suite's own measurement |")
    print("|---|---|---|")
    for name, mine, suites in rows:
        print(f"| {name} | {mine:.1f} | {suites:.1f} |")


if __name__ == "__main__":
    main()
