"""Run the whole benchmark suite side by side and write the results table into docs/benchmarks.md.

    .venv/bin/python -m benchmarks            # full run (~5 minutes on 2 cores)
    .venv/bin/python -m benchmarks --quick    # fewer samples, recall at 1k/10k only (~2 minutes)
    .venv/bin/python -m benchmarks --only lsp,startup --no-write

Not part of the test run: numbers depend on the machine; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import Row, table

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "img" / "recall_vs_facts.png"
SCALE_PLOT = ROOT / "docs" / "img" / "index_vs_files.png"
PARTS = ("lsp", "warm", "loop", "startup", "sandbox", "recall", "real", "scale")


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    distro = ""
    try:
        distro = subprocess.run(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"], capture_output=True,
                                text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return (f"{distro or platform.platform()}, {os.cpu_count()} cores ({cpu}){mem}, "
            f"Python {platform.python_version()}; "
            f"load average at start {load:.2f} (the machine is shared with other jobs, so expect noise)")


async def collect(parts: set[str], quick: bool, actions: int | None = None) -> list[Row]:
    rows: list[Row] = []
    if "lsp" in parts:
        from benchmarks.lsp_bench import Options, run_all

        rows += await run_all(Options(quick=quick, actions=actions))
    if "warm" in parts:
        from benchmarks.warm_bench import first_vs_second

        rows += await first_vs_second(3 if quick else 7)
    if "loop" in parts:
        from benchmarks.loop_bench import flood, indexing

        rows.append(await indexing(60 if quick else 120))
        rows.append(await flood())
    if "startup" in parts:
        from benchmarks.startup_bench import startup

        rows.append(await startup(5 if quick else 15))
    if "sandbox" in parts:
        from benchmarks.sandbox_row import sandbox

        rows.append(await sandbox(20 if quick else 60))
    if "recall" in parts or "scale" in parts:
        from benchmarks.recall_bench import recall

        # the scale part asks for 100k facts (loading them takes minutes)
        sizes = [1000, 10_000] if quick else [1000, 10_000, 50_000]
        if "scale" in parts:
            sizes = [1000, 10_000, 100_000]
        row, _ = await recall(sizes, 60 if quick else 200, load_budget_s=900 if "scale" in parts else 240, plot=PLOT)
        rows.append(row)
    if "real" in parts:
        from benchmarks.real_bench import make_run, real_model

        rows += await real_model(3 if quick else 7)
        rows.append(await asyncio.to_thread(make_run))
    if "scale" in parts:
        from benchmarks.scale_bench import scale

        sizes = [300, 1000, 3000] if quick else [1000, 3000, 8500]
        rows += await scale(sizes, 30, SCALE_PLOT)
    return rows


def write(rows: list[Row], quick: bool, took: float, section: str) -> None:
    start, end = f"<!-- results:{section}:start -->", f"<!-- results:{section}:end -->"
    block = "\n".join([
        start,
        f"Run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}{' (--quick)' if quick else ''}, "
        f"{took:.0f} s. Machine: {machine()}.",
        "",
        table(rows),
        "",
        *[f"- {r.figure}: {r.note}" for r in rows if r.note],
        end,
    ])
    text = DOC.read_text() if DOC.exists() else f"# Benchmarks\n\n{start}\n{end}\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text += "\n" + block + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Cortex LSP benchmark suite")
    parser.add_argument("--quick", action="store_true", help="fewer samples; recall at 1k and 10k facts only")
    parser.add_argument("--only", default=",".join(PARTS), help=f"comma-separated subset of {', '.join(PARTS)}")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/benchmarks.md alone")
    parser.add_argument("--section", default="main",
                        help="which results block of docs/benchmarks.md to replace (default: main)")
    parser.add_argument("--actions", type=int, default=None,
                        help="codeActions per idle/busy sample (default 150 quick, 1000 full; ≥ 1000 for p99.9)")
    parser.add_argument("--json", type=Path, help="also dump every sample to this file")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    unknown = parts - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    started = time.perf_counter()
    rows = asyncio.run(collect(parts, args.quick, args.actions))
    took = time.perf_counter() - started
    print(table(rows))
    for r in rows:
        if r.note:
            print(f"- {r.figure}: {r.note}")
    if args.json:
        args.json.write_text(json.dumps([{"figure": r.figure, "met": r.met, "raw": r.raw} for r in rows], indent=1))
    if not args.no_write:
        write(rows, args.quick, took, args.section)
        print(f"written to {DOC.relative_to(ROOT)}")
    return 0 if all(r.met is not False for r in rows) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
