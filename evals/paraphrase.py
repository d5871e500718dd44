"""The paraphrase set: requests phrased by someone who had not seen the router, scored on mechanics.

``python -m evals.paraphrase [--tsv FILE] [--routing-only] [--backend embedded] [--out FILE.md]``

A set is a TSV file (``message``, ``route``, ``expect``; ``\\n`` in a message is a line break; lines
starting with ``#`` are comments) over the workspace in ``evals/paraphrase/workspace/``. Routes:
``read``, ``csv`` (a value or an aggregate of a data file), ``compute``, ``list``, ``doc_search``,
``run_code``, ``write_given`` (expect ``FILE: text``) and ``direct``.

* ``--routing-only`` decides every route in process (intent, meaning classifier, word tables), with no
  model and no server: the decision per case, the confusion between routes, and the routing time.
* otherwise every case runs through the real server (:mod:`evals.runner`, one server per case) and is
  scored on the **mechanics**: the route's tool ran (``read_file`` for read/csv, ``calculator`` or
  ``python_exec`` for compute, ``list_dir``, ``doc_search``, ``python_exec`` for run_code, a written
  file for write_given, no tool for direct) and the expected text is in the answer (for write_given:
  in the file). A direct case's knowledge (the expected word in the answer) is reported apart: it
  measures the model, not the routing.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from evals.cases import Case, Checks, Turn
from evals.checks import CaseOutcome
from evals.report import machine
from evals.runner import RunConfig, run_cases

HERE = Path(__file__).resolve().parent / "paraphrase"
WORKSPACE = HERE / "workspace"
ROUTES = ("read", "csv", "compute", "list", "doc_search", "run_code", "write_given", "direct")
#: the routes that both mean "read a file and answer from it" (a key of config.json is either)
READ_FAMILY = frozenset({"read", "csv"})
CATEGORY = {"read": "files", "csv": "files", "compute": "maths", "list": "files", "doc_search": "docs",
            "run_code": "python", "write_given": "files", "direct": "knowledge"}
TOOLS = ["read_file", "list_dir", "search_files", "write_file", "calculator", "python_exec", "doc_search",
         "current_time", "web_fetch"]


@dataclass(frozen=True)
class RouteCase:
    id: str
    message: str
    route: str
    expect: str


def load(path: Path) -> list[RouteCase]:
    cases: list[RouteCase] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#") or line.startswith("message\t"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[1] not in ROUTES:
            raise ValueError(f"{path}:{number}: expected message<TAB>route<TAB>expect, route one of {ROUTES}")
        message = parts[0].replace("\\n", "\n")
        cases.append(RouteCase(f"{path.stem}-{len(cases) + 1:03d}", message, parts[1], parts[2]))
    return cases


def workspace_files() -> dict[str, str]:
    return {str(p.relative_to(WORKSPACE)): p.read_text(encoding="utf-8")
            for p in sorted(WORKSPACE.rglob("*")) if p.is_file()}


def as_case(rc: RouteCase, files: dict[str, str]) -> Case:
    checks = Checks(contains=(rc.expect,))
    file_contains: dict[str, str] = {}
    if rc.route == "write_given":
        name, _, text = rc.expect.partition(": ")
        checks = Checks()
        file_contains = {name: text}
    elif rc.route == "direct":
        checks = Checks()  # knowledge is scored apart (see the module docstring)
    return Case(id=rc.id, category=CATEGORY[rc.route], turns=(Turn(message=rc.message, checks=checks),),
                description=rc.route, files=files, file_contains=file_contains, time_limit=90.0)


def decided(tool_calls: list[dict[str, object]], edits: int) -> str:
    """The route a run took, read from the tools it called."""
    called = [str(c.get("tool")) for c in tool_calls]
    if "write_file" in called or edits:
        return "write_given"
    for tool, route in (("calculator", "compute"), ("python_exec", "run_code"), ("doc_search", "doc_search"),
                        ("read_file", "read"), ("list_dir", "list")):
        if tool in called:
            return route
    return "direct" if not called else called[0]


def same_route(expected: str, got: str) -> bool:
    if expected in READ_FAMILY:
        return got in READ_FAMILY
    if expected == "compute":
        return got in ("compute", "run_code")  # code written and run to compute is the compute route too
    return expected == got


# -- routing only ----------------------------------------------------------------------------------

def route_label(message: str, classifier: object | None) -> tuple[str, str, float]:
    """(decided route, the classifier's reading, routing seconds) for one message, in process."""
    from cortex_lsp.agent.meaning import MeaningClassifier
    from cortex_lsp.agent.meaning_route import combine
    from cortex_lsp.agent.router import read_intent, route

    began = time.perf_counter()
    intent = read_intent(message)
    meaning = classifier.classify_sync(message, WORKSPACE, own_words=intent.words) \
        if isinstance(classifier, MeaningClassifier) else None
    ruled = route(intent, message=message, available=TOOLS)
    chosen = combine(ruled, meaning, intent, message=message, available=TOOLS,
                     exists=lambda name: (WORKSPACE / name).exists())
    seconds = time.perf_counter() - began
    tools = [c.tool for c in chosen.calls]
    if chosen.save_to:
        label = "write_given"
    elif chosen.run_written:  # (after looking for a data file that answers, when find_data is set too)
        label = "compute"
    elif chosen.find_data:
        label = "csv"
    else:
        label = decided([{"tool": t} for t in tools], 0)
    return label, meaning.describe() if meaning is not None else "no classifier", seconds


def routing_only(cases: list[RouteCase]) -> tuple[list[tuple[RouteCase, str, str, float]], str]:
    from cortex_lsp.agent.meaning import packaged_classifier

    classifier = packaged_classifier()
    if classifier is not None:
        classifier.prepare()
        classifier.prepare_project(WORKSPACE)  # as the server's warm-up does
        classifier.classify_sync("warm up")
    rows = [(c, *route_label(c.message, classifier)) for c in cases]
    return rows, "meaning classifier + word tables" if classifier is not None else "word tables only"


def confusion(pairs: list[tuple[str, str]]) -> list[str]:
    got_labels = sorted({g for _, g in pairs} | set(ROUTES), key=lambda x: (x not in ROUTES, x))
    counts = Counter(pairs)
    lines = ["| expected \\ decided | " + " | ".join(got_labels) + " |",
             "|---|" + "---:|" * len(got_labels)]
    for expected in ROUTES:
        if not any(e == expected for e, _ in pairs):
            continue
        lines.append(f"| {expected} | " + " | ".join(str(counts.get((expected, g), "")) for g in got_labels) + " |")
    return lines


def _cell(text: str, limit: int = 90) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_routing(rows: list[tuple[RouteCase, str, str, float]], how: str, source: Path) -> str:
    right = sum(same_route(c.route, got) for c, got, _, _ in rows)
    times = sorted(s for *_, s in rows)
    lines = [f"# Routing only: {source.name} ({how})", "",
             f"- {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}; {machine()}",
             f"- right route: **{right}/{len(rows)} ({100 * right / len(rows):.0f}%)** "
             "(read and csv count as one route; compute also by code the model writes and runs)",
             f"- routing time per ask: median {statistics.median(times) * 1000:.1f} ms, "
             f"max {times[-1] * 1000:.1f} ms (intent parse + classifier + word tables)", "",
             "## Confusion", "", *confusion([(c.route, got) for c, got, _, _ in rows]), "",
             "## Per case", "", "| case | message | expected | decided | ok | meaning |", "|---|---|---|---|---|---|"]
    for c, got, meaning, _ in rows:
        lines.append(f"| {c.id} | {_cell(c.message)} | {c.route} | {got} | "
                     f"{'yes' if same_route(c.route, got) else '**no**'} | {_cell(meaning, 70)} |")
    return "\n".join(lines) + "\n"


# -- through the server ----------------------------------------------------------------------------

def mechanics_ok(rc: RouteCase, outcome: CaseOutcome) -> tuple[bool, str]:
    """(passed on mechanics, the route the run took)."""
    turn = outcome.turns[0] if outcome.turns else None
    if turn is None or turn.result is None:
        return False, "crashed"
    edits = sum(1 for e in (turn.result.get("edits") or []) if e.get("applied"))
    got = decided(turn.tool_calls, edits)
    if rc.route == "direct":
        return got == "direct" and not outcome.crashed, got
    return same_route(rc.route, got) and outcome.passed, got


def render_full(cases: list[RouteCase], outcomes: list[CaseOutcome], info: str, wall: float) -> str:
    by_id = {o.case.id: o for o in outcomes}
    rows = []
    elapsed: list[float] = []
    classify: list[float] = []
    added: list[float] = []
    for rc in cases:
        outcome = by_id[rc.id]
        ok, got = mechanics_ok(rc, outcome)
        seconds = outcome.turns[0].seconds if outcome.turns else 0.0
        answer = outcome.turns[0].answer if outcome.turns else outcome.crashed
        knows = rc.expect.lower() in answer.lower()
        rows.append((rc, ok, got, seconds, answer, knows))
        result = (outcome.turns[0].result or {}) if outcome.turns else {}
        if result.get("elapsed_ms") is not None:
            elapsed.append(float(result["elapsed_ms"]) / 1000)
        for note in result.get("notes") or []:
            found = re.search(r"meaning: .*?, ([\d.]+) ms; it added ([\d.]+) ms", str(note))
            if found:
                classify.append(float(found.group(1)))
                added.append(float(found.group(2)))
    right = sum(r[1] for r in rows)
    direct = [r for r in rows if r[0].route == "direct"]
    lines = [f"# Paraphrase set through the server: {info}", "",
             f"- {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}; {machine()}; wall {wall / 60:.1f} min",
             f"- mechanics: **{right}/{len(rows)} ({100 * right / len(rows):.0f}%)**; "
             f"median {statistics.median(r[3] for r in rows):.1f} s per ask",
             f"- server-side run time (the ask once the server is up, as ``elapsed_ms``): median "
             f"{statistics.median(elapsed) if elapsed else 0:.2f} s",
             f"- the meaning classifier: median {statistics.median(classify) if classify else 0:.1f} ms per ask; "
             f"time it ran on after the memory reads (what it added): median "
             f"{statistics.median(added) if added else 0:.1f} ms, max {max(added) if added else 0:.1f} ms "
             "(each case is the first ask of a fresh server)",
             f"- direct answers with the expected word (the model's knowledge, not scored above): "
             f"{sum(r[5] for r in direct)}/{len(direct)}", "",
             "## Per route", "", "| route | mechanics | median s |", "|---|---:|---:|"]
    for route in ROUTES:
        group = [r for r in rows if r[0].route == route]
        if group:
            lines.append(f"| {route} | {sum(r[1] for r in group)}/{len(group)} | "
                         f"{statistics.median(r[3] for r in group):.1f} |")
    lines += ["", "## Confusion", "", *confusion([(r[0].route, r[2]) for r in rows]), "",
              "## Per case", "", "| case | message | expected | decided | ok | s | answer |",
              "|---|---|---|---|---|---:|---|"]
    for rc, ok, got, seconds, answer, _ in rows:
        reasons = "; ".join(by_id[rc.id].reasons)
        lines.append(f"| {rc.id} | {_cell(rc.message, 60)} | {rc.route} `{_cell(rc.expect, 30)}` | {got} | "
                     f"{'yes' if ok else '**no**'} | {seconds:.1f} | {_cell(answer, 80)}"
                     f"{' — ' + _cell(reasons, 80) if reasons and not ok else ''} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.paraphrase", description=__doc__)
    p.add_argument("--tsv", type=Path, action="append", help="paraphrase sets (default: every TSV in evals/paraphrase)")
    p.add_argument("--routing-only", action="store_true", help="decide routes in process, no model, no server")
    p.add_argument("--backend", choices=["embedded", "ollama", "openai"], default="embedded")
    p.add_argument("--model", default="")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--cold", action="store_true",
                   help="ask at once (default: each case waits for its server's warm-up, as an editor opened "
                        "before the question would)")
    p.add_argument("--limit", type=int, help="at most N cases per set")
    p.add_argument("--case", action="append", default=[], help="a case id (repeatable)")
    p.add_argument("--out", type=Path, help="the report (default evals/results/paraphrase-<set>-<date>.md)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    sources = args.tsv or sorted(HERE.glob("*.tsv"))
    stamp = dt.datetime.now(dt.UTC)
    for source in sources:
        cases = [c for c in load(source) if not args.case or c.id in args.case][: args.limit]
        kind = "routing" if args.routing_only else args.backend
        out = args.out or HERE.parent / "results" / f"paraphrase-{source.stem}-{kind}-{stamp:%Y-%m-%d}.md"
        if args.routing_only:
            rows, how = routing_only(cases)
            text = render_routing(rows, how, source)
            right = sum(same_route(c.route, got) for c, got, _, _ in rows)
            print(f"{source.name}: right route {right}/{len(rows)}", flush=True)
        else:
            files = workspace_files()
            work = Path(f"/tmp/cortex-paraphrase-{stamp:%Y%m%d-%H%M%S}")
            config = RunConfig(backend=args.backend, model=args.model, work_dir=work, wait_warm=not args.cold)
            began = time.monotonic()

            def done(o: CaseOutcome) -> None:
                print(f"{o.case.id} {'pass' if o.passed else 'FAIL'} ({o.seconds:.0f} s)", flush=True)

            outcomes = asyncio.run(run_cases([as_case(c, files) for c in cases], config, jobs=args.jobs,
                                             on_done=done))
            text = render_full(cases, outcomes, f"{source.name}, {args.backend}", time.monotonic() - began)
            print(text.splitlines()[3], flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"report: {out} (load {' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
