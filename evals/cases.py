"""Eval cases as data: the YAML schema (turns, checks, seeded files) and its loader.

A case file is a YAML list of cases. Every check is explicit data, so a reader can see what "pass"
means without reading the runner. Text checks are case-insensitive.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

CATEGORIES = (
    "knowledge", "maths", "python", "code", "files", "docs", "memory", "safety", "multistep", "ops",
)
COMMANDS = ("cortex.ask", "cortex.run", "cortex.explain", "cortex.memory.search", "cortex.session.new")
#: how the eval's editor answers edits: it reviews and accepts, reviews and declines, or (``strict``) it
#: cannot review (no change annotations, as a plain client or the CLI with --yes) and applies what it gets
ApplyMode = Literal["accept", "decline", "strict"]


class CaseError(ValueError):
    """A case file that doesn't follow the schema (names the case and the field)."""


def _strs(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise CaseError(f"{where}: expected a string or a list of strings, got {value!r}")


@dataclass(frozen=True)
class Checks:
    """What one turn's result must satisfy. Empty fields check nothing."""

    contains: tuple[str, ...] = ()          # every one must be in the answer
    any_of: tuple[str, ...] = ()            # at least one must be in the answer
    not_contains: tuple[str, ...] = ()      # none may be in the answer
    tools_used: tuple[str, ...] = ()        # each was called (successfully when tools_succeeded)
    tools_succeeded: bool = False
    tools_forbidden: tuple[str, ...] = ()   # none ran successfully (a call the guards refused is fine)
    no_tools: bool = False                  # no tool was called at all
    stop_reason: tuple[str, ...] = ()       # one of these
    edits_applied: int | None = None        # exactly this many edits applied
    no_edit_requests: bool = False          # the client received no workspace/applyEdit at all
    edit_requested: bool = False            # the client received at least one workspace/applyEdit
    streamed: bool = False                  # at least one $/progress report arrived for the run
    stream_matches_answer: bool = False     # the streamed tokens of this run are in its own answer
    finishes_before: int | None = None      # this turn ends before turn N (index) ends
    max_seconds: float | None = None        # the turn's own time limit (wall clock, seen by the client)
    result_has: tuple[str, ...] = ()        # keys the command result must have (non-agent commands)
    expect_error: str | None = None         # the command must fail with an error containing this

    @classmethod
    def parse(cls, raw: Mapping[str, Any], where: str) -> Checks:
        known = set(cls.__dataclass_fields__)
        unknown = set(raw) - known
        if unknown:
            raise CaseError(f"{where}: unknown check(s) {sorted(unknown)}")
        kw: dict[str, Any] = {}
        for name in ("contains", "any_of", "not_contains", "tools_used", "tools_forbidden", "stop_reason",
                     "result_has"):
            if name in raw:
                kw[name] = _strs(raw[name], f"{where}.{name}")
        for name in ("tools_succeeded", "no_tools", "no_edit_requests", "edit_requested", "streamed",
                     "stream_matches_answer"):
            if name in raw:
                kw[name] = bool(raw[name])
        for name in ("edits_applied", "finishes_before"):
            if raw.get(name) is not None:
                kw[name] = int(raw[name])
        if raw.get("expect_error") is not None:
            kw["expect_error"] = str(raw["expect_error"])
        if raw.get("max_seconds") is not None:
            kw["max_seconds"] = float(raw["max_seconds"])
        return cls(**kw)


@dataclass(frozen=True)
class Turn:
    message: str = ""
    command: str = "cortex.ask"
    new_session: bool = False
    uri: str | None = None                  # workspace-relative path of the selection's document
    range: tuple[int, int, int, int] | None = None  # start line, start char, end line, end char
    parallel: bool = False                  # start together with the previous turn
    delay: float = 0.0                      # seconds to wait before sending (after the group starts)
    pause: float = 0.0                      # seconds to wait before this turn (e.g. memory consolidation)
    cancel_after: float | None = None       # cancel (workDoneProgress/cancel) this long after the first report
    checks: Checks = field(default_factory=Checks)

    @classmethod
    def parse(cls, raw: Any, where: str) -> Turn:
        if isinstance(raw, str):
            return cls(message=raw)
        if not isinstance(raw, Mapping):
            raise CaseError(f"{where}: a turn is a string or a mapping")
        known = {"message", "command", "new_session", "uri", "range", "parallel", "delay", "pause",
                 "cancel_after", "checks"}
        unknown = set(raw) - known
        if unknown:
            raise CaseError(f"{where}: unknown turn field(s) {sorted(unknown)}")
        command = str(raw.get("command", "cortex.ask"))
        if command not in COMMANDS:
            raise CaseError(f"{where}.command: {command!r} is not one of {COMMANDS}")
        message = str(raw.get("message", ""))
        if command == "cortex.ask" and not message.strip():
            raise CaseError(f"{where}.message: cortex.ask needs a message")
        rng = raw.get("range")
        if rng is not None and (not isinstance(rng, list) or len(rng) != 4):
            raise CaseError(f"{where}.range: expected [start_line, start_char, end_line, end_char]")
        cancel = raw.get("cancel_after")
        return cls(
            message=message, command=command, new_session=bool(raw.get("new_session", False)),
            uri=raw.get("uri"), range=tuple(int(x) for x in rng) if rng else None,  # type: ignore[arg-type]
            parallel=bool(raw.get("parallel", False)), delay=float(raw.get("delay", 0.0)),
            pause=float(raw.get("pause", 0.0)), cancel_after=None if cancel is None else float(cancel),
            checks=Checks.parse(raw.get("checks") or {}, f"{where}.checks"),
        )


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    turns: tuple[Turn, ...]
    description: str = ""
    files: Mapping[str, str] = field(default_factory=dict)   # seeded into the workspace folder
    env: Mapping[str, str] = field(default_factory=dict)     # extra CORTEX_* for this case's server
    apply: ApplyMode = "accept"
    files_exist: tuple[str, ...] = ()
    files_absent: tuple[str, ...] = ()
    file_contains: Mapping[str, str] = field(default_factory=dict)
    files_unchanged: bool = False            # every seeded file is byte-identical afterwards
    time_limit: float = 60.0                 # whole case, wall clock

    @classmethod
    def parse(cls, raw: Any, source: str) -> Case:
        if not isinstance(raw, Mapping) or "id" not in raw:
            raise CaseError(f"{source}: every case is a mapping with an id")
        cid = str(raw["id"])
        where = f"{source}:{cid}"
        known = {"id", "category", "description", "files", "env", "apply", "turns", "files_exist",
                 "files_absent", "file_contains", "files_unchanged", "time_limit"}
        unknown = set(raw) - known
        if unknown:
            raise CaseError(f"{where}: unknown field(s) {sorted(unknown)}")
        category = str(raw.get("category", ""))
        if category not in CATEGORIES:
            raise CaseError(f"{where}.category: {category!r} is not one of {CATEGORIES}")
        turns_raw = raw.get("turns")
        if not isinstance(turns_raw, list) or not turns_raw:
            raise CaseError(f"{where}.turns: at least one turn")
        turns = tuple(Turn.parse(t, f"{where}.turns[{i}]") for i, t in enumerate(turns_raw))
        if turns[0].parallel:
            raise CaseError(f"{where}.turns[0].parallel: the first turn has nothing to run alongside")
        apply = str(raw.get("apply", "accept"))
        if apply not in ("accept", "decline", "strict"):
            raise CaseError(f"{where}.apply: accept, decline or strict")
        files = raw.get("files") or {}
        for path in [*files, *_strs(raw.get("files_exist"), where), *_strs(raw.get("files_absent"), where)]:
            if Path(path).is_absolute() or ".." in Path(path).parts:
                raise CaseError(f"{where}: file paths are workspace-relative, got {path!r}")
        return cls(
            id=cid, category=category, turns=turns, description=str(raw.get("description", "")),
            files={str(k): str(v) for k, v in files.items()},
            env={str(k): str(v) for k, v in (raw.get("env") or {}).items()},
            apply=apply,  # type: ignore[arg-type]
            files_exist=_strs(raw.get("files_exist"), f"{where}.files_exist"),
            files_absent=_strs(raw.get("files_absent"), f"{where}.files_absent"),
            file_contains={str(k): str(v) for k, v in (raw.get("file_contains") or {}).items()},
            files_unchanged=bool(raw.get("files_unchanged", False)),
            time_limit=float(raw.get("time_limit", 60.0)),
        )


def load_cases(paths: Iterable[Path]) -> list[Case]:
    """Every case in the given YAML files (or folders of them), ids unique."""
    cases: list[Case] = []
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.yaml")) if path.is_dir() else [path])
    for file in files:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8")) or []
        except yaml.YAMLError as exc:
            raise CaseError(f"{file}: {exc}") from None
        if not isinstance(data, list):
            raise CaseError(f"{file}: a case file is a YAML list")
        cases.extend(Case.parse(item, file.name) for item in data)
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise CaseError(f"duplicate case id {case.id!r}")
        seen.add(case.id)
    return cases


def select(cases: list[Case], only: Iterable[str] = (), ids: Iterable[str] = (),
           limit: int | None = None) -> list[Case]:
    """Cases in the given categories / with the given ids; at most ``limit`` per category."""
    wanted, wanted_ids = set(only), set(ids)
    chosen = [c for c in cases if (not wanted or c.category in wanted) and (not wanted_ids or c.id in wanted_ids)]
    if limit is None:
        return chosen
    counts: dict[str, int] = {}
    out = []
    for case in chosen:
        counts[case.category] = counts.get(case.category, 0) + 1
        if counts[case.category] <= limit:
            out.append(case)
    return out
