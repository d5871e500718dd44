"""The results table: model, machine, date, wall time, pass rate per category and a line per case."""

from __future__ import annotations

import os
import platform
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evals.cases import CATEGORIES
from evals.checks import CaseOutcome

if TYPE_CHECKING:
    from evals.bare import BareOutcome
    from evals.latency import LatencyReport


@dataclass(frozen=True)
class RunInfo:
    model: str
    backend: str
    date: str
    wall_seconds: float
    command: str
    cortex_version: str = ""
    notes: str = ""


def machine() -> str:
    """nproc, RAM, CPU model and the load when the run ended (the machine may be shared)."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.0f} GB RAM"
                break
    except OSError:
        pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    parts = [f"{os.cpu_count()} CPUs (nproc)", ram, cpu, f"{platform.system()} {platform.release()}", load]
    return ", ".join(p for p in parts if p)


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _why(outcome: CaseOutcome) -> str:
    if outcome.crashed:
        return "runner: " + outcome.crashed
    if outcome.reasons:
        return "; ".join(outcome.reasons)
    last = outcome.turns[-1] if outcome.turns else None
    if last is None or last.result is None:
        return "ok"
    tools = ",".join(sorted({str(c.get("tool")) for o in outcome.turns for c in o.tool_calls})) or "no tools"
    return f"ok ({last.stop_reason or 'result'}; {tools})"


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "–"


def _bare_section(outcomes: list[CaseOutcome], bare: list[BareOutcome]) -> list[str]:
    ours = {o.case.id: o for o in outcomes}
    ok_bare = sum(b.passed for b in bare)
    ok_ours = sum(ours[b.case.id].passed for b in bare if b.case.id in ours)
    ratio = f"{ok_ours / ok_bare:.2f}" if ok_bare else "–"
    lines = ["", "## The bare model, asked the same questions directly", "",
             f"Cortex {ok_ours}/{len(bare)}, bare model {ok_bare}/{len(bare)} (ratio {ratio}). "
             "Bare: one user message, no system prompt, the same temperature and answer cap.", "",
             "| case | Cortex | turn s | bare | s | bare first token s | bare answer |",
             "|---|---|---:|---|---:|---:|---|"]
    for b in bare:
        o = ours.get(b.case.id)
        mine = ("pass" if o.passed else "FAIL") if o else "–"
        secs = f"{o.turns[0].seconds:.1f}" if o and o.turns else "–"
        first = f"{b.first_token_seconds:.2f}" if b.first_token_seconds is not None else "–"
        lines.append(f"| {b.case.id} | {mine} | {secs} | {'pass' if b.passed else 'FAIL'} | {b.seconds:.1f} | "
                     f"{first} | {_cell(b.error or b.answer, 80)} |")
    return lines


def _latency_section(latency: LatencyReport) -> list[str]:
    first, whole = latency.warm()
    lines = ["", "## Latency of a direct question (one server, questions in a row)", ""]
    if latency.error:
        lines += [f"The measurement failed: {_cell(latency.error, 200)}", ""]
    lines += [f"Warm (all but the first): first answer token median "
              f"{'–' if first is None else f'{first:.2f}'} s, whole answer median "
              f"{'–' if whole is None else f'{whole:.2f}'} s.", "",
              "| # | question | first token s | whole s |", "|---:|---|---:|---:|"]
    for i, (q, f, w) in enumerate(zip(latency.questions, latency.first_token, latency.whole, strict=False), 1):
        lines.append(f"| {i}{' (cold)' if i == 1 else ''} | {_cell(q, 60)} | "
                     f"{'–' if f is None else f'{f:.2f}'} | {w:.2f} |")
    return lines


def render(outcomes: list[CaseOutcome], info: RunInfo, *, bare: list[BareOutcome] | None = None,
           latency: LatencyReport | None = None) -> str:
    total = len(outcomes)
    passed = sum(o.passed for o in outcomes)
    by_cat: dict[str, list[CaseOutcome]] = defaultdict(list)
    for o in outcomes:
        by_cat[o.case.category].append(o)
    rate = f"{passed}/{total} ({100 * passed / total:.0f}%)" if total else "0/0"
    lines = [
        f"# Live battery: {info.model} ({info.backend})",
        "",
        "| | |",
        "|---|---|",
        f"| model | {info.model} |",
        f"| backend | {info.backend} |",
        f"| date | {info.date} |",
        f"| machine | {_cell(machine(), 300)} |",
        f"| cortex-lsp | {info.cortex_version or '?'} |",
        f"| wall time | {info.wall_seconds / 60:.1f} min ({info.wall_seconds:.0f} s) |",
        f"| passed | **{rate}** |",
        f"| command | `{_cell(info.command, 300)}` |",
        "",
    ]
    if info.notes:
        lines += [info.notes, ""]
    lines += ["## Per category", "",
              "| category | passed | total | rate | median s per turn | median first token s |",
              "|---|---:|---:|---:|---:|---:|"]
    for cat in [c for c in CATEGORIES if c in by_cat]:
        group = by_cat[cat]
        ok = sum(o.passed for o in group)
        turns = [t for o in group for t in o.turns if t.result is not None]
        firsts = [t.first_token_seconds for t in turns if t.first_token_seconds is not None]
        lines.append(f"| {cat} | {ok} | {len(group)} | {100 * ok / len(group):.0f}% | "
                     f"{_median([t.seconds for t in turns])} | {_median(firsts)} |")
    if bare:
        lines += _bare_section(outcomes, bare)
    if latency is not None:
        lines += _latency_section(latency)
    lines += ["", "## Per case", "", "| case | category | result | s | reason |", "|---|---|---|---:|---|"]
    for o in outcomes:
        mark = "pass" if o.passed else "FAIL"
        lines.append(f"| {o.case.id} | {o.case.category} | {mark} | {o.seconds:.0f} | {_cell(_why(o))} |")
    return "\n".join(lines) + "\n"
