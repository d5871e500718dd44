"""Warm latency of a direct question through the real server: first answer token and whole answer.

One server (and, for the embedded default, one llama.cpp child) answers the questions one after the
other; the first is the cold one and is reported apart, the rest are the warm figures.
"""

from __future__ import annotations

import statistics
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from evals.cases import Case
from evals.client import EvalClient
from evals.runner import RunConfig


@dataclass
class LatencyReport:
    questions: list[str] = field(default_factory=list)
    first_token: list[float | None] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)
    error: str = ""

    def warm(self) -> tuple[float | None, float | None]:
        """Medians of the warm questions (all but the first): first token, whole answer."""
        firsts = [f for f in self.first_token[1:] if f is not None]
        wholes = self.whole[1:]
        return (statistics.median(firsts) if firsts else None, statistics.median(wholes) if wholes else None)


async def measure(questions: list[str], config: RunConfig, work: Path) -> LatencyReport:
    report = LatencyReport()
    folder = work / "_latency"
    root, data = folder / "ws", folder / "data"
    root.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    client = EvalClient(folder / "server.log")
    try:
        await client.launch(config.env(data, Case(id="latency", category="ops", turns=())), root)
        for question in questions:
            token = f"lat-{uuid.uuid4().hex[:8]}"
            began = time.monotonic()
            result = await client.command("cortex.ask", {"message": question}, token)
            ended = time.monotonic()
            run_id = str((result or {}).get("run_id", ""))
            first = client.rec.first_token.get(run_id)
            report.questions.append(question)
            report.first_token.append(None if first is None else first - began)
            report.whole.append(ended - began)
    except Exception as exc:
        report.error = f"{type(exc).__name__}: {exc}"
    finally:
        await client.close()
    return report
