"""The sandbox ``print(1)`` figure for the suite, reusing :mod:`benchmarks.sandbox_bench`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Row, med, ms, pct
from benchmarks.sandbox_bench import _measure
from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool


async def sandbox(runs: int) -> Row:
    settings = Settings.model_validate({"sandbox_isolation": "auto"})
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        warm_pool = SandboxPool(settings)
        try:
            plan = await warm_pool.isolation()
            warm = await _measure(warm_pool, root, runs, wait=True)
        finally:
            await warm_pool.aclose()
        cold_pool = SandboxPool(settings, keep_warm=False)
        try:
            cold = await _measure(cold_pool, root, runs, wait=False)
        finally:
            await cold_pool.aclose()
    speedup = med(cold) / med(warm)
    return Row("sandbox `print(1)` round trip (warm worker)", f"{ms(med(warm))} / {ms(pct(warm, 0.99))}",
               f"fresh process per snippet: {ms(med(cold))} / {ms(pct(cold, 0.99))}", f"{speedup:.1f}× faster",
               "≥ 4× faster, ≤ 25 ms warm", speedup >= 4 and med(warm) <= 25,
               note=f"isolation: {plan.label}", raw={"warm": warm, "cold": cold})
