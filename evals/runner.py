"""Run cases against the real server: one fresh server, workspace and data folder per case.

Each case gets a temporary folder ``<work>/<case id>/`` with ``ws/`` (the editor folder, seeded with the
case's files) and ``data/`` (``CORTEX_DATA_DIR``: fresh memory), and its own ``python -m cortex_lsp``.
Turns run in order; a turn marked ``parallel`` starts together with the one before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.cases import Case, Turn
from evals.checks import CaseOutcome, TurnOutcome, judge
from evals.client import EvalClient

CANCEL_GRACE_SECONDS = 10.0
SETTLE_SECONDS = 3.0
DEAD_URL = "http://127.0.0.1:9"  # nothing listens on the discard port: "Ollama is not running"
REPO_ROOT = Path(__file__).resolve().parent.parent
WARM_SECONDS = 120.0


@dataclass(frozen=True)
class RunConfig:
    """How to reach the model, and the budgets each server gets."""

    backend: str = "embedded"             # embedded | ollama | openai
    model: str = ""                       # chat model name (embedded: optional GGUF path)
    embed_model: str = ""
    base_url: str = ""                    # Ollama / OpenAI-compatible base URL
    run_seconds: float | None = None      # CORTEX_MAX_RUN_SECONDS
    max_steps: int | None = None          # CORTEX_MAX_AGENT_STEPS
    work_dir: Path = Path("/tmp/cortex-evals")
    extra_env: dict[str, str] = field(default_factory=dict)
    #: wait for the server's warm-up before the first turn (the user opened the editor, then asked)
    wait_warm: bool = False

    def env(self, data_dir: Path, case: Case) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
        env.update({"CORTEX_DATA_DIR": str(data_dir), "CORTEX_CONFIG": str(data_dir / "no-user-config.yaml"),
                    "CORTEX_LOG_LEVEL": "INFO"})
        # the server runs this checkout's package (its cwd is the case folder, where the installed one would win)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        if self.backend == "embedded":
            # auto with no Ollama answering: the server starts its own llama.cpp child.
            env.update({"CORTEX_MODEL_BACKEND": "auto", "CORTEX_OLLAMA_BASE_URL": DEAD_URL})
            if self.model:
                env["CORTEX_LOCAL_MODEL_PATH"] = self.model
        elif self.backend == "ollama":
            env["CORTEX_MODEL_BACKEND"] = "ollama"
            if self.base_url:
                env["CORTEX_OLLAMA_BASE_URL"] = self.base_url
        elif self.backend == "openai":
            env["CORTEX_MODEL_BACKEND"] = "openai"
            if self.base_url:
                env["CORTEX_OPENAI_BASE_URL"] = self.base_url
        else:
            raise ValueError(f"unknown backend {self.backend!r}")
        if self.backend != "embedded" and self.model:
            for key in ("CORTEX_OLLAMA_MODEL", "CORTEX_REASONING_MODEL", "CORTEX_CODE_MODEL"):
                env[key] = self.model
        if self.embed_model:
            env["CORTEX_EMBED_MODEL"] = self.embed_model
        if self.run_seconds is not None:
            env["CORTEX_MAX_RUN_SECONDS"] = str(self.run_seconds)
        if self.max_steps is not None:
            env["CORTEX_MAX_AGENT_STEPS"] = str(self.max_steps)
        env.update(self.extra_env)
        env.update(case.env)
        return env


def _argument(turn: Turn, root: Path, session: str | None) -> dict[str, Any] | None:
    uri = (turn.uri if "://" in turn.uri else (root / turn.uri).as_uri()) if turn.uri else None
    rng = None
    if turn.range:
        a, b, c, d = turn.range
        rng = {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}
    if turn.command == "cortex.ask":
        arg: dict[str, Any] = {"message": turn.message}
        if session:
            arg["session_id"] = session
        if uri:
            arg["uri"] = uri
        if rng:
            arg["range"] = rng
        return arg
    if turn.command in ("cortex.run", "cortex.explain"):
        arg = {"uri": uri}
        if rng:
            arg["range"] = rng
        return arg
    if turn.command == "cortex.memory.search":
        return {"query": turn.message}
    return None


class CaseDriver:
    def __init__(self, case: Case, config: RunConfig, client: EvalClient, root: Path, deadline: float) -> None:
        self.case, self.config, self.client, self.root, self.deadline = case, config, client, root, deadline
        self.session: str | None = None

    async def turn(self, index: int, spec: Turn) -> TurnOutcome:
        if spec.delay:
            await asyncio.sleep(spec.delay)
        token = f"eval-{index}-{uuid.uuid4().hex[:8]}"
        session = None if spec.new_session else self.session
        out = TurnOutcome(index=index, command=spec.command, started=time.monotonic())
        edits_before = self.client.rec.edit_requests
        task = asyncio.create_task(self.client.command(spec.command, _argument(spec, self.root, session), token))
        canceller = asyncio.create_task(self._cancel_later(token, spec.cancel_after)) \
            if spec.cancel_after is not None else None
        limit = max(1.0, self.deadline - time.monotonic())
        if spec.checks.max_seconds is not None:
            limit = min(limit, spec.checks.max_seconds + CANCEL_GRACE_SECONDS)
        try:
            done, _ = await asyncio.wait({task}, timeout=limit)
            if not done:  # over time: cancel like a user would, then give it a moment to answer
                self.client.cancel(token)
                done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_SECONDS)
                if not done:
                    task.cancel()
                    out.timed_out = True
                    out.error = "no result even after cancelling"
            if done:
                try:
                    out.result = task.result()
                except Exception as exc:
                    out.error = f"{type(exc).__name__}: {exc}"
        finally:
            if canceller is not None:
                canceller.cancel()
        out.ended = time.monotonic()
        await self._settle(token, out.result)
        out.progress_reports = sum(1 for p in self.client.rec.progress.get(token, []) if p.get("kind") == "report")
        out.edit_requests = self.client.rec.edit_requests - edits_before
        if isinstance(out.result, dict):
            run_id = str(out.result.get("run_id", ""))
            out.first_token = self.client.rec.first_token.get(run_id, 0.0)
            out.streamed_text = "".join(str((e.get("data") or {}).get("value", ""))
                                        for e in self.client.rec.events.get(run_id, []) if e.get("type") == "token")
            if spec.command == "cortex.ask" and out.result.get("session_id") and not spec.parallel:
                self.session = str(out.result["session_id"])
            elif spec.command == "cortex.session.new" and out.result.get("session_id"):
                self.session = str(out.result["session_id"])
        return out

    async def _settle(self, token: str, result: dict[str, Any] | None) -> None:
        """Notifications can be handled just after the response: wait for the run's ``done`` and ``end``."""
        run_id = str((result or {}).get("run_id", ""))
        rec = self.client.rec
        for _ in range(int(SETTLE_SECONDS / 0.02)):
            done = not run_id or any(e.get("type") == "done" for e in rec.events.get(run_id, []))
            ended = not run_id or any(p.get("kind") == "end" for p in rec.progress.get(token, []))
            if done and ended:
                return
            await asyncio.sleep(0.02)

    async def _cancel_later(self, token: str, after: float | None) -> None:
        while not self.client.rec.progress.get(token):  # noqa: ASYNC110 - progress arrives from the reader task
            await asyncio.sleep(0.05)
        await asyncio.sleep(after or 0.0)
        self.client.cancel(token)

    async def run(self) -> list[TurnOutcome]:
        outcomes: list[TurnOutcome] = []
        groups: list[list[tuple[int, Turn]]] = []
        for i, spec in enumerate(self.case.turns):
            if spec.parallel and groups:
                groups[-1].append((i, spec))
            else:
                groups.append([(i, spec)])
        for group in groups:
            if group[0][1].pause:
                await asyncio.sleep(group[0][1].pause)
            if time.monotonic() > self.deadline or not self.client.server_alive():
                break
            outcomes.extend(await asyncio.gather(*(self.turn(i, spec) for i, spec in group)))
        return outcomes


async def run_case(case: Case, config: RunConfig) -> CaseOutcome:
    """Seed a workspace, start a server, drive every turn, judge, stop the server."""
    folder = config.work_dir / case.id
    root, data = folder / "ws", folder / "data"
    root.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    for rel, text in case.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    outcome = CaseOutcome(case=case)
    began = time.monotonic()
    client = EvalClient(folder / "server.log", decline_edits=case.apply == "decline",
                        can_review=case.apply != "strict")
    try:
        await asyncio.wait_for(client.launch(config.env(data, case), root), 60)
        if config.wait_warm:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(client.warmed.wait(), WARM_SECONDS)
            began = time.monotonic()
        driver = CaseDriver(case, config, client, root, began + case.time_limit)
        outcome.turns = await driver.run()
        if not client.server_alive():
            outcome.crashed = f"the server exited (code {client._server.returncode if client._server else '?'})"
    except Exception as exc:
        outcome.crashed = f"{type(exc).__name__}: {exc}"
    finally:
        outcome.seconds = time.monotonic() - began
        await client.close()
    outcome.log_tail = client.log_tail()
    judge(outcome, root)
    _save(outcome, folder / "outcome.json")
    return outcome


def _save(outcome: CaseOutcome, path: Path) -> None:
    """Every turn's full result next to the server log, for reading a failure afterwards."""
    data = {"case": outcome.case.id, "passed": outcome.passed, "reasons": outcome.reasons,
            "crashed": outcome.crashed, "seconds": round(outcome.seconds, 1),
            "turns": [{"command": t.command, "result": t.result, "error": t.error, "timed_out": t.timed_out,
                       "seconds": round(t.seconds, 1), "first_token_seconds": t.first_token_seconds,
                       "progress_reports": t.progress_reports,
                       "edit_requests": t.edit_requests} for t in outcome.turns]}
    path.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


async def run_cases(cases: list[Case], config: RunConfig, *, jobs: int = 1,
                    on_done: Callable[[CaseOutcome], None] | None = None) -> list[CaseOutcome]:
    """Every case, ``jobs`` at a time, in the given order."""
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(case: Case) -> CaseOutcome:
        async with gate:
            outcome = await run_case(case, config)
        if on_done is not None:
            on_done(outcome)
        return outcome

    return list(await asyncio.gather(*(one(c) for c in cases)))
