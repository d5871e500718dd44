"""The embedded default with a real model: SmolLM2-135M on llama.cpp's server, through the LSP vs straight.

The benchmark starts the llama.cpp server the way Cortex does (``cortex_lsp.models.local_server``) and
points a Cortex server at it (``model_backend: openai``) through a recording TCP relay, so the exact
request body Cortex sent for the answer can be replayed **straight to the llama.cpp server**: same
prompt, same options, same server. Figures: time to first token (from the moment the answer request
reached the relay, and from executeCommand) and characters/s streamed after the first token, through
the LSP ÷ straight. Also the wall time of ``make run`` (set-up check + one ask with the default ``auto``
backend, which starts its own embedded server).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import Row, med, ms
from benchmarks.lsp_bench import ROOT, Session, _is_token

#: ``cortex.explain`` on a selection: a direct run with no tools and exactly one (streamed) model call,
#: whatever the planner of the day would make of a question for a 135M model
SELECTION = {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}}
#: a question the router answers directly (one model call, no planner)
QUESTION = "What is the capital of Japan?"


@dataclass
class Relay:
    """A loopback TCP relay in a thread of its own that keeps every chat request body it forwards."""

    upstream_port: int
    port: int = 0
    bodies: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _ready: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Relay:
        threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True).start()
        self._ready.wait(10)
        return self

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await server.serve_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        buffer = bytearray()

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, record: bool) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    if record:
                        buffer.extend(data)
                        self._harvest(buffer)
                    await dst.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(reader, up_writer, True), pump(up_reader, writer, False))

    def _harvest(self, buffer: bytearray) -> None:
        while True:
            head_end = buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(buffer[:head_end]).decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(buffer) < head_end + 4 + length:
                return
            body = bytes(buffer[head_end + 4: head_end + 4 + length])
            del buffer[: head_end + 4 + length]
            if head.startswith("POST") and "chat/completions" in head.split("\r\n")[0]:
                self.bodies.append((time.perf_counter(), json.loads(body)))


async def straight(base_url: str, body: dict[str, Any]) -> tuple[float, float, int]:
    """Replay ``body`` straight to llama.cpp: (ms to first content, chars/s after it, chars)."""
    body = {**body, "stream": True}
    chars = 0
    first = last = 0.0
    async with httpx.AsyncClient(timeout=300) as client:
        started = time.perf_counter()
        async with client.stream("POST", f"{base_url}/chat/completions", json=body) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:") or line.strip() == "data: [DONE]":
                    continue
                choices = json.loads(line[5:]).get("choices") or [{}]
                text = (choices[0].get("delta") or {}).get("content") or ""
                if text:
                    now = time.perf_counter()
                    first = first or now
                    last = now
                    chars += len(text)
    rate = chars / (last - first) if last > first else float("nan")
    return (first - started) * 1000, rate, chars


def _arguments(s: Session, command: str) -> dict[str, Any]:
    if command == "cortex.explain":
        return {"uri": s.uri, "range": SELECTION}
    return {"message": QUESTION}


async def through_lsp(s: Session, relay: Relay, command: str) -> tuple[float, float, float, int, dict[str, Any]]:
    """One run: (ms from executeCommand to first token, ms from the answer request to it, chars/s, chars, body)."""
    mark, seen = len(s.client.notes), len(relay.bodies)
    sent = time.perf_counter()
    fut = s.client.request_nowait("workspace/executeCommand", {
        "command": command, "arguments": [_arguments(s, command)]})
    await s.client.wait_note(_is_token, mark, fut)
    _, result = await fut
    tokens = [n for n in s.client.notes[mark:] if _is_token(n)]
    assert tokens and result["stop_reason"] == "answered", result
    chars = sum(len(n.params["data"]["value"]) for n in tokens)
    answer_at, body = relay.bodies[-1]
    assert len(relay.bodies) > seen, "no chat request went through the relay"
    # token events are coalesced (60 ms): the rate counts the characters after the first report
    span = tokens[-1].at - tokens[0].at
    rate = (chars - len(tokens[0].params["data"]["value"])) / span if span > 0 else float("nan")
    return (tokens[0].at - sent) * 1000, (tokens[0].at - answer_at) * 1000, rate, chars, body


async def real_model(samples: int) -> list[Row]:
    from cortex_lsp.models.local_server import start_embedded

    embedded = await start_embedded(None)
    server = embedded.server
    relay = Relay(server.port).start()
    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory() as folder:
            s = await Session.start("http://127.0.0.1:9", Path(folder), CORTEX_MODEL_BACKEND="openai",
                                    CORTEX_OPENAI_BASE_URL=f"http://127.0.0.1:{relay.port}/v1",
                                    CORTEX_OLLAMA_MODEL=server.chat_model, CORTEX_EMBED_MODEL=server.embed_model,
                                    CORTEX_MEMORY_CONSOLIDATION="false")
            try:
                await asyncio.sleep(3)  # let the warm-up finish
                for command in ("cortex.ask", "cortex.explain"):
                    rows.append(await _compare(s, relay, server.base_url, command, samples))
            finally:
                await s.client.close()
    finally:
        await embedded.aclose()
    return rows


async def _compare(s: Session, relay: Relay, base_url: str, command: str, samples: int) -> Row:
    lsp_ttft: list[float] = []
    lsp_answer_ttft: list[float] = []
    lsp_rate: list[float] = []
    ref_ttft: list[float] = []
    ref_rate: list[float] = []
    calls: list[int] = []
    await through_lsp(s, relay, command)  # the first of its kind (llama.cpp's prompt cache) is not measured
    for _ in range(samples):
        before = len(relay.bodies)
        total, answer, rate, _, body = await through_lsp(s, relay, command)
        calls.append(len(relay.bodies) - before)
        lsp_ttft.append(total)
        lsp_answer_ttft.append(answer)
        lsp_rate.append(rate)
        r_ttft, r_rate, _ = await straight(base_url, body)
        ref_ttft.append(r_ttft)
        ref_rate.append(r_rate)
    ratio = med(lsp_rate) / med(ref_rate)
    extra = med(lsp_answer_ttft) - med(ref_ttft)
    what = "`cortex.ask` direct question" if command == "cortex.ask" else "`cortex.explain` on a selection"
    return Row(f"embedded default (SmolLM2-135M, llama.cpp), {what}: time to first token; chars/s after it",
               f"{ms(med(lsp_answer_ttft))} (from executeCommand: {ms(med(lsp_ttft))}); {med(lsp_rate):,.0f} chars/s",
               f"straight to llama.cpp: {ms(med(ref_ttft))}; {med(ref_rate):,.0f} chars/s",
               f"{ratio:.2f}× chars/s; TTFT {extra:+.0f} ms", "≥ 0.97×; TTFT + ≤ 50 ms",
               ratio >= 0.97 and extra <= 50,
               note=f"{samples} runs; TTFT through the LSP is timed from the moment Cortex's answer request reached "
                    f"the relay to the first token notification at the client, the reference replays that exact "
                    f"request body; {med([float(c) for c in calls]):.0f} chat request(s) per run (from "
                    "executeCommand the TTFT includes every model call before the answer)",
               raw={"lsp_ttft": lsp_ttft, "lsp_answer_ttft": lsp_answer_ttft, "lsp_rate": lsp_rate,
                    "ref_ttft": ref_ttft, "ref_rate": ref_rate, "calls": calls})


def make_run() -> Row:
    """Wall time of ``make run`` (set-up check, then one ask through the real server, embedded model)."""
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
        env.update({"CORTEX_DATA_DIR": str(Path(folder) / "data"), "CORTEX_CONFIG": str(Path(folder) / "none.yaml"),
                    "CORTEX_OLLAMA_BASE_URL": "http://127.0.0.1:9"})
        started = time.perf_counter()
        done = subprocess.run(["make", "run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - started
    ok = done.returncode == 0
    return Row("`make run` wall time (set-up check + one ask, embedded default)", f"{wall:.1f} s", "—", "—",
               "— (recorded)", None if ok else False,
               note=("answered" if ok else f"failed (exit {done.returncode}): {done.stderr.strip()[-300:]}"),
               raw={"wall": wall, "rc": done.returncode})
