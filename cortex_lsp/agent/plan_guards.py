"""Plan guards: correct the planner's plan from the user's own words, before anything runs.

Every guard reads only the user's own request (:func:`~cortex_lsp.intent.provenance.request_text`
of what they typed, with the selection and attachments removed), parsed once per run into the
:class:`~cortex_lsp.intent.intent.Intent` the run context carries (verbs with polarity and mood: "don't save", "how do I
delete…?" and "if you run it" ask for nothing). The selection, diagnostics, file contents and tool
results are never the user's words, so they can't ask for a delete, a web fetch or a save. Rules, in
order:

1. delete/wipe/erase → a refusal (there is no delete tool); rename/move → a refusal;
2. a delete step the user didn't ask for is dropped;
3. web steps the user didn't ask for are dropped, and ``web_fetch`` is not offered;
4. "write/fix this code" is answered with code, not run (no ``python_exec``/``calculator``) unless asked;
5. a save the user asked for (a non-empty write grant) is added if missing;
6. an explicit "use Python" (or "run it" on code at hand) makes sure ``python_exec`` is used;
7. ``python_exec`` is offered only when :func:`python_allowed` (the user's own words ask to run code);
   a plan that names it otherwise is cut, with a note.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from cortex_lsp.agent.planner import MAX_STEPS, tools_named
from cortex_lsp.agent.types import Plan
from cortex_lsp.intent.intent import Intent

REFUSE_DELETE = "Politely refuse: deleting files is not something Cortex can do"
REFUSE_MOVE = "Politely refuse: renaming or moving files is not something Cortex can do"
REASON_DELETE = (
    "Cortex cannot delete, wipe or erase files: it has no delete tool, by design. The user can delete "
    "files themselves in the editor or a terminal."
)
REASON_MOVE = (
    "Cortex cannot rename or move files: it has no tool for that, by design. The user can rename or "
    "move them in the editor."
)
SAVE_STEP = "Save the result to the file the user named with write_file"
PYTHON_STEP = "Compute it by running Python with python_exec"

_DELETE_STEP = re.compile(
    r"\b(?:delet\w*|wip(?:e|es|ed|ing)|eras\w*|destroy\w*|rm\s+-\w+|unlink\w*|purg\w*)\b", re.IGNORECASE
)
_WEB_STEP = re.compile(
    r"\b(?:web|internet|online|browse\w*|website|webpage|url|https?://\S+|google|bing|duckduckgo|"
    r"search engine|web_fetch|fetch\w*)\b",
    re.IGNORECASE,
)
_RUN_STEP = re.compile(
    r"\b(?:run|runs|running|execut\w*|python_exec|calculator|evaluat\w*|test it)\b", re.IGNORECASE
)
_SAVE_STEP = re.compile(
    r"\b(?:save|saves|saving|write_file|store|write (?:it|them|this|the \w+) to)\b", re.IGNORECASE
)
READ_TOOLS = frozenset({"read_file", "search_files", "doc_search", "web_fetch", "list_dir"})


# -- the python_exec gate, read from the parsed intent -----------------------------------
PYTHON_NOT_ASKED = "python_exec not offered: the user's own words did not ask to run code"


def python_allowed(intent: Intent, has_code: bool) -> bool:
    """May ``python_exec`` be offered? Only when the user's own words (provenance cuts applied: a file,
    page, selection or tool result is never the user's words) ask to run, execute or test code, or to
    compute with Python (:attr:`Intent.run_code <cortex_lsp.intent.intent.Intent.run_code>`: "don't run
    it" and "why did running it fail?" do not). Code at hand (``has_code``) does not by itself open it."""
    del has_code  # the words decide
    return intent.run_code


def _cut_python(
    plan_tools: list[str], steps: list[str], offered: list[str]
) -> tuple[list[str], list[str], list[str], bool]:
    """``plan_tools``/``steps``/``offered`` without ``python_exec``; and whether the plan had named it."""
    named = "python_exec" in plan_tools or any("python_exec" in s for s in steps)
    return (
        [t for t in plan_tools if t != "python_exec"],
        [s for s in steps if "python_exec" not in s],
        [t for t in offered if t != "python_exec"],
        named,
    )


def asks_to_save(intent: Intent) -> bool:
    """Do the user's own words ask for a file to be written (a non-empty write grant: a named file to
    create or replace, or a save without a name)? Not "summarize notes.md", not "don't save anything",
    not "how do I save a file in vim?". Adds a save step and triggers the save recovery."""
    return not intent.write_grant.empty


def intended_tools(intent: Intent, available: Collection[str]) -> set[str]:
    """Tools the user's own words may need (:attr:`Intent.hinted_tools
    <cortex_lsp.intent.intent.Intent.hinted_tools>`), among ``available`` (recovery, procedural learning)."""
    return set(intent.hinted_tools) & set(available)


@dataclass
class GuardedPlan:
    plan: Plan
    #: tool names offered to the executor (empty for direct and refusal plans)
    offered: list[str] = field(default_factory=list)
    #: tools both the plan and the user's words need: recovery asks for them once if skipped
    required: list[str] = field(default_factory=list)
    refusal_reason: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def tool_free(self) -> bool:
        return self.plan.kind != "tools" or not self.offered


def _refusal(step: str, reason: str, note: str) -> GuardedPlan:
    return GuardedPlan(
        Plan(kind="refusal", steps=[step]), offered=[], required=[], refusal_reason=reason, notes=[note]
    )


def _with_step(steps: list[str], step: str) -> list[str]:
    if len(steps) >= MAX_STEPS:
        steps = steps[: MAX_STEPS - 1]
    return [*steps, step]


def apply_plan_guards(
    plan: Plan,
    intent: Intent,
    available: Sequence[str],
    *,
    has_code: bool = False,
    earlier_user_urls: bool = False,
    run_meant: bool = False,
) -> GuardedPlan:
    """The plan corrected from ``intent`` (the run's reading of the user's own request); see the module
    docstring. ``run_meant``: the meaning classifier read the same words as a request to run code or to
    compute (a reading of the user's words, never of material), so ``python_exec`` may be offered."""
    if intent.asks_delete:
        return _refusal(REFUSE_DELETE, REASON_DELETE, "delete request refused before anything ran")
    if intent.asks_move:
        return _refusal(REFUSE_MOVE, REASON_MOVE, "rename/move request refused before anything ran")
    if plan.kind == "refusal":
        return GuardedPlan(
            Plan(kind="refusal", steps=list(plan.steps)), offered=[], refusal_reason="; ".join(plan.steps)
        )
    notes: list[str] = []
    steps = list(plan.steps)
    tools = [t for t in plan.tools if t in available]
    offered = [t for t in available]
    kind = plan.kind

    kept = [s for s in steps if not _DELETE_STEP.search(s)]
    if len(kept) != len(steps):
        notes.append("dropped a delete step the user did not ask for")
        steps = kept

    web_ok = intent.cues.web or (earlier_user_urls and not intent.cues.web_refused)
    if not web_ok:
        kept = [s for s in steps if not _WEB_STEP.search(s)]
        if len(kept) != len(steps):
            notes.append("dropped a web step the user did not ask for")
            steps = kept
        tools = [t for t in tools if t != "web_fetch"]
        offered = [t for t in offered if t != "web_fetch"]

    if not run_meant and not python_allowed(intent, has_code):
        tools, steps, offered, named = _cut_python(tools, steps, offered)
        if named:
            notes.append(PYTHON_NOT_ASKED)

    wants_run = intent.run_code
    if intent.cues.code_writing and not wants_run:
        kept = [s for s in steps if not _RUN_STEP.search(s)]
        if len(kept) != len(steps):
            notes.append("the user asked for code, not for running it: dropped the run step")
            steps = kept
        tools = [t for t in tools if t not in ("python_exec", "calculator")]
        offered = [t for t in offered if t not in ("python_exec", "calculator")]
        if not tools and not intent.files:
            kind = "direct"  # writing code needs no tool

    grant = intent.write_grant
    if not grant.empty and "write_file" in available:
        if not any(_SAVE_STEP.search(s) for s in steps):
            steps = _with_step(steps, SAVE_STEP)
            notes.append("added the save step the user asked for")
        notes.append(grant.describe())
        if "write_file" not in tools:
            tools.append("write_file")
        kind = "tools"

    needs_python = intent.cues.python or (wants_run and has_code)
    if needs_python and "python_exec" in available:
        if "python_exec" not in tools:
            tools.insert(0, "python_exec")
            steps = [PYTHON_STEP, *steps][:MAX_STEPS] if steps else [PYTHON_STEP]
            notes.append("the user asked for Python: added a python_exec step")
        if intent.cues.python:
            offered = [t for t in offered if t != "calculator"]
            tools = [t for t in tools if t != "calculator"]
        kind = "tools"

    if (
        kind == "direct"
        and (intent.files or (web_ok and intent.cues.web) or (wants_run and has_code))
        and offered
    ):
        kind = "tools"  # the user's words name a file, a URL or code to run: don't answer blind
        notes.append("the request names a file, a URL or code to run: tools offered")

    if not steps:
        steps = ["Answer directly"]
        kind = "direct"
        notes.append("no step was left: answering directly")
    for name in tools_named(steps, offered):
        if name not in tools:
            tools.append(name)
    if kind != "tools":
        return GuardedPlan(Plan(kind=kind, steps=steps), offered=[], required=[], notes=notes)
    wanted = intended_tools(intent, offered)
    required = [t for t in tools if t in wanted and t in offered]
    return GuardedPlan(
        Plan(kind="tools", steps=steps, tools=tools), offered=offered, required=required, notes=notes
    )
