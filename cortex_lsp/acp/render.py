"""Front-neutral client updates (runtime/updates.py) as ACP ``session/update`` payloads.

The plan becomes ``plan`` entries; answer text ``agent_message_chunk``; a tool call ``tool_call``
(``in_progress``, with its kind: read, edit, execute, search, fetch) and then ``tool_call_update``
(``completed`` or ``failed``, with its short output, or for a write the ``diff``); a notice an
``agent_message_chunk`` of its own. The run's result goes in the prompt response's ``_meta.cortex``
(:func:`result_meta`).
"""

from __future__ import annotations

from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    FileEditToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
)

from cortex_lsp.agent.types import AgentResult
from cortex_lsp.runtime.updates import (
    AnswerText,
    ClientUpdate,
    FileWritten,
    Notice,
    PlanShown,
    ToolFinished,
    ToolStarted,
)

AcpUpdate = AgentMessageChunk | AgentPlanUpdate | ToolCallStart | ToolCallProgress

#: the most of a tool's output shown in its tool call
OUTPUT_CHARS = 2000


def render(update: ClientUpdate, diffs: dict[str, FileEditToolCallContent] | None = None) -> AcpUpdate | None:
    """``update`` as ACP shows it; ``diffs``: the writes proposed so far, by tool call id."""
    if isinstance(update, AnswerText):
        return update_agent_message_text(update.text)
    if isinstance(update, PlanShown):
        if update.kind != "tools" or not update.steps:
            return None  # a direct answer has no plan worth showing
        return update_plan([plan_entry(s.description, priority="medium", status=s.status) for s in update.steps])
    if isinstance(update, ToolStarted):
        path = update.arguments.get("path")
        locations = [ToolCallLocation(path=str(path))] if isinstance(path, str) and path else None
        return start_tool_call(update.call_id, update.title, kind=update.kind, status="in_progress",
                               locations=locations, raw_input=_raw_input(update))
    if isinstance(update, ToolFinished):
        if update.tool == "write_file" and diffs is not None and update.call_id in diffs and update.success:
            return update_tool_call(update.call_id, status="completed", content=[diffs[update.call_id]])
        text = update.output if len(update.output) <= OUTPUT_CHARS else update.output[:OUTPUT_CHARS] + "…"
        return update_tool_call(update.call_id, status="completed" if update.success else "failed",
                                content=[tool_content(text_block(text))] if text else None)
    if isinstance(update, FileWritten):
        diff = (diffs or {}).get(update.call_id)
        return update_tool_call(update.call_id, status="completed" if update.applied else "failed",
                                content=[diff] if diff is not None else None)
    if isinstance(update, Notice):
        return update_agent_message_text(f"\n\n{update.message}\n\n")
    return None


def result_meta(result: AgentResult) -> dict[str, Any]:
    """The run's result in the ``_meta.cortex`` of the prompt response."""
    return {
        "session_id": result.session_id,
        "stop_reason": result.stop_reason,
        "plan": {"kind": result.plan.kind, "steps": list(result.plan.steps)},
        "tool_calls": [{"tool": c.tool, "arguments": c.arguments, "success": c.success, "output": c.output}
                       for c in result.tool_calls],
        "notes": list(result.notes),
        "edits": [{"uri": e.uri, "kind": e.kind, "applied": e.applied, "asked": e.asked, "reason": e.reason}
                  for e in result.edits],
    }


def diff_content(path: str, new_text: str, old_text: str | None) -> FileEditToolCallContent:
    return tool_diff_content(path, new_text, old_text)


def _raw_input(update: ToolStarted) -> dict[str, Any]:
    if update.tool == "write_file":  # the text shows as a diff when it is proposed, not as raw input
        return {k: v for k, v in update.arguments.items() if k != "content"}
    return dict(update.arguments)
