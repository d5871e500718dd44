"""Profile the TAIL of the event loop: which callbacks hold the server's loop, and for how long; GC pauses.

A sampling profiler shows where the time goes on average; a p99 is made of rare long stalls it hardly
sees. This runs the real server (``python -m benchmarks.looplag`` instead of ``python -m cortex_lsp``)
with every event-loop callback timed: each one that holds the loop for ``CORTEX_LAG_MS`` (default 2 ms)
or more is written to ``CORTEX_LAG_FILE`` as ``loop <ms> <what>`` (the coroutine a task step ran, or the
callback), and every garbage collection as ``gc<generation> <ms> <collected>``.

    .venv/bin/python -m benchmarks.looplag drive     # paced run + 1,000 codeActions, then the summary
"""

from __future__ import annotations

import asyncio
import collections
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO


def _describe(handle: Any) -> str:
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return f"task {getattr(coro, '__qualname__', repr(coro))}"
    name = getattr(callback, "__qualname__", None) or repr(callback)
    return f"callback {name}"


def install(out: TextIO, threshold_ms: float) -> None:
    """Time every loop callback and every GC; write the slow ones to ``out``."""
    original = asyncio.events.Handle._run

    def timed(self: Any) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            original(self)
        finally:
            took = (time.perf_counter() - started) * 1000
            if took >= threshold_ms:
                used = (time.thread_time() - cpu) * 1000
                out.write(f"loop {time.time():.3f} {took:.2f} {_describe(self)} [cpu {used:.2f}]\n")

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]

    from pygls.protocol.json_rpc import JsonRPCProtocol

    handle = JsonRPCProtocol.handle_message

    def timed_message(self: Any, message: Any) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            handle(self, message)
        finally:
            took = (time.perf_counter() - started) * 1000
            if took >= threshold_ms:
                what = getattr(message, "method", None) or "response"
                used = (time.thread_time() - cpu) * 1000
                out.write(f"msg {time.time():.3f} {took:.2f} {what} [cpu {used:.2f}]\n")

    JsonRPCProtocol.handle_message = timed_message  # type: ignore[method-assign]
    gc_started: list[float] = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            out.write(f"gc{info['generation']} {time.time():.3f} {(time.perf_counter() - gc_started[0]) * 1000:.2f} "
                      f"{info['collected']}\n")

    gc.callbacks.append(on_gc)


def serve() -> None:
    out = open(os.environ["CORTEX_LAG_FILE"], "a", buffering=1)  # lives as long as the server
    install(out, float(os.environ.get("CORTEX_LAG_MS", "2")))
    if os.environ.get("BENCH_LAG_NO_FREEZE"):  # compare: the warm-up without gc.freeze()
        from cortex_lsp.server import warmup

        original_warm = warmup.warm

        async def warm_unfrozen(ls: Any, modules: Any = warmup.MODULES, *, freeze: bool = True) -> Any:
            return await original_warm(ls, modules, freeze=False)

        warmup.warm = warm_unfrozen  # type: ignore[assignment]
    from cortex_lsp.cli import main

    sys.argv = ["cortex-lsp"]
    raise SystemExit(main([]))


def summary(path: Path, since: float = 0.0, until: float = float("inf")) -> str:
    """The slow callbacks and collections between ``since`` and ``until`` (``time.time()``)."""
    loop: collections.defaultdict[str, list[float]] = collections.defaultdict(list)
    cpu: collections.defaultdict[str, list[float]] = collections.defaultdict(list)
    gcs: collections.defaultdict[str, list[float]] = collections.defaultdict(list)
    for line in path.read_text().splitlines():
        kind, at, took, what = [*line.split(" ", 3), ""][:4]
        if since <= float(at) <= until:
            if kind.startswith("gc"):
                gcs[kind].append(float(took))
                continue
            name, _, used = what.partition(" [cpu ")
            loop[f"{kind} {name}"].append(float(took))
            cpu[f"{kind} {name}"].append(float(used.rstrip("]") or 0))
    lines = ["slow loop callbacks and message handlers (≥ threshold): count, max ms, total ms (of it on CPU), what"]
    for what, values in sorted(loop.items(), key=lambda kv: -sum(kv[1]))[:25]:
        lines.append(f"{len(values):6d} {max(values):8.1f} {sum(values):9.1f} ({sum(cpu[what]):7.1f})  {what}")
    lines.append("garbage collections: count, max ms, total ms")
    for gen, values in sorted(gcs.items()):
        lines.append(f"{gen}: {len(values):6d} {max(values):8.2f} {sum(values):9.1f}")
    return "\n".join(lines)


async def drive(actions: int, rate: float, out: Path, window: list[float]) -> list[float]:
    from benchmarks.lsp_bench import ANSWER, Session, _cancel, _is_token, _script_direct
    from benchmarks.model_proc import ModelProcess

    with ModelProcess() as model, tempfile.TemporaryDirectory() as folder:
        _script_direct(model)
        model.on({"content": ANSWER}, contains="capital of Japan")
        model.on({"content": " ".join(f"tok{i}" for i in range(int(rate * 600))), "token_delay": 1 / rate},
                 contains="STREAMPACE")
        s = await Session.start(model.url, Path(folder), CORTEX_LAG_FILE=str(out))
        try:
            _, fut = s.ask("What is the capital of Japan?")
            await fut
            mark = len(s.client.notes)
            _, fut = s.ask("STREAMPACE: write a long text")
            await s.client.wait_note(_is_token, mark, fut)
            busy: list[float] = []
            window.append(time.time())
            while len(busy) < actions and not fut.done():
                busy.append(await s.code_action())
                await asyncio.sleep(0.01)
            window.append(time.time())
            await _cancel(s, fut)
        finally:
            await s.client.close()
    return busy


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] != "drive":
        serve()
        return
    import benchmarks.lsp_bench as lsp_bench
    from benchmarks.common import ms, pct

    out = Path(tempfile.gettempdir()) / f"cortex-looplag-{os.getpid()}.txt"
    # the benchmark's Session spawns ``sys.executable -m cortex_lsp``: point it at this module instead
    lsp_bench.SERVER_MODULE = "benchmarks.looplag"
    if "--no-freeze" in sys.argv:
        os.environ["BENCH_LAG_NO_FREEZE"] = "1"
    window: list[float] = []
    count = next((int(a) for a in sys.argv[2:] if a.isdigit()), 1000)
    busy = asyncio.run(drive(count, 200, out, window))
    print(f"{len(busy)} codeActions while a run streams at 200 tokens/s: median {ms(pct(busy, 0.5))}, "
          f"p99 {ms(pct(busy, 0.99))}, p99.9 {ms(pct(busy, 0.999))}, max {ms(max(busy))}")
    print("while measuring:\n" + summary(out, *window))
    print("before (start-up, warm-up, first ask):\n" + summary(out, 0, window[0]))


if __name__ == "__main__":
    main()
