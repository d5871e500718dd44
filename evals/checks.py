"""Judge a case: each check compares what the server did (result, events, edits, files) with the case.

Pure functions over plain data, so the runner's own tests can show a check fails when it should.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.cases import Case, Checks


@dataclass
class TurnOutcome:
    """What one turn produced, as the client saw it."""

    index: int
    command: str
    result: dict[str, Any] | None = None     # the command's result (None when it failed or timed out)
    error: str = ""                          # JSON-RPC error / exception text
    timed_out: bool = False
    started: float = 0.0                     # monotonic seconds
    ended: float = 0.0
    progress_reports: int = 0                # $/progress "report" messages for this turn's token
    streamed_text: str = ""                  # cortex/event token values for this run id
    edit_requests: int = 0                   # workspace/applyEdit requests received during the turn
    first_token: float = 0.0                 # monotonic time of the run's first answer token (0: none)

    @property
    def first_token_seconds(self) -> float | None:
        return max(0.0, self.first_token - self.started) if self.first_token else None

    @property
    def seconds(self) -> float:
        return max(0.0, self.ended - self.started)

    @property
    def answer(self) -> str:
        """The agent's answer; for cortex.run, its output, error and reason (what the user sees)."""
        result = self.result or {}
        if "answer" in result:
            return str(result["answer"])
        parts = [result.get(k) for k in ("stdout", "stderr", "value", "error", "reason")]
        return "\n".join(str(p) for p in parts if p)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return list((self.result or {}).get("tool_calls") or [])

    @property
    def stop_reason(self) -> str:
        return str((self.result or {}).get("stop_reason", ""))


@dataclass
class CaseOutcome:
    case: Case
    turns: list[TurnOutcome] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    crashed: str = ""                        # the runner could not drive the case (server died, ...)
    log_tail: str = ""

    @property
    def passed(self) -> bool:
        return not self.reasons and not self.crashed


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def check_turn(checks: Checks, turn: TurnOutcome, all_turns: list[TurnOutcome]) -> list[str]:
    """Reasons this turn fails its checks (empty: it passes)."""
    label = f"turn {turn.index + 1}"
    if turn.timed_out:
        return [f"{label}: no result within the time limit"]
    if checks.expect_error is not None:
        if turn.result is not None:
            return [f"{label}: expected an error containing {checks.expect_error!r}, got a result"]
        if checks.expect_error.lower() not in turn.error.lower():
            return [f"{label}: error {_short(turn.error, 100)!r} lacks {checks.expect_error!r}"]
        return []
    if turn.result is None:
        return [f"{label}: {turn.command} failed: {_short(turn.error, 120)}"]
    reasons: list[str] = []
    answer = turn.answer.lower()
    missing = [w for w in checks.contains if w.lower() not in answer]
    if missing:
        reasons.append(f"{label}: answer lacks {missing} (got {_short(turn.answer)!r})")
    if checks.any_of and not any(w.lower() in answer for w in checks.any_of):
        reasons.append(f"{label}: answer has none of {list(checks.any_of)} (got {_short(turn.answer)!r})")
    present = [w for w in checks.not_contains if w.lower() in answer]
    if present:
        reasons.append(f"{label}: answer must not contain {present}")
    calls = turn.tool_calls
    for tool in checks.tools_used:
        hits = [c for c in calls if c.get("tool") == tool]
        if not hits:
            reasons.append(f"{label}: {tool} was not called (called: {[c.get('tool') for c in calls]})")
        elif checks.tools_succeeded and not any(c.get("success") for c in hits):
            reasons.append(f"{label}: {tool} was called but never succeeded")
    ran = [t for t in checks.tools_forbidden if any(c.get("tool") == t and c.get("success") for c in calls)]
    if ran:
        reasons.append(f"{label}: forbidden tool(s) ran: {ran}")
    if checks.no_tools and calls:
        reasons.append(f"{label}: expected no tool calls, got {[c.get('tool') for c in calls]}")
    if checks.stop_reason and turn.stop_reason not in checks.stop_reason:
        reasons.append(f"{label}: stop_reason {turn.stop_reason!r}, expected {list(checks.stop_reason)}")
    if checks.edits_applied is not None:
        applied = sum(1 for e in (turn.result.get("edits") or []) if e.get("applied"))
        if applied != checks.edits_applied:
            reasons.append(f"{label}: {applied} edit(s) applied, expected {checks.edits_applied}")
    if checks.edit_requested and not turn.edit_requests:
        reasons.append(f"{label}: the client got no applyEdit request, expected one (for the user's review)")
    if checks.no_edit_requests and turn.edit_requests:
        reasons.append(f"{label}: the client got {turn.edit_requests} applyEdit request(s), expected none")
    if checks.streamed and turn.progress_reports == 0:
        reasons.append(f"{label}: no $/progress report arrived")
    if checks.stream_matches_answer:
        streamed = _norm(turn.streamed_text)
        if turn.stop_reason == "answered" and streamed and streamed not in _norm(turn.answer):
            reasons.append(f"{label}: streamed text is not this run's answer ({_short(turn.streamed_text)!r})")
        others = [t for t in all_turns if t is not turn and t.result is not None]
        if any(t.result and t.result.get("run_id") == turn.result.get("run_id") for t in others):
            reasons.append(f"{label}: shares a run id with another turn")
    if checks.finishes_before is not None:
        if checks.finishes_before >= len(all_turns):
            reasons.append(f"{label}: finishes_before names turn {checks.finishes_before}, which doesn't exist")
        else:
            other = all_turns[checks.finishes_before]
            if not other.timed_out and other.ended and turn.ended >= other.ended:
                reasons.append(f"{label}: ended {turn.ended - other.ended:.1f} s after turn "
                               f"{checks.finishes_before + 1} (it was blocked)")
    if checks.max_seconds is not None and turn.seconds > checks.max_seconds:
        reasons.append(f"{label}: took {turn.seconds:.1f} s, limit {checks.max_seconds:.0f} s")
    missing_keys = [k for k in checks.result_has if k not in turn.result]
    if missing_keys:
        reasons.append(f"{label}: result lacks {missing_keys}")
    return reasons


def check_files(case: Case, root: Path) -> list[str]:
    """Reasons the workspace afterwards fails the case's file checks."""
    reasons = []
    for rel in case.files_exist:
        if not (root / rel).is_file():
            reasons.append(f"file {rel} does not exist")
    for rel in case.files_absent:
        if (root / rel).exists():
            reasons.append(f"file {rel} exists but must not")
    for rel, text in case.file_contains.items():
        path = root / rel
        content = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        if content is None:
            reasons.append(f"file {rel} does not exist (should contain {text!r})")
        elif text.lower() not in content.lower():
            reasons.append(f"file {rel} lacks {text!r}")
    if case.files_unchanged:
        for rel, seeded in case.files.items():
            path = root / rel
            if not path.is_file() or path.read_text(encoding="utf-8", errors="replace") != seeded:
                reasons.append(f"seeded file {rel} was changed or removed")
    return reasons


def judge(outcome: CaseOutcome, root: Path) -> None:
    """Fill ``outcome.reasons`` from every turn's checks and the file checks."""
    for turn, spec in zip(outcome.turns, outcome.case.turns, strict=False):
        outcome.reasons.extend(check_turn(spec.checks, turn, outcome.turns))
    if len(outcome.turns) < len(outcome.case.turns) and not outcome.crashed:
        outcome.reasons.append(f"only {len(outcome.turns)} of {len(outcome.case.turns)} turns ran")
    outcome.reasons.extend(check_files(outcome.case, root))
    if outcome.seconds > outcome.case.time_limit:
        outcome.reasons.append(f"case took {outcome.seconds:.0f} s, limit {outcome.case.time_limit:.0f} s")
