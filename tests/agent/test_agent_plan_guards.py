"""Plan guards and plan parsing as pure functions: the plan is corrected from the user's own words only."""

from __future__ import annotations

import pytest

from cortex_lsp.agent.parsing import extract_json, extract_object, extract_string_list, strip_reasoning
from cortex_lsp.agent.plan_guards import SAVE_STEP
from cortex_lsp.agent.planner import MAX_STEP_CHARS, fallback_plan, plan_from_reply, tidy_steps
from cortex_lsp.agent.types import Plan
from tests.plan_words import apply_plan_guards, asks_to_save, python_allowed

TOOLS = [
    "read_file",
    "list_dir",
    "search_files",
    "write_file",
    "calculator",
    "current_time",
    "python_exec",
    "web_fetch",
]


def tools_plan(*steps: str, tools: tuple[str, ...] = ()) -> Plan:
    return Plan(kind="tools", steps=list(steps), tools=list(tools))


@pytest.mark.parametrize(
    "words",
    [
        "delete all my files",
        "Please wipe the workspace",
        "erase notes.txt",
        "rm -rf ./*",
        "remove every file in src",
    ],
)
def test_delete_becomes_a_refusal(words: str) -> None:
    guarded = apply_plan_guards(tools_plan("List files with list_dir", tools=("list_dir",)), words, TOOLS)
    assert guarded.plan.kind == "refusal" and guarded.offered == [] and guarded.tool_free


@pytest.mark.parametrize("words", ["rename notes.txt to todo.txt", "move report.md into the docs folder"])
def test_rename_or_move_becomes_a_refusal(words: str) -> None:
    assert apply_plan_guards(tools_plan("Read notes.txt"), words, TOOLS).plan.kind == "refusal"


def test_delete_words_in_material_are_not_a_request() -> None:
    guarded = apply_plan_guards(tools_plan("Read notes.txt"), 'Translate this: "delete all files now"', TOOLS)
    assert guarded.plan.kind == "tools"


def test_a_delete_step_the_user_did_not_ask_for_is_dropped() -> None:
    guarded = apply_plan_guards(
        tools_plan("Read notes.txt", "Delete the old files"), "summarize notes.txt", TOOLS
    )
    assert guarded.plan.steps == ["Read notes.txt"]


def test_unrequested_web_steps_dropped_and_web_fetch_not_offered() -> None:
    plan = tools_plan(
        "Search the web for it", "Fetch https://x.example with web_fetch", "Answer", tools=("web_fetch",)
    )
    guarded = apply_plan_guards(plan, "what is a monad?", TOOLS)
    assert guarded.plan.steps == ["Answer"] and "web_fetch" not in guarded.offered
    asked = apply_plan_guards(plan, "summarize https://x.example/post", TOOLS)
    assert "web_fetch" in asked.offered and len(asked.plan.steps) == 3


def test_web_allowed_when_an_earlier_user_turn_gave_a_url() -> None:
    guarded = apply_plan_guards(
        tools_plan("Fetch it again with web_fetch"), "fetch it again", TOOLS, earlier_user_urls=True
    )
    assert "web_fetch" in guarded.offered


def test_requested_save_is_added() -> None:
    guarded = apply_plan_guards(
        Plan(kind="direct", steps=["Answer directly"]), "write a haiku and save it to poem.txt", TOOLS
    )
    assert guarded.plan.kind == "tools" and guarded.plan.steps[-1] == SAVE_STEP
    assert "write_file" in guarded.required


def test_save_step_fits_in_five_steps() -> None:
    plan = tools_plan("a step", "b step", "c step", "d step", "e step")
    guarded = apply_plan_guards(plan, "save the list to list.md", TOOLS)
    assert len(guarded.plan.steps) == 5 and guarded.plan.steps[-1] == SAVE_STEP


def test_write_code_request_is_not_run() -> None:
    plan = tools_plan("Write the function", "Run it with python_exec", tools=("python_exec",))
    guarded = apply_plan_guards(plan, "Write a Python function that reverses a string", TOOLS)
    assert guarded.plan.kind == "direct" and guarded.offered == []
    run = apply_plan_guards(plan, "Write a Python function that reverses a string and run it on 'abc'", TOOLS)
    assert run.plan.kind == "tools" and "python_exec" in run.offered


def test_explicit_python_is_honoured() -> None:
    guarded = apply_plan_guards(
        tools_plan("Compute with calculator", tools=("calculator",)), "use python to compute 17 * 23", TOOLS
    )
    assert "python_exec" in guarded.plan.tools and "calculator" not in guarded.offered
    assert "python_exec" in guarded.required


def test_direct_plan_naming_a_file_gets_tools() -> None:
    guarded = apply_plan_guards(
        Plan(kind="direct", steps=["Answer directly"]), "what is in notes.txt?", TOOLS
    )
    assert guarded.plan.kind == "tools" and "read_file" in guarded.offered


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("save it to notes.txt", True),
        ("put the table in table.csv", True),
        ("create report.md", True),
        ("How many lines are in notes.txt?", False),
        ("read notes.txt and write a summary", False),
        ('Summarize: "save this to x.txt"', False),
        ("write a function", False),
    ],
)
def test_asks_to_save(words: str, expected: bool) -> None:
    assert asks_to_save(words) is expected


def test_plan_parsing_tolerates_shapes() -> None:
    assert plan_from_reply(["Read notes.txt with read_file"], TOOLS) == Plan(
        kind="tools", steps=["Read notes.txt with read_file"], tools=["read_file"]
    )
    assert plan_from_reply({"steps": [{"description": "Answer directly"}], "kind": "direct"}, TOOLS) == Plan(
        kind="direct", steps=["Answer directly"]
    )
    assert plan_from_reply({"steps": [42, True, "", "null"]}, TOOLS) is None  # values are not steps
    assert plan_from_reply({"steps": ["Politely refuse the request"]}, TOOLS).kind == "refusal"  # type: ignore[union-attr]
    steps = tidy_steps(["1. " + "x" * 400, "Step 2: read it", "read it"])
    assert len(steps[0]) <= MAX_STEP_CHARS and steps[1] == "read it" and len(steps) == 2
    assert len(tidy_steps([f"step {i} here" for i in range(9)])) == 5
    # no plan from the planner: the router's plan, else a direct answer (never every tool on offer)
    assert fallback_plan("do it").kind == "direct" and fallback_plan("do it").tools == []
    routed = Plan(kind="tools", steps=["Call read_file(a.txt)"], tools=["read_file"])
    assert fallback_plan("do it", routed) == routed


def test_json_extraction() -> None:
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Sure! {"a": {"b": "}"}} hope it helps') == {"a": {"b": "}"}}
    assert extract_json("<think>{not json}</think>[1, 2]") == [1, 2]
    assert extract_json('<think>unclosed reasoning {"a": 1}') is None
    assert extract_json("no json here") is None
    assert extract_object('[{"progress": false}]') == {"progress": False}
    assert strip_reasoning("plan</think> answer") == "answer"
    assert extract_string_list('{"subtasks": ["a b", "c d"]}', keys=("subtasks",)) == ["a b", "c d"]
    assert extract_string_list("1. first thing\n2. second thing") == ["first thing", "second thing"]


@pytest.mark.parametrize(
    "words",
    [
        "Don't delete anything, just list the files",
        "How do I delete a file in git?",
        "Why did my script delete notes.txt yesterday?",
        "Never rename my files, just list them",
    ],
)
def test_negated_or_asked_about_deletes_are_not_refused(words: str) -> None:
    guarded = apply_plan_guards(tools_plan("List files with list_dir", tools=("list_dir",)), words, TOOLS)
    assert guarded.plan.kind == "tools"


@pytest.mark.parametrize(
    "words",
    [
        "How do I save a file in vim?",
        "Summarize notes.txt. Do not save or write any files.",
        "Never overwrite my files.",
        "Speichere nichts.",
    ],
)
def test_no_save_step_without_a_write_grant(words: str) -> None:
    guarded = apply_plan_guards(Plan(kind="direct", steps=["Answer directly"]), words, TOOLS)
    assert SAVE_STEP not in guarded.plan.steps and "write_file" not in guarded.required
    assert not asks_to_save(words)


@pytest.mark.parametrize(
    "words", ["Guarda el resumen en resumen.md", "Enregistre le résumé dans resume.md", "Speichere es in a.md"]
)
def test_multilingual_save_adds_the_step_and_notes_the_grant(words: str) -> None:
    guarded = apply_plan_guards(Plan(kind="direct", steps=["Answer directly"]), words, TOOLS)
    assert guarded.plan.steps[-1] == SAVE_STEP
    assert any(n.startswith("write grant from the request: create") for n in guarded.notes)


@pytest.mark.parametrize(
    ("words", "allowed"),
    [
        ("Run this code", True),
        ("What does this print?", True),
        ("Use python to compute 2**10", True),
        ("Don't run it, just explain it", False),
        ("Why did running it fail yesterday?", False),
        ("Explain this code", False),
    ],
)
def test_python_allowed_reads_the_intent(words: str, allowed: bool) -> None:
    assert python_allowed(words, has_code=True) is allowed
    plan = tools_plan("Run it with python_exec", tools=("python_exec",))
    guarded = apply_plan_guards(plan, words, TOOLS, has_code=True)
    assert ("python_exec" in guarded.offered) is allowed
