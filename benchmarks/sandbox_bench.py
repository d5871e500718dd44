"""Benchmark: the ``print(1)`` round trip through the sandbox, warm pool vs. spawn-per-snippet.

    .venv/bin/python benchmarks/sandbox_bench.py [--runs 50] [--isolation auto|bwrap|none]

* warm pool: a worker is already started and waiting (the pool starts the next one while a snippet
  runs; the benchmark waits for it between runs, as an editor user would naturally);
* warm pool, back to back: no waiting between runs (the next worker may still be starting);
* spawn per snippet: a fresh worker (interpreter start, imports, isolation) for every snippet.

Prints the median, the 10th and 90th percentiles in milliseconds, and the isolation in use.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool


def _summary(label: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p10 = ordered[max(0, int(len(ordered) * 0.1) - 1)]
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    median = statistics.median(samples)
    return f"{label:<34} median {median:7.1f} ms   p10 {p10:7.1f}   p90 {p90:7.1f}   (n={len(samples)})"


async def _measure(pool: SandboxPool, root: Path, runs: int, *, wait: bool) -> list[float]:
    samples: list[float] = []
    await pool.run("print(0)", roots=[root])  # first worker + isolation probe: not measured
    for _ in range(runs):
        if wait:
            await pool.wait_ready()
        started = time.perf_counter()
        result = await pool.run("print(1)", roots=[root])
        samples.append((time.perf_counter() - started) * 1000)
        if result.stdout != "1\n":
            raise SystemExit(f"unexpected result: {result}")
    return samples


async def main(runs: int, isolation: str) -> None:
    settings = Settings.model_validate({"sandbox_isolation": isolation})
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        warm = SandboxPool(settings)
        try:
            plan = await warm.isolation()
            warm_samples = await _measure(warm, root, runs, wait=True)
            burst_samples = await _measure(warm, root, runs, wait=False)
        finally:
            await warm.aclose()
        cold = SandboxPool(settings, keep_warm=False)
        try:
            cold_samples = await _measure(cold, root, runs, wait=False)
        finally:
            await cold.aclose()
    print(f"Python {sys.version.split()[0]}; isolation: {plan.label}")
    print(_summary("warm pool (worker ready)", warm_samples))
    print(_summary("warm pool, back to back", burst_samples))
    print(_summary("spawn per snippet", cold_samples))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--isolation", choices=["auto", "bwrap", "none"], default="auto")
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.isolation))
