"""The language server's wire JSON for a run: each ``cortex/event``'s ``data``, the agent command result
and the ``cortex.run`` result.

This is the one place the typed events (:data:`cortex_lsp.ports.AgentEvent`), the run's result
(:class:`cortex_lsp.agent.types.AgentResult`) and a code run's report
(:class:`cortex_lsp.server.services.CodeRunReport`) become the JSON objects of DESIGN.md that editors
and tests read. Keys and their order are the public format: change them only with DESIGN.md.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any, assert_never

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

if TYPE_CHECKING:
    from cortex_lsp.server.services import CodeRunReport


def event_data(event: AgentEvent) -> dict[str, Any]:
    """The ``data`` of the ``cortex/event`` notification for ``event`` (``worker`` last, when set)."""
    data: dict[str, Any]
    match event:
        case PlanMade():
            data = {"kind": event.kind, "steps": list(event.steps)}
        case StepStarted():
            data = {"step": event.step, "description": event.description}
        case ToolCalled():
            data = {"tool": event.tool, "arguments": dict(event.arguments)}
        case ToolReturned():
            data = {"tool": event.tool, "success": event.success, "output": event.output}
            if event.repeated:
                data["repeated"] = True
        case EditReported():
            edit = event.edit
            data = {"uri": edit.uri, "kind": edit.kind, "applied": edit.applied, "asked": edit.asked,
                    "description": edit.description}
        case AnswerToken():
            data = {"value": event.value}
        case ErrorReported():
            data = {"message": event.message}
        case _:
            assert_never(event)
    if event.worker is not None:
        data["worker"] = event.worker
    return data


def plan_data(plan: Plan) -> dict[str, Any]:
    return {"kind": plan.kind, "steps": list(plan.steps)}


def tool_call_data(call: ToolCallRecord) -> dict[str, Any]:
    return {"tool": call.tool, "arguments": call.arguments, "success": call.success, "output": call.output}


def edit_data(edit: EditOutcome) -> dict[str, Any]:
    return {"uri": edit.uri, "kind": edit.kind, "applied": edit.applied, "asked": edit.asked, "reason": edit.reason,
            "description": edit.description}


def result_payload(result: AgentResult, run_id: str) -> dict[str, Any]:
    """The result of an agent command, also the ``data`` of its ``done`` event."""
    return {
        "session_id": result.session_id,
        "answer": result.answer,
        "plan": plan_data(result.plan),
        "tool_calls": [tool_call_data(c) for c in result.tool_calls],
        "edits": [edit_data(e) for e in result.edits],
        "stop_reason": result.stop_reason,
        "elapsed_ms": result.elapsed_ms,
        "backend": result.backend,
        "model": result.model,
        "notes": list(result.notes),
        "run_id": run_id,
    }


def run_payload(report: CodeRunReport) -> dict[str, Any]:
    """The result of ``cortex.run``: the sandbox's fields when the code reached it, else the empty ones."""
    if report.sandbox is None:
        return {"ran": report.ran, "stdout": "", "stderr": "", "value": None, "error": None, "duration_ms": 0.0,
                "backend": None, "isolation": None, "notes": [], "reason": report.reason, "summary": report.summary}
    return {**asdict(report.sandbox), "ran": report.ran, "reason": report.reason, "warning": report.warning,
            "summary": report.summary}
