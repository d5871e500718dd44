"""The event loop stays the editor's while heavy work runs: code actions during document indexing, and
a hostile 150 MB model stream (RSS, how much of it was read, code actions meanwhile).

    .venv/bin/python -m benchmarks --only loop --no-write
    .venv/bin/python -m benchmarks.loop_bench index 60     # 300 × 1 MB files, 60 s of sampling
    .venv/bin/python -m benchmarks.loop_bench flood

Both through the real server (stdio, raw client) and the scripted model process; code actions are sent
2 ms apart from the moment the ask is sent until its result arrives (or, for indexing, until the
sampling window ends and the run is cancelled).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Row, med, ms, pct
from benchmarks.lsp_bench import BUSY_GAP, Session, _cancel, _script_direct, during_run
from benchmarks.lspclient import tree_rss_mb, wait_quiet
from benchmarks.model_proc import ModelProcess
from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER

FILES = 300
FILE_BYTES = 1024 * 1024
FLOOD_BYTES = 150 * 1024 * 1024


def _write_folder(root: Path) -> None:
    words = " ".join(f"word{i % 997} topic{i % 53}" for i in range(200)) + "\n"
    block = (words * (FILE_BYTES // len(words) + 1))[:FILE_BYTES - 64]
    for n in range(FILES):
        (root / f"doc{n:03}.txt").write_text(f"# Document {n}\n{block}", encoding="utf-8")


async def indexing(window: float) -> Row:
    """Code actions while ``doc_search`` indexes 300 × 1 MB text files (sampled for ``window`` seconds)."""
    with ModelProcess() as model, tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "ws").mkdir()
        await asyncio.to_thread(_write_folder, Path(folder) / "ws")
        s = await Session.start(model.url, Path(folder))
        try:
            await wait_quiet(s.client.pid)
            idle = [await s.code_action() for _ in range(200)]
            plan = ('{"kind": "tools", "steps": ["Search the documents with doc_search"], '
                    '"tools": ["doc_search"]}')
            model.reset()
            model.on({"content": plan}, contains=ROLE_PLANNER, first=True)
            model.on({"content": "Found it."}, contains="[doc_search result]")
            model.on({"tool_calls": [{"name": "doc_search", "arguments": {"action": "search", "query": "topic42"}}]},
                     contains=ROLE_EXECUTOR)
            sent, fut = s.ask("Search the documents for topic42")
            busy: list[float] = []
            deadline = time.perf_counter() + window
            while not fut.done() and time.perf_counter() < deadline:
                busy.append(await s.code_action())
                await asyncio.sleep(BUSY_GAP)
            finished = fut.done()
            took = time.perf_counter() - sent
            outcome = ""
            if finished:
                result = (await fut)[1]
                calls = [c["tool"] for c in result.get("tool_calls", [])]
                outcome = f"; the run {result.get('stop_reason')} with tools {calls}: {result.get('answer', '')[:99]!r}"
            else:
                await _cancel(s, fut)
        finally:
            await s.client.close()
    return Row(f"`textDocument/codeAction` while `doc_search` indexes {FILES} × 1 MB text files",
               f"{ms(med(busy))} / {ms(pct(busy, 0.99))}", f"idle: {ms(med(idle))} / {ms(pct(idle, 0.99))}",
               f"max {ms(max(busy, default=float('nan')))}", "p99 ≤ 50 ms", pct(busy, 0.99) <= 50,
               note=f"{len(busy)} samples 2 ms apart over {took:.0f} s of indexing"
                    + (outcome if finished else f" (sampling stopped at {window:.0f} s, the run was cancelled)"),
               raw={"idle": idle, "busy": busy, "finished": finished})


async def flood() -> Row:
    """A 150 MB answer from a hostile model: RSS growth, the bytes it wrote before the server stopped
    reading, the answer's size, and code actions meanwhile."""
    with ModelProcess() as model, tempfile.TemporaryDirectory() as folder:
        s = await Session.start(model.url, Path(folder))
        try:
            await wait_quiet(s.client.pid)
            _script_direct(model)
            model.on({"content": "warm"}, contains="Hello")
            _, fut = s.ask("Hello")
            await fut
            before = tree_rss_mb(s.client.pid)
            model.on({"content": "Here: ", "flood_bytes": FLOOD_BYTES}, contains="whole text")
            sent, fut = s.ask("Give me the whole text")
            busy = await during_run(s, fut)
            at, result = await fut
            after = tree_rss_mb(s.client.pid)
            answer_kb = len(result["answer"].encode()) / 1024
        finally:
            await s.client.close()
    grown = after - before
    return Row("a hostile 150 MB answer: server RSS growth; codeAction meanwhile",
               f"+{grown:.0f} MB; answer {answer_kb:.0f} KB in {(at - sent) * 1000:.0f} ms",
               f"codeAction {ms(med(busy))} / {ms(pct(busy, 0.99))}", "—", "RSS growth ≤ 50 MB",
               grown <= 50, note=f"{len(busy)} codeActions 2 ms apart over the run; RSS {before:.0f} → {after:.0f} MB",
               raw={"before": before, "after": after, "busy": busy})


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "index"
    print(f"load average {os.getloadavg()[0]:.2f}")
    row = asyncio.run(indexing(float(argv[1]) if len(argv) > 1 else 60) if what == "index" else flood())
    print(row.markdown())
    print(row.note)


if __name__ == "__main__":
    main(sys.argv[1:])
