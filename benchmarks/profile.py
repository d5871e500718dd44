"""Profile the server with py-spy while the benchmark drives one scenario, and print the hottest frames.

    .venv/bin/python -m benchmarks.profile busy   # a run streaming as fast as it can + codeActions
    .venv/bin/python -m benchmarks.profile ask    # direct asks back to back
    .venv/bin/python -m benchmarks.profile tool   # 10-step calculator runs

Needs ``py-spy`` in the venv (``.venv/bin/pip install py-spy``); the raw profile is kept for
flamegraph.pl.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lsp_bench import ANSWER, Session, _script_direct, _script_tool_run
from benchmarks.model_proc import ModelProcess


async def drive(what: str, seconds: float, out: Path) -> None:
    with ModelProcess() as model, tempfile.TemporaryDirectory() as folder:
        s = await Session.start(model.url, Path(folder), CORTEX_MAX_AGENT_STEPS="12")
        _script_direct(model)
        model.on({"content": ANSWER}, contains="capital of Japan")
        model.on({"content": " ".join(f"tok{i}" for i in range(20000))}, contains="STREAMLONG")
        _, fut = s.ask("What is the capital of Japan?")
        await fut  # opens the memory store before profiling
        spy = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(s.client.pid), "-d", str(int(seconds)),
            "-r", "200", "-f", "raw", "-o", str(out), "--nonblocking")
        started = time.perf_counter()
        run = 0
        while time.perf_counter() - started < seconds:
            run += 1
            if what == "busy":
                _, fut = s.ask("STREAMLONG: write a long text")
                while not fut.done():
                    await s.code_action()
                    await asyncio.sleep(0.003)
            elif what == "tool":
                _script_tool_run(model, run, 0.2)
                _, fut = s.ask("Use the calculator to compute ten sums, one per step.")
                await fut
                _script_direct(model)
            else:
                _, fut = s.ask("What is the capital of Japan?")
                await fut
        await spy.wait()
        await s.client.close()


def summary(path: Path, top: int) -> None:
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        stack, count = line.rsplit(" ", 1)
        total += int(count)
        for frame in set(stack.split(";")):
            inclusive[frame.split(" (")[0]] += int(count)
    for frame, hits in inclusive.most_common(top):
        print(f"{hits / max(total, 1) * 100:5.1f}%  {frame}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["busy", "ask", "tool"])
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "cortex-profile.txt")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    asyncio.run(drive(args.what, args.seconds, args.out))
    summary(args.out, args.top)


if __name__ == "__main__":
    main()
