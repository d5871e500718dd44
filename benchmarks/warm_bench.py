"""The first ask on a fresh server, asked at once, against the second ask and the bare model call.

Each sample is a fresh server (real process, scripted model): ``initialize``, ``initialized``, a document
opened, and the ask is sent at once — as the CLI does, and as a user who opens the editor and types
straight away does — while the background warm-up (imports, model connection, memory store) still runs.
Timed from executeCommand: the first ``$/progress``, the first token, the result; then a second ask on
the same server, and the bare ``ollama`` call for the same reply.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ollama

from benchmarks.common import Row, med, ms
from benchmarks.lsp_bench import ANSWER_100, MODEL, ROOT, Session, _is_token, _script_direct
from benchmarks.model_proc import ModelProcess

QUESTION = "What is the capital of Japan?"


async def _one_ask(s: Session) -> tuple[float, float, float]:
    mark = len(s.client.notes)
    sent, fut = s.ask(QUESTION)
    await s.client.wait_note(_is_token, mark, fut)
    at, result = await fut
    assert result["stop_reason"] == "answered", result
    # a fast run may end before the editor has made the progress token: its begin then comes after the result
    await s.client.wait_note(lambda n: n.method == "$/progress", mark,
                             asyncio.ensure_future(asyncio.sleep(10)))
    notes = s.client.notes[mark:]
    progress = next(n.at for n in notes if n.method == "$/progress")
    token = next(n.at for n in notes if _is_token(n))
    return (progress - sent) * 1000, (token - sent) * 1000, (at - sent) * 1000


async def _bare(client: ollama.AsyncClient) -> float:
    started = time.perf_counter()
    async for _ in await client.chat(model=MODEL, messages=[{"role": "user", "content": QUESTION}], stream=True):
        pass
    return (time.perf_counter() - started) * 1000


IMPORT_FLOOR = """
import time, importlib, cortex_lsp.server.app, cortex_lsp.server.features
from cortex_lsp.server.warmup import MODULES, SETTINGS_MODULE
started = time.perf_counter()
for name in (SETTINGS_MODULE, *MODULES):
    importlib.import_module(name)
print((time.perf_counter() - started) * 1000)
"""


def import_floor() -> float:
    """What a fresh server must import before a first command can run (the settings, the agent, the model
    client, the memory store: server/warmup.py's list), timed alone in a fresh interpreter (ms)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", IMPORT_FLOOR], capture_output=True, text=True, env=env, check=True)
    return float(out.stdout.strip())


async def first_vs_second(samples: int) -> list[Row]:
    first: list[tuple[float, float, float]] = []
    second: list[tuple[float, float, float]] = []
    bare: list[float] = []
    with ModelProcess() as model:
        bare_client = ollama.AsyncClient(host=model.url)
        for _ in range(samples):
            with tempfile.TemporaryDirectory() as folder:
                _script_direct(model)
                model.on({"content": ANSWER_100}, contains="capital of Japan")
                s = await Session.start(model.url, Path(folder))
                try:
                    first.append(await _one_ask(s))  # at once: no wait for the warm-up
                    second.append(await _one_ask(s))
                    bare.append(await _bare(bare_client))
                finally:
                    await s.client.close()
    floor = med([import_floor() for _ in range(samples)])
    p1, t1, d1 = (med([x[i] for x in first]) for i in range(3))
    p2, t2, d2 = (med([x[i] for x in second]) for i in range(3))
    b = med(bare)
    return [
        Row("asked at once after start: executeCommand → first `$/progress`",
            f"{ms(p1)} (fresh server, asked at once)", f"second ask: {ms(p2)}", "—",
            "≤ 100 ms", p1 <= 100,
            note=f"{samples} fresh servers (medians); the ask is sent right after `initialized`, while the "
                 "warm-up runs", raw={"first": first, "second": second}),
        Row("asked at once after start: `cortex.ask` → result (100-word reply, memory on)",
            f"{ms(d1)}; first token {ms(t1)}", f"bare `ollama` chat {ms(b)}; second ask {ms(d2)} "
            f"(first token {ms(t2)})", f"+{d1 - b:.0f} ms over bare",
            "≤ bare + 15 ms (recorded: the first ask pays the warm-up it waits for)", d1 - b <= 15,
            note=f"importing what a first command needs, timed alone in a fresh interpreter: {ms(floor)} "
                 "(the part of the first ask no design can take off it, short of importing it before "
                 "`initialize` is answered)",
            raw={"bare": bare, "import_floor": floor}),
    ]
