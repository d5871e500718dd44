"""Spawn → ``initialize`` result: Cortex vs jedi-language-server, both started by their console
script in the same venv (``cortex-lsp``, ``jedi-language-server``) and driven by the same raw client.

Besides the wall time (the target), the note gives the CPU time each server used until it answered
(``/proc/<pid>/stat``: user + system): on a shared machine the wall time mostly measures the wait for a
core, while the CPU time is the work done, and moves little with the load."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, med, ms, pct
from benchmarks.lsp_bench import server_env
from benchmarks.lspclient import RawClient


def _cpu_ms(pid: int) -> float:
    """User + system CPU time of a live process so far, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def _once(argv: list[str], env: dict[str, str], root: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) from spawn to the ``initialize`` result."""
    started = time.perf_counter()
    client = await RawClient.spawn(argv, env=env, cwd=root)
    try:
        await client.initialize(root)
        wall = (time.perf_counter() - started) * 1000
        return wall, _cpu_ms(client.pid)
    finally:
        await client.close()


async def startup(runs: int) -> Row:
    if importlib.util.find_spec("jedi_language_server") is None:
        return Row("spawn → `initialize` result", "n/a", "jedi-language-server not installed", "—", "≤ 1.0×", None)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = tmp / "ws"
        root.mkdir()
        env = server_env("http://127.0.0.1:9", tmp / "data")
        bindir = Path(sys.executable).parent
        cortex: list[float] = []
        jedi: list[float] = []
        cpu: dict[str, list[float]] = {"cortex": [], "jedi": []}
        for i in range(runs + 1):  # the first pair warms the page cache and is not counted
            pair = [("cortex", [str(bindir / "cortex-lsp")]), ("jedi", [str(bindir / "jedi-language-server")])]
            if i % 2:
                pair.reverse()  # alternate the order: neither always runs first
            for name, argv in pair:
                took, used = await _once(argv, env, root)
                if i:
                    (cortex if name == "cortex" else jedi).append(took)
                    cpu[name].append(used)
    ratio = med(cortex) / med(jedi)
    note = (f"CPU time until the answer (median): Cortex {ms(med(cpu['cortex']))}, jedi-language-server "
            f"{ms(med(cpu['jedi']))} ({med(cpu['cortex']) / med(cpu['jedi']):.2f}×); {runs} runs each, alternating")
    return Row("spawn → `initialize` result", f"{ms(med(cortex))} / {ms(pct(cortex, 0.99))}",
               f"jedi-language-server: {ms(med(jedi))} / {ms(pct(jedi, 0.99))}", f"{ratio:.2f}×", "≤ 1.0×",
               ratio <= 1.0, note=note, raw={"cortex": cortex, "jedi": jedi, "cpu": cpu})
