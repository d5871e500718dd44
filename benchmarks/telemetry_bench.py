"""What telemetry costs: spawn → ``initialize`` result, a direct ``cortex.ask`` and a 10-step tool run,
each with ``telemetry_enabled`` off (the default) and on (exporting to a real OTLP/HTTP receiver on
127.0.0.1, tests/otlp_receiver.py). Medians of interleaved runs; nothing here asserts a time.

    .venv/bin/python -m benchmarks.telemetry_bench [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import med, pct
from benchmarks.lsp_bench import ANSWER, Session, _script_direct, _script_tool_run, server_env
from benchmarks.lspclient import RawClient
from benchmarks.model_proc import ModelProcess
from tests.otlp_receiver import OtlpReceiver

ROOT = Path(__file__).resolve().parents[1]
#: the servers run this checkout's cortex_lsp (their cwd is a temporary folder, not this one)
HERE = {"PYTHONPATH": str(ROOT)}


async def _startup(env: dict[str, str], root: Path) -> float:
    started = time.perf_counter()
    client = await RawClient.spawn([sys.executable, "-m", "cortex_lsp"], env=env, cwd=root)
    try:
        await client.initialize(root)
        return (time.perf_counter() - started) * 1000
    finally:
        await client.close()


async def _ask_pair(s: Session, model: ModelProcess, run: int) -> tuple[float, float]:
    """(direct ask ms, 10-step tool run ms) on one session."""
    _script_direct(model)
    model.on({"content": ANSWER}, contains="capital of Japan")
    sent, fut = s.ask("What is the capital of Japan?")
    at, result = await fut
    assert result["stop_reason"] == "answered", result
    direct = (at - sent) * 1000
    _script_tool_run(model, run, 0.0)
    sent, fut = s.ask("Use the calculator to compute ten sums, one per step.")
    at, result = await fut
    assert result["stop_reason"] == "answered" and len(result["tool_calls"]) == 10, result
    return direct, (at - sent) * 1000


def _line(what: str, off: list[float], on: list[float]) -> str:
    return (f"| {what} | {med(off):.1f} ms (p90 {pct(off, 0.9):.1f}) | {med(on):.1f} ms (p90 {pct(on, 0.9):.1f}) "
            f"| {med(on) / med(off):.2f}× |")


async def main(runs: int) -> None:
    receiver = OtlpReceiver().start()
    try:
        with tempfile.TemporaryDirectory() as folder, ModelProcess() as model:
            tmp = Path(folder)
            root = tmp / "ws"
            root.mkdir()
            (tmp / "data").mkdir()
            on_env = {**HERE, "CORTEX_TELEMETRY_ENABLED": "true", "CORTEX_OTEL_ENDPOINT": receiver.url}
            start_off: list[float] = []
            start_on: list[float] = []
            for _ in range(runs):
                start_off.append(await _startup(server_env(model.url, tmp / "data", **HERE), root))
                start_on.append(await _startup(server_env(model.url, tmp / "data", **on_env), root))
            sessions = {name: await Session.start(model.url, tmp / name, CORTEX_MAX_AGENT_STEPS="12", **env)
                        for name, env in (("off", HERE), ("on", on_env))}
            results: dict[str, tuple[list[float], list[float]]] = {"off": ([], []), "on": ([], [])}
            try:
                for run in range(runs + 2):  # interleaved; the first two of each open the stores and warm up
                    for name, s in sessions.items():
                        direct, tools = await _ask_pair(s, model, run)
                        if run >= 2:
                            results[name][0].append(direct)
                            results[name][1].append(tools)
            finally:
                for s in sessions.values():
                    await s.client.close()
        print("| what | telemetry off | telemetry on | on / off |\n|---|---|---|---|")
        print(_line("spawn → `initialize` result", start_off, start_on))
        print(_line("`cortex.ask` direct answer", results["off"][0], results["on"][0]))
        print(_line("`cortex.ask` 10-step tool run", results["off"][1], results["on"][1]))
        spans = receiver.spans()
        print(f"\n{len(spans)} spans received; {len({s.trace_id for s in spans})} traces.")
    finally:
        receiver.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    asyncio.run(main(parser.parse_args().runs))
