"""LATS (branching, evaluation, escalation on stall) and the supervisor (parallel workers, merge)."""

from __future__ import annotations

import json
from pathlib import Path

from cortex_lsp.agent.prompts import (
    ROLE_DIRECT,
    ROLE_EXECUTOR,
    ROLE_LATS_EVALUATE,
    ROLE_LATS_EXPAND,
    ROLE_PLANNER,
    ROLE_REFLECTOR,
    ROLE_SUPERVISOR_MERGE,
    ROLE_SUPERVISOR_SPLIT,
)
from cortex_lsp.ports import ToolCalled
from tests.agent.conftest import AgentHarness, plan_reply, tool_names
from tests.scripted_model import Reply, call


def candidates(*moves: dict) -> Reply:
    return Reply(content=json.dumps({"candidates": list(moves)}))


def score(value: float) -> Reply:
    return Reply(content=json.dumps({"score": value}))


async def test_lats_branches_evaluates_and_picks_the_best_answer(
    agent: AgentHarness, workspace_files: Path
) -> None:
    agent.configure(lats=agent.settings.lats.model_copy(update={"n_branches": 3, "budget": 4}))
    agent.model.on(plan_reply("tools", ["Read notes.txt", "Answer"], ["read_file"]), contains=ROLE_PLANNER)
    # Root expansion: three branches (a good read, a bad read, a premature guess).
    agent.model.on(
        candidates(
            {"thought": "read the notes", "tool": "read_file", "arguments": {"path": "notes.txt"}},
            {"thought": "read a guess", "tool": "read_file", "arguments": {"path": "nope.txt"}},
            {"thought": "guess", "answer": "Probably four lines."},
        ),
        contains=ROLE_LATS_EXPAND,
        times=1,
    )
    # Second expansion (from the best child, the successful read): the right answer.
    agent.model.on(
        candidates({"thought": "count", "answer": "notes.txt has 3 lines: alpha, beta, gamma."}),
        contains=ROLE_LATS_EXPAND,
        times=1,
    )
    agent.model.on(score(9), contains="notes.txt has 3 lines", times=None)  # evaluator, matched on trajectory
    agent.model.on(score(2), contains="Probably four lines", times=None)
    agent.model.on(score(1), contains="nope.txt", times=None)
    agent.model.on(score(6), contains=ROLE_LATS_EVALUATE, times=None)

    result = await agent.run("How many lines are in notes.txt?", orchestration="lats")

    assert result.stop_reason == "answered"
    assert result.answer == "notes.txt has 3 lines: alpha, beta, gamma."
    assert sorted(c.tool + ":" + c.arguments["path"] for c in result.tool_calls) == [
        "read_file:nope.txt",
        "read_file:notes.txt",
    ]
    assert len(agent.requests(ROLE_LATS_EXPAND)) == 2  # stopped once an answer scored ≥ 0.8
    assert len(agent.requests(ROLE_LATS_EVALUATE)) == 4
    assert not agent.requests(ROLE_EXECUTOR)
    second = agent.requests(ROLE_LATS_EXPAND)[1]
    assert "read the notes" in json.dumps(second["messages"])  # expanded the best-scored branch


async def test_lats_search_never_writes_and_respects_guards(
    agent: AgentHarness, workspace_files: Path
) -> None:
    agent.configure(lats=agent.settings.lats.model_copy(update={"budget": 2, "evaluator": "heuristic"}))
    agent.model.on(plan_reply("tools", ["Read notes.txt"], ["read_file"]), contains=ROLE_PLANNER)
    agent.model.on(
        candidates(
            {"thought": "write", "tool": "write_file", "arguments": {"path": "pwn.txt", "content": "x"}},
            {"thought": "answer", "answer": "alpha beta gamma"},
        ),
        contains=ROLE_LATS_EXPAND,
        times=None,
    )
    result = await agent.run("What does notes.txt say?", orchestration="lats")
    assert agent.sink is not None and agent.sink.proposals == []
    assert not (agent.root / "pwn.txt").exists()
    assert result.answer == "alpha beta gamma"
    assert not agent.requests(ROLE_LATS_EVALUATE)  # heuristic evaluator: no model call


async def test_stalled_react_run_escalates_to_lats(agent: AgentHarness, workspace_files: Path) -> None:
    agent.configure(max_run_seconds=60, lats=agent.settings.lats.model_copy(update={"budget": 2}))
    agent.model.on(plan_reply("tools", ["Read the config"], ["read_file"]), contains=ROLE_PLANNER)
    agent.model.on(Reply(content='{"progress": false}'), contains=ROLE_REFLECTOR, times=None)
    for i in range(2):
        agent.model.on(Reply(tool_calls=[call("read_file", path=f"config{i}.toml")]), contains=ROLE_EXECUTOR)
    agent.model.on(
        candidates({"thought": "list", "answer": "There is no config.toml; the folder has notes.txt."}),
        contains=ROLE_LATS_EXPAND,
        times=None,
    )
    agent.model.on(score(9), contains=ROLE_LATS_EVALUATE, times=None)

    result = await agent.run("What is in config.toml?")

    assert "escalated to LATS" in result.notes
    assert result.stop_reason == "answered"
    assert result.answer == "There is no config.toml; the folder has notes.txt."
    expand = agent.requests(ROLE_LATS_EXPAND)[0]
    assert "config0.toml" in json.dumps(expand["messages"])  # LATS started from what the run had


async def test_lats_then_save_when_the_user_asked(agent: AgentHarness, workspace_files: Path) -> None:
    agent.configure(lats=agent.settings.lats.model_copy(update={"budget": 1, "evaluator": "heuristic"}))
    agent.model.on(plan_reply("tools", ["Answer", "Save it"], ["write_file"]), contains=ROLE_PLANNER)
    agent.model.on(
        candidates({"thought": "answer", "answer": "Rain on the roof."}), contains=ROLE_LATS_EXPAND
    )
    agent.model.on(
        Reply(tool_calls=[call("write_file", path="poem.txt", content="Rain on the roof.")]),
        contains=ROLE_EXECUTOR,
    )
    result = await agent.run("Write a one-line poem and save it to poem.txt", orchestration="lats")
    assert (agent.root / "poem.txt").read_text() == "Rain on the roof."
    (body,) = agent.requests(ROLE_EXECUTOR)
    assert tool_names(body) == ["write_file"]
    assert result.answer == "Rain on the roof.\n\nWritten: poem.txt"


async def test_supervisor_runs_workers_in_parallel_and_merges(
    agent: AgentHarness, workspace_files: Path
) -> None:
    agent.configure(supervisor=agent.settings.supervisor.model_copy(update={"max_workers": 3}))
    agent.model.on(plan_reply("tools", ["Read both files"], ["read_file"]), contains=ROLE_PLANNER, times=1)
    agent.model.on(
        Reply(
            content=json.dumps({"subtasks": ["Count the lines of notes.txt", "Say what src/app.py returns"]})
        ),
        contains=ROLE_SUPERVISOR_SPLIT,
    )
    # Worker planners and executors, matched on their subtask text. A slow first reply on each proves overlap.
    agent.model.on(
        plan_reply("tools", ["Read notes.txt"], ["read_file"]), contains="Count the lines of notes.txt"
    )
    agent.model.on(
        plan_reply("tools", ["Read src/app.py"], ["read_file"]), contains="Say what src/app.py returns"
    )
    agent.model.on(Reply(content="3 lines."), contains="alpha\\nbeta")
    agent.model.on(Reply(content="It returns 42."), contains="return 41 + 1")
    agent.model.on(
        Reply(tool_calls=[call("read_file", path="notes.txt")], first_delay=0.5),
        contains="Count the lines of notes.txt",
    )
    agent.model.on(
        Reply(tool_calls=[call("read_file", path="src/app.py")], first_delay=0.5),
        contains="Say what src/app.py returns",
    )
    agent.model.on(
        Reply(content="notes.txt has 3 lines and main() returns 42."), contains=ROLE_SUPERVISOR_MERGE
    )

    result = await agent.run(
        "Count the lines of notes.txt and tell me what src/app.py returns", orchestration="supervisor"
    )

    assert result.stop_reason == "answered"
    assert result.answer == "notes.txt has 3 lines and main() returns 42."
    assert sorted(c.arguments["path"] for c in result.tool_calls) == ["notes.txt", "src/app.py"]
    assert result.plan.steps == ["Count the lines of notes.txt", "Say what src/app.py returns"]
    workers = {e.worker for e in agent.of_type(ToolCalled)}
    assert workers == {1, 2}
    # Parallel: both workers' slow executor requests were sent before either tool ran.
    order = [
        e.type + str(e.worker) for e in agent.events if e.type in ("step_start", "tool_call")
    ]
    first_call = min(i for i, x in enumerate(order) if x.startswith("tool_call"))
    assert {"step_start1", "step_start2"} <= set(order[:first_call])
    merge = agent.requests(ROLE_SUPERVISOR_MERGE)[0]
    assert "3 lines." in json.dumps(merge["messages"]) and "It returns 42." in json.dumps(merge["messages"])
    history = await agent.memory.history("s1-worker-1", 6)
    assert history == []  # workers persist nothing


async def test_supervisor_workers_use_the_users_words_for_guards(
    agent: AgentHarness, workspace_files: Path
) -> None:
    agent.model.on(plan_reply("tools", ["Read notes.txt"], ["read_file"]), contains=ROLE_PLANNER, times=1)
    # A hostile split invents a save and a web step the user never asked for.
    agent.model.on(
        Reply(
            content=json.dumps({"subtasks": ["Save notes.txt contents to copy.txt", "Summarize notes.txt"]})
        ),
        contains=ROLE_SUPERVISOR_SPLIT,
    )
    agent.model.on(
        plan_reply("tools", ["Save to copy.txt with write_file"], ["write_file"]),
        contains=ROLE_PLANNER,
        times=None,
    )
    agent.model.on(
        Reply(tool_calls=[call("write_file", path="copy.txt", content="alpha")]),
        contains=ROLE_EXECUTOR,
        times=2,
    )
    agent.model.on(Reply(content="done"), contains=ROLE_EXECUTOR, times=None)
    agent.model.on(Reply(content="Summary."), contains=ROLE_SUPERVISOR_MERGE)
    result = await agent.run("Summarize notes.txt", orchestration="supervisor")
    assert agent.sink is not None and agent.sink.proposals == []
    assert not (agent.root / "copy.txt").exists()
    assert all(not c.success for c in result.tool_calls if c.tool == "write_file")


async def test_supervisor_unsplittable_request_runs_single(agent: AgentHarness) -> None:
    agent.model.on(plan_reply("direct", ["Answer directly"]), contains=ROLE_PLANNER)
    agent.model.on(Reply(content=json.dumps({"subtasks": ["Say hello"]})), contains=ROLE_SUPERVISOR_SPLIT)
    agent.model.on(Reply(content="Hello!"), contains=ROLE_EXECUTOR)
    result = await agent.run("Say hello", orchestration="supervisor")
    assert result.answer == "Hello!"
    assert any("did not split" in n for n in result.notes)
    assert not agent.requests(ROLE_DIRECT)
