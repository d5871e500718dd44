"""The first ask after start-up against the second: executeCommand → first ``$/progress`` and → first token.

Each sample is a fresh server (real process, scripted model): ``initialize``, ``initialized``, a document
opened, then the benchmark waits until the server has gone quiet (its CPU time stops growing — the
background warm-up, when there is one, is done) the way a user reads the editor before typing a question,
and asks twice. What a slow start costs shows as the first ask's lag over the second.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Row, med, ms
from benchmarks.lsp_bench import ANSWER, Session, _is_token, _script_direct
from benchmarks.lspclient import wait_quiet
from benchmarks.model_proc import ModelProcess


async def _one_ask(s: Session) -> tuple[float, float, float]:
    mark = len(s.client.notes)
    sent, fut = s.ask("What is the capital of Japan?")
    await s.client.wait_note(_is_token, mark, fut)
    at, result = await fut
    assert result["stop_reason"] == "answered", result
    notes = s.client.notes[mark:]
    progress = next(n.at for n in notes if n.method == "$/progress")
    token = next(n.at for n in notes if _is_token(n))
    return (progress - sent) * 1000, (token - sent) * 1000, (at - sent) * 1000


async def first_vs_second(samples: int) -> Row:
    first: list[tuple[float, float, float]] = []
    second: list[tuple[float, float, float]] = []
    quiet: list[float] = []
    with ModelProcess() as model:
        for _ in range(samples):
            with tempfile.TemporaryDirectory() as folder:
                _script_direct(model)
                model.on({"content": ANSWER}, contains="capital of Japan")
                s = await Session.start(model.url, Path(folder))
                try:
                    quiet.append(await wait_quiet(s.client.pid))
                    first.append(await _one_ask(s))
                    second.append(await _one_ask(s))
                finally:
                    await s.client.close()
    p1, t1, d1 = (med([x[i] for x in first]) for i in range(3))
    p2, t2, d2 = (med([x[i] for x in second]) for i in range(3))
    met = p1 <= 100 and t1 <= t2 + 100
    return Row("first ask after start: executeCommand → first `$/progress`; → first token; → result",
               f"first ask: {ms(p1)}; {ms(t1)}; {ms(d1)}", f"second ask: {ms(p2)}; {ms(t2)}; {ms(d2)}",
               f"first token +{t1 - t2:.1f} ms", "first `$/progress` ≤ 100 ms; first token ≤ second + 100 ms",
               met,
               note=f"{samples} fresh servers (medians); each asked after it went quiet "
                    f"({med(quiet):.1f} s after `initialized`, the background warm-up included)",
               raw={"first": first, "second": second, "quiet": quiet})
