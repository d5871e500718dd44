"""The run's own message is read once: ``parse_intent`` sees it (or any provenance cut of it) exactly once
per run through the kernel, whatever the route, and every consumer reads ``RunContext.intent``.

Other texts may have their own reading (an earlier turn, the turn a "try again" repeats, a worker's
subtask); the counter below counts only readings of the run's message.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import cortex_lsp.intent.intent as intent_module
from cortex_lsp.agent.fix import fix_words
from cortex_lsp.agent.kernel import AgentKernel
from cortex_lsp.agent.prompts import ROLE_LATS_EXPAND, ROLE_SUPERVISOR_SPLIT
from cortex_lsp.agent.router import read_intent, route
from cortex_lsp.agent.types import AgentRequest, Orchestration, RunRecord, Selection
from cortex_lsp.intent.intent import Intent
from cortex_lsp.intent.provenance import UserTurn, instruction_text, request_text
from tests.agent.conftest import AgentHarness
from tests.scripted_model import Reply

Reading = tuple[str, str | None]

ROUTED_TOOLS = ["read_file", "list_dir", "search_files", "write_file", "calculator", "current_time", "doc_search"]


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Reading]]:
    """Every ``parse_intent`` call while the test runs, as (message, selection): the function is replaced
    in every module that imported it, so no caller is missed."""
    original = intent_module.parse_intent
    seen: list[Reading] = []

    def counting(message: str, *, selection: str | None = None) -> Intent:
        seen.append((message, selection))
        return original(message, selection=selection)

    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("cortex_lsp") and \
                getattr(module, "parse_intent", None) is original:
            monkeypatch.setattr(module, "parse_intent", counting)
    yield seen


def of_message(seen: list[Reading], message: str, selection: str | None = None) -> list[Reading]:
    """The readings of ``message``: the text itself or any provenance cut of it."""
    own = UserTurn(words=message, selection=selection).own_words
    forms = {message, own, instruction_text(message), request_text(message), request_text(own)}
    return [r for r in seen if r[0] in forms]


def route_kind(message: str) -> str:
    return route(read_intent(message), message=message, available=ROUTED_TOOLS).kind


# message, the route the words take (checked below, outside the counted run), orchestration
RUNS: list[tuple[str, str, Orchestration]] = [
    ("What is the capital of Japan?", "direct", "single"),
    ("What is 12*7?", "tools", "single"),
    ("Read notes.txt and tell me how many lines it has", "tools", "single"),
    ("Save the text hello to out.md", "tools", "single"),
    ("Tell me what the docs say", "undecided", "single"),
    ("Use a tool to look it up", "undecided", "single"),
    ("Please tell me what notes.txt says", "tools", "single"),
]


@pytest.mark.parametrize(("message", "kind", "orchestration"), RUNS, ids=[f"{r[1]}-{r[2]}-{r[0][:24]}" for r in RUNS])
async def test_the_runs_message_is_read_once(agent: AgentHarness, workspace_files: Path, readings: list[Reading],
                                             message: str, kind: str, orchestration: Orchestration) -> None:
    assert route_kind(message) == kind  # the route this row covers
    readings.clear()
    result = await agent.run(message, orchestration=orchestration)
    assert result.stop_reason in ("answered", "step_budget", "time_budget", "refused"), result
    mine = of_message(readings, message)
    assert len(mine) == 1, f"the run read its message {len(mine)} times: {mine}"


async def test_supervisor_workers_act_on_the_runs_reading(agent: AgentHarness, workspace_files: Path,
                                                          readings: list[Reading]) -> None:
    message = "Count the lines of notes.txt and tell me what src/app.py returns"
    agent.model.on(Reply(content=json.dumps({"subtasks": ["Count the lines of notes.txt",
                                                          "Say what src/app.py returns"]})),
                   contains=ROLE_SUPERVISOR_SPLIT)
    result = await agent.run(message, orchestration="supervisor")
    assert any("supervisor: 2 subtasks" in n for n in result.notes), result.notes  # the workers ran
    mine = of_message(readings, message)
    assert len(mine) == 1, f"the run and its workers read its message {len(mine)} times: {mine}"


async def test_a_lats_search_reads_the_message_once(agent: AgentHarness, workspace_files: Path,
                                                   readings: list[Reading]) -> None:
    agent.configure(lats=agent.settings.lats.model_copy(update={"budget": 2, "evaluator": "heuristic"}))
    agent.model.on(Reply(content=json.dumps({"candidates": [
        {"thought": "read", "tool": "read_file", "arguments": {"path": "notes.txt"}},
        {"thought": "answer", "answer": "notes.txt has 3 lines."}]})), contains=ROLE_LATS_EXPAND, times=None)
    result = await agent.run("How many lines are in notes.txt?", orchestration="lats")
    assert agent.requests(ROLE_LATS_EXPAND), "the search never ran"
    assert result.stop_reason in ("answered", "step_budget", "time_budget"), result
    mine = of_message(readings, "How many lines are in notes.txt?")
    assert len(mine) == 1, f"the search read the message {len(mine)} times: {mine}"


async def test_a_selection_and_explain_mode_read_the_message_once(agent: AgentHarness, workspace_files: Path,
                                                                 readings: list[Reading]) -> None:
    code = "def main():\n    return 41 + 1\n"
    selection = Selection(uri=(workspace_files / "src" / "app.py").as_uri(), text=code)
    for mode in ("ask", "explain"):
        readings.clear()
        request = AgentRequest(message="Explain this code", session_id=f"s-{mode}", selection=selection,
                               mode=mode)  # type: ignore[arg-type]
        await AgentKernel(agent.deps()).run(request, agent.events.append, RunRecord(session_id=f"s-{mode}"))
        mine = of_message(readings, "Explain this code", code)
        assert len(mine) == 1, f"{mode}: the run read its message {len(mine)} times: {mine}"


async def test_try_again_reads_its_own_words_once_and_the_earlier_turn_on_its_own(
        agent: AgentHarness, workspace_files: Path, readings: list[Reading]) -> None:
    await agent.run("What is 12*7?")
    readings.clear()
    await agent.run("try again")
    assert len(of_message(readings, "try again")) == 1, readings
    assert of_message(readings, "What is 12*7?"), "the earlier turn is routed again, read on its own"


async def test_a_fix_request_is_read_once_from_the_command_to_the_end_of_the_run(
        agent: AgentHarness, workspace_files: Path, readings: list[Reading]) -> None:
    text = (workspace_files / "src" / "app.py").read_text(encoding="utf-8")
    words, intent = fix_words("src/app.py", text)  # what cortex.fix does before the run
    request = AgentRequest(message=words, session_id="s-fix", intent=intent, diagnostic="line 2: wrong value",
                           selection=Selection(uri=(workspace_files / "src" / "app.py").as_uri(), text=text))
    await AgentKernel(agent.deps()).run(request, agent.events.append, RunRecord(session_id="s-fix"))
    mine = of_message(readings, words, text)
    assert len(mine) == 1, f"cortex.fix read its words {len(mine)} times: {mine}"
