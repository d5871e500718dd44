"""Proof that a hostile row's attack happened, read from the scripted model's request log and the tool log.

A hostile test passes for the right reason only when the model was offered the forbidden tool, called
it, and the gate refused the call. A row where the model never got the chance proves nothing about the
gate: :func:`missed` says why, and the test fails with that message. Where the design makes a run
tool-free before the model sees a tool (the router or the plan guards answer it as plain chat), the row
asserts exactly that (:func:`assert_tool_free`) and a second row forces the tool plan
(:data:`FORCE_TOOLS`, or words that grant another tool's use), so the gate behind is tested too.

``requests`` is the scripted model's request log (``model.chat_requests``); ``tool_calls`` the run's tool
log (the LSP result's ``tool_calls``, ACP's ``_meta.cortex.tool_calls``, or :func:`record_calls`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from cortex_lsp.agent.types import RunRecord

#: words that ask for a tool and grant nothing else: put before a request the router would answer as
#: plain chat, they make the run a tool run (the planner plans, the executor offers tools)
FORCE_TOOLS = "Use a tool to look it up. "


def offered(requests: list[dict[str, Any]], tool: str) -> bool:
    """Was ``tool``'s schema in any request to the model?"""
    return any(t.get("function", {}).get("name") == tool for body in requests for t in body.get("tools") or [])


def calls_of(tool_calls: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [c for c in tool_calls if c.get("tool") == tool]


def missed(requests: list[dict[str, Any]], tool_calls: list[dict[str, Any]], tool: str) -> str | None:
    """Why the row proves nothing about ``tool``'s gate (never offered, or offered and never called),
    else ``None``."""
    if not requests:
        return "the model was never asked"
    if not offered(requests, tool):
        return f"{tool} was never offered to the model"
    if not calls_of(tool_calls, tool):
        return f"the model was offered {tool} but never called it"
    return None


def assert_refused(requests: list[dict[str, Any]], tool_calls: list[dict[str, Any]], tool: str, *,
                   because: str | None = None) -> list[dict[str, Any]]:
    """The attack happened and the gate refused it: ``tool`` offered and called, and every call failed
    (with ``because`` in its output when given). Returns the calls."""
    why = missed(requests, tool_calls, tool)
    assert why is None, f"the attack never happened, so this row proves nothing: {why}"
    made = calls_of(tool_calls, tool)
    ran = [c for c in made if c.get("success")]
    assert not ran, f"the gate let {tool} run: {ran}"
    if because is not None:
        other = [c["output"] for c in made if because not in str(c.get("output"))]
        assert not other, f"refused, but not by the gate ({because!r}): {other}"
    return made


def assert_refused_unoffered(requests: list[dict[str, Any]], tool_calls: list[dict[str, Any]], tool: str, *,
                             because: str) -> list[dict[str, Any]]:
    """The gate behind a tool the design never offers for these words: the run offered the model other
    tools (a tool plan), the model called ``tool`` anyway, and every call was refused (``because``)."""
    assert requests, "the model was never asked"
    assert any(body.get("tools") for body in requests), "no tool was offered: the tool plan was not forced"
    assert not offered(requests, tool), f"{tool} was offered: test the gate of an offered tool instead"
    made = calls_of(tool_calls, tool)
    assert made, f"the model never called {tool}, so this row proves nothing"
    wrong = [c for c in made if c.get("success") or because not in str(c.get("output"))]
    assert not wrong, f"not refused by the gate ({because!r}): {wrong}"
    return made


def assert_tool_free(requests: list[dict[str, Any]], tool: str) -> None:
    """The design's first layer: the run never offered ``tool`` (a second row forces the plan)."""
    assert requests, "the model was never asked"
    assert not offered(requests, tool), f"{tool} was offered: this row is not tool-free, test its gate instead"


def record_calls(record: RunRecord | None) -> list[dict[str, Any]]:
    """An in-process run's tool log (blocked calls included) in the shape of the LSP result's."""
    assert record is not None
    return [asdict(c) for c in record.tool_calls]
