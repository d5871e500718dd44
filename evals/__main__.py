"""Command line: ``python -m evals --backend embedded|ollama|openai --model NAME --out FILE.md``."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.metadata
import re
import shlex
import sys
import time
from pathlib import Path

from evals.cases import CATEGORIES, load_cases, select
from evals.checks import CaseOutcome
from evals.report import RunInfo, render
from evals.runner import RunConfig, run_cases

HERE = Path(__file__).resolve().parent
EMBEDDED_MODEL = "smollm2-135m-instruct"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m evals", description=__doc__)
    p.add_argument("--backend", choices=["embedded", "ollama", "openai"], default="embedded")
    p.add_argument("--model", default="", help="chat model (embedded: a GGUF path; default: the packaged one)")
    p.add_argument("--embed-model", default="", help="embedding model (default: the server's)")
    p.add_argument("--base-url", default="", help="Ollama or OpenAI-compatible base URL")
    p.add_argument("--out", type=Path, help="results table (default evals/results/<model>-<date>.md)")
    p.add_argument("--only", action="append", default=[], choices=CATEGORIES, help="a category (repeatable)")
    p.add_argument("--case", action="append", default=[], help="a case id (repeatable)")
    p.add_argument("--limit", type=int, help="at most N cases per category")
    p.add_argument("--cases", type=Path, action="append", help="case files or folders (default evals/cases)")
    p.add_argument("--jobs", type=int, default=1, help="cases at once (each has its own server)")
    p.add_argument("--run-seconds", type=float, help="CORTEX_MAX_RUN_SECONDS for every server")
    p.add_argument("--max-steps", type=int, help="CORTEX_MAX_AGENT_STEPS for every server")
    p.add_argument("--time-scale", type=float, default=1.0, help="multiply every case's time limits")
    p.add_argument("--warm", action="store_true",
                   help="each case waits for its server's warm-up before the first turn (an editor opened first)")
    p.add_argument("--work-dir", type=Path, help="where case folders and server logs go (kept)")
    p.add_argument("--notes", default="", help="a paragraph for the results file")
    p.add_argument("--bare", action="store_true",
                   help="also ask the selected knowledge cases of the bare model directly (the baseline)")
    p.add_argument("--latency", type=int, default=0, metavar="N",
                   help="also time N direct questions in a row on one server (first token, whole answer)")
    return p.parse_args(argv)


def _scaled(cases: list, factor: float) -> list:  # type: ignore[type-arg]
    if factor == 1.0:
        return cases
    import dataclasses
    out = []
    for c in cases:
        turns = tuple(dataclasses.replace(t, checks=dataclasses.replace(
            t.checks, max_seconds=None if t.checks.max_seconds is None else t.checks.max_seconds * factor))
            for t in c.turns)
        out.append(dataclasses.replace(c, time_limit=c.time_limit * factor, turns=turns))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cases = select(load_cases(args.cases or [HERE / "cases"]), args.only, args.case, args.limit)
    cases = _scaled(cases, args.time_scale)
    if not cases:
        print("no cases selected", file=sys.stderr)
        return 2
    model = args.model or (EMBEDDED_MODEL if args.backend == "embedded" else "qwen2.5:7b")
    label = Path(model).stem if args.backend == "embedded" and args.model else model
    now = dt.datetime.now(dt.UTC)
    stamp = now.strftime("%Y%m%d-%H%M%S")
    work = args.work_dir or Path(f"/tmp/cortex-evals-{stamp}")
    config = RunConfig(backend=args.backend, model=args.model if args.backend != "embedded" or args.model else "",
                       embed_model=args.embed_model, base_url=args.base_url, run_seconds=args.run_seconds,
                       max_steps=args.max_steps, work_dir=work, wait_warm=args.warm)
    out = args.out or HERE / "results" / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)}-{now:%Y-%m-%d}.md"
    print(f"{len(cases)} cases, backend {args.backend}, model {label}; logs in {work}", flush=True)
    counter = {"n": 0}

    def done(o: CaseOutcome) -> None:
        counter["n"] += 1
        mark = "pass" if o.passed else "FAIL"
        why = "" if o.passed else " — " + (o.crashed or "; ".join(o.reasons))[:200]
        print(f"[{counter['n']}/{len(cases)}] {mark} {o.case.id} ({o.seconds:.0f} s){why}", flush=True)

    began = time.monotonic()
    outcomes = asyncio.run(run_cases(cases, config, jobs=args.jobs, on_done=done))
    wall = time.monotonic() - began
    bare = None
    knowledge = [c for c in cases if c.category == "knowledge" and c.turns and c.turns[0].command == "cortex.ask"]
    if args.bare and knowledge:
        from evals.bare import ask_bare

        bare = asyncio.run(ask_bare(knowledge, config))
        print(f"bare model: {sum(b.passed for b in bare)}/{len(bare)} knowledge cases", flush=True)
    latency = None
    if args.latency > 0:
        from evals.latency import measure

        pool = [c.turns[0].message for c in load_cases([HERE / "cases"]) if c.category == "knowledge"]
        questions = [pool[i % len(pool)] for i in range(args.latency + 1)]
        latency = asyncio.run(measure(questions, config, work))
        first, whole = latency.warm()
        print(f"latency (warm medians): first token {first} s, whole {whole} s", flush=True)
    try:
        version = importlib.metadata.version("cortex-lsp")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    info = RunInfo(model=label, backend=args.backend, date=now.strftime("%Y-%m-%d %H:%M UTC"), wall_seconds=wall,
                   command="python -m evals " + shlex.join(sys.argv[1:] if argv is None else argv),
                   cortex_version=version, notes=args.notes)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(outcomes, info, bare=bare, latency=latency), encoding="utf-8")
    passed = sum(o.passed for o in outcomes)
    print(f"{passed}/{len(outcomes)} passed in {wall / 60:.1f} min; table: {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
