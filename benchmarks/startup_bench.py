"""Spawn → ``initialize`` result: Cortex vs jedi-language-server, both started by their console
script in the same venv (``cortex-lsp``, ``jedi-language-server``) and driven by the same raw client."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, med, ms, pct
from benchmarks.lsp_bench import server_env
from benchmarks.lspclient import RawClient


async def _once(argv: list[str], env: dict[str, str], root: Path) -> float:
    started = time.perf_counter()
    client = await RawClient.spawn(argv, env=env, cwd=root)
    try:
        await client.initialize(root)
        return (time.perf_counter() - started) * 1000
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
        for i in range(runs + 1):  # the first pair warms the page cache and is not counted
            pair = [("cortex", [str(bindir / "cortex-lsp")]), ("jedi", [str(bindir / "jedi-language-server")])]
            if i % 2:
                pair.reverse()  # alternate the order: neither always runs first
            for name, argv in pair:
                took = await _once(argv, env, root)
                if i:
                    (cortex if name == "cortex" else jedi).append(took)
    ratio = med(cortex) / med(jedi)
    return Row("spawn → `initialize` result", f"{ms(med(cortex))} / {ms(pct(cortex, 0.99))}",
               f"jedi-language-server: {ms(med(jedi))} / {ms(pct(jedi, 0.99))}", f"{ratio:.2f}×", "≤ 1.0×",
               ratio <= 1.0, raw={"cortex": cortex, "jedi": jedi})
