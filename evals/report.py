"""The results table: model, machine, date, wall time, pass rate per category and a line per case."""

from __future__ import annotations

import os
import platform
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from evals.cases import CATEGORIES
from evals.checks import CaseOutcome


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


def render(outcomes: list[CaseOutcome], info: RunInfo) -> str:
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
    lines += ["## Per category", "", "| category | passed | total | rate |", "|---|---:|---:|---:|"]
    for cat in [c for c in CATEGORIES if c in by_cat]:
        group = by_cat[cat]
        ok = sum(o.passed for o in group)
        lines.append(f"| {cat} | {ok} | {len(group)} | {100 * ok / len(group):.0f}% |")
    lines += ["", "## Per case", "", "| case | category | result | s | reason |", "|---|---|---|---:|---|"]
    for o in outcomes:
        mark = "pass" if o.passed else "FAIL"
        lines.append(f"| {o.case.id} | {o.case.category} | {mark} | {o.seconds:.0f} | {_cell(_why(o))} |")
    return "\n".join(lines) + "\n"
