"""The ``cortex/event`` data, the agent command result and the ``cortex.run`` result, byte for byte: editors
and tests read this JSON (DESIGN.md), so the typed events and reports must serialise to exactly these
objects, keys in this order."""

from __future__ import annotations

import json

import pytest

from cortex_lsp.agent.types import AgentResult, Plan, ToolCallRecord
from cortex_lsp.ports import (
    AgentEvent,
    AnswerToken,
    EditOutcome,
    EditReported,
    ErrorReported,
    PlanMade,
    StepStarted,
    ToolCalled,
    ToolReturned,
)
from cortex_lsp.server.progress import describe
from cortex_lsp.server.services import CodeRunReport
from cortex_lsp.server.wire import event_data, result_payload, run_payload
from cortex_lsp.tools.sandbox.pool import SandboxResult

EDIT = EditOutcome(uri="file:///ws/a.md", kind="create", applied=True, reason="", asked=True,
                   description="You asked for this change.")

WIRE: list[tuple[AgentEvent, str]] = [
    (PlanMade(kind="tools", steps=("Read a.md", "Answer")), '{"kind": "tools", "steps": ["Read a.md", "Answer"]}'),
    (StepStarted(2, "Answer"), '{"step": 2, "description": "Answer"}'),
    (ToolCalled("read_file", {"path": "a.md"}), '{"tool": "read_file", "arguments": {"path": "a.md"}}'),
    (ToolReturned("read_file", True, "text"), '{"tool": "read_file", "success": true, "output": "text"}'),
    (ToolReturned("read_file", True, "text", repeated=True),
     '{"tool": "read_file", "success": true, "output": "text", "repeated": true}'),
    (EditReported(EDIT), '{"uri": "file:///ws/a.md", "kind": "create", "applied": true, "asked": true, '
                         '"description": "You asked for this change."}'),
    (AnswerToken("Tok"), '{"value": "Tok"}'),
    (ErrorReported("The model is down."), '{"message": "The model is down."}'),
    (StepStarted(1, "Count", worker=2), '{"step": 1, "description": "Count", "worker": 2}'),
    (ToolReturned("calculator", False, "bad", worker=1),
     '{"tool": "calculator", "success": false, "output": "bad", "worker": 1}'),
]


@pytest.mark.parametrize(("event", "wire"), WIRE, ids=[f"{e.type}-{i}" for i, (e, _) in enumerate(WIRE)])
def test_each_event_serialises_to_its_public_json(event: AgentEvent, wire: str) -> None:
    assert json.dumps(event_data(event)) == wire
    assert describe(event)  # every event type has a progress line


def test_the_result_and_the_done_event_carry_the_same_keys_in_order() -> None:
    result = AgentResult(session_id="s1", answer="Done.", plan=Plan(kind="tools", steps=["Read a.md"], tools=["x"]),
                         tool_calls=[ToolCallRecord("read_file", {"path": "a.md"}, True, "text")],
                         edits=[EDIT], stop_reason="answered", elapsed_ms=12.5, backend="ollama", model="m",
                         notes=["n"])
    assert json.dumps(result_payload(result, "r1")) == (
        '{"session_id": "s1", "answer": "Done.", "plan": {"kind": "tools", "steps": ["Read a.md"]}, '
        '"tool_calls": [{"tool": "read_file", "arguments": {"path": "a.md"}, "success": true, "output": "text"}], '
        '"edits": [{"uri": "file:///ws/a.md", "kind": "create", "applied": true, "asked": true, "reason": "", '
        '"description": "You asked for this change."}], "stop_reason": "answered", "elapsed_ms": 12.5, '
        '"backend": "ollama", "model": "m", "notes": ["n"], "run_id": "r1"}'
    )


def test_a_code_runs_report_keeps_the_cortex_run_json() -> None:
    ran = SandboxResult(stdout="1\n", stderr="", value="2", error=None, duration_ms=3.5, backend="restricted",
                        isolation="bwrap", refused=False, notes=["n"])
    report = CodeRunReport(ran=True, reason=None, sandbox=ran, warning=None, summary="ran in 0.00 s; printed 1 line")
    assert json.dumps(run_payload(report)) == (
        '{"stdout": "1\\n", "stderr": "", "value": "2", "error": null, "duration_ms": 3.5, "backend": "restricted", '
        '"isolation": "bwrap", "refused": false, "notes": ["n"], "ran": true, "reason": null, "warning": null, '
        '"summary": "ran in 0.00 s; printed 1 line"}'
    )
    not_run = CodeRunReport(ran=False, reason="too long", summary="not run: too long")
    assert json.dumps(run_payload(not_run)) == (
        '{"ran": false, "stdout": "", "stderr": "", "value": null, "error": null, "duration_ms": 0.0, '
        '"backend": null, "isolation": null, "notes": [], "reason": "too long", "summary": "not run: too long"}'
    )
    assert (not_run.stdout, not_run.error, report.stdout, report.value) == ("", None, "1\n", "2")
