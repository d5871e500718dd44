"""Cancellation: window/workDoneProgress/cancel and $/cancelRequest both stop the run whenever they
arrive (before it is registered, on a cold server, mid-stream, while the editor applies an edit); the
request still answers with ``stop_reason: cancelled``, no applyEdit follows a cancel, the edits the editor
applied are listed, and the server keeps serving."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp_harness import _plain, ask, lsp_session
from tests.procs import alive, descendants
from tests.scripted_model import Reply, ScriptedModelServer
from tests.waiting import until

SLOW = Reply(content="word " * 400, token_delay=0.05)  # ~20 s if nobody stops it


async def _first_token(client, run_hint: str | None = None) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if any(e["type"] == "token" for e in client.rec.all_events):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no token streamed")


async def test_progress_cancel_stops_the_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(SLOW, contains="long story", times=None)
    model.on(Reply(content="short"), contains="quick one", times=None)
    async with lsp_session(model, tmp_path) as client:
        task = asyncio.create_task(ask(client, "tell me a long story"))
        await _first_token(client)
        (token,) = list(client.progress_reports)
        started = time.monotonic()
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(task, timeout=15)
        stopped_after = time.monotonic() - started
        follow_up = await ask(client, "quick one")
        reports = client.progress_reports[token]
    assert result["stop_reason"] == "cancelled"
    assert len(result["answer"].split()) < 400, "the answer stopped mid-stream"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert follow_up["answer"] == "short"
    print(f"progress cancel stopped the run in {stopped_after * 1000:.0f} ms")


async def test_cancel_request_stops_the_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(SLOW, times=None)
    async with lsp_session(model, tmp_path) as client:
        msg_id = "ask-to-cancel"
        future = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": "go on forever"}]),
            msg_id=msg_id,
        ))
        await _first_token(client)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        result = _plain(await asyncio.wait_for(future, timeout=15))
        events = list(client.rec.all_events)
    assert result["stop_reason"] == "cancelled"
    assert len(result["answer"].split()) < 400
    assert events[-1]["type"] == "done" and events[-1]["data"]["stop_reason"] == "cancelled"


# -- the cancel timeline: before the run is registered, on a cold server, while the editor applies -------

def _script_write(model: ScriptedModelServer, path: str = "notes.txt", *, delay: float = 0.0) -> None:
    import json

    from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
    from tests.scripted_model import call

    plan = {"kind": "tools", "steps": [f"Save the text to {path} with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan), first_delay=delay), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Saved."), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path=path, content="hello\n")], first_delay=delay),
             contains=ROLE_EXECUTOR, times=None)


WRITE = "Write 'hello' and save it to notes.txt"
LATER = "later.txt"


async def later_write(client, model: ScriptedModelServer, *, delay: float = 0.0,  # type: ignore[no-untyped-def]
                      plan_delay: float | None = None) -> dict[str, Any]:
    """A second run, sent after the first was cancelled, that plans and writes LATER through the same
    scripted steps (and the same slow model) as the first. It is the positive event a "no applyEdit after
    the cancel" check waits for: a run that ignored the cancel started earlier and goes through the same
    steps, so its applyEdit would have arrived by the time this run has written (no fixed sleep)."""
    import json

    from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
    from tests.scripted_model import call

    def later(body: dict[str, Any]) -> bool:
        return LATER in json.dumps(body.get("messages", ""))

    plan = {"kind": "tools", "steps": [f"Save the text to {LATER} with write_file"], "tools": ["write_file"]}
    first_delay = delay if plan_delay is None else plan_delay
    model.on(Reply(content=json.dumps(plan), first_delay=first_delay), contains=ROLE_PLANNER, when=later,
             first=True)
    # once: the executor's next request (the tool's result) gets the scripted "[write_file result]" reply
    model.on(Reply(tool_calls=[call("write_file", path=LATER, content="later\n")], first_delay=delay),
             contains=ROLE_EXECUTOR, when=later, first=True)
    result: dict[str, Any] = await asyncio.wait_for(ask(client, f"Write 'later' and save it to {LATER}"), timeout=60)
    assert [e["applied"] for e in result["edits"]] == [True], ("the later run writes", result)
    return result


def _edits_before_later(client) -> list[types.ApplyWorkspaceEditParams]:  # type: ignore[no-untyped-def]
    """The applyEdits of the client's recorder other than the later run's."""
    return [e for e in client.rec.edits if LATER not in str(e.edit)]
# a client-chosen workDoneToken is not created through window/workDoneProgress/create; pytest-lsp warns
CLIENT_TOKEN = pytest.mark.filterwarnings("ignore::pytest_lsp.LspSpecificationWarning")


def _send_command(client, msg_id: str, token: str | None):  # type: ignore[no-untyped-def]
    return asyncio.ensure_future(client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND,
        types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": WRITE}], work_done_token=token),
        msg_id=msg_id,
    ))


def _cancel(client, kind: str, msg_id: str, token: str) -> None:  # type: ignore[no-untyped-def]
    if kind == "request":
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    else:
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))


@CLIENT_TOKEN
@pytest.mark.parametrize("kind", ["request", "progress"])
@pytest.mark.parametrize("delay", [0.0, 0.3])
async def test_early_cancel_on_a_cold_server_stops_the_run(model: ScriptedModelServer, tmp_path: Path,
                                                           kind: str, delay: float) -> None:
    _script_write(model, delay=0.5)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        future = _send_command(client, "early-1", "early-token")
        await asyncio.sleep(delay)
        _cancel(client, kind, "early-1", "early-token")
        result = _plain(await asyncio.wait_for(future, timeout=30))
        await later_write(client, model, delay=0.5)  # the server keeps serving; a ghost run has written by now
        edits = _edits_before_later(client)
    assert result["stop_reason"] == "cancelled"
    assert result["edits"] == []
    assert edits == [], "no applyEdit after the cancel"
    assert not (tmp_path / "ws" / "notes.txt").exists()


@CLIENT_TOKEN
@pytest.mark.parametrize("kind", ["request", "progress"])
async def test_cancel_while_the_editor_applies_lists_the_applied_edit(model: ScriptedModelServer, tmp_path: Path,
                                                                      kind: str) -> None:
    from tests.lsp_harness import _apply_to_disk

    _script_write(model)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        received: list[types.ApplyWorkspaceEditParams] = []

        async def slow_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            received.append(params)
            _cancel(client, kind, "during-1", "during-token")
            try:
                await asyncio.sleep(0.5)  # the editor is still applying when the cancel arrives
            except asyncio.CancelledError:
                pass  # the server withdraws the request ($/cancelRequest); an editor mid-apply finishes
            _apply_to_disk(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)

        client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = slow_apply
        future = _send_command(client, "during-1", "during-token")
        result = _plain(await asyncio.wait_for(future, timeout=30))
    written = tmp_path / "ws" / "notes.txt"
    assert len(received) == 1 and written.read_text() == "hello\n"
    assert result["stop_reason"] == "cancelled"
    assert [e["applied"] for e in result["edits"]] == [True], "the applied edit is listed"
    assert result["edits"][0]["uri"] == written.resolve().as_uri()


@CLIENT_TOKEN
@pytest.mark.parametrize("kind", ["request", "progress"])
async def test_cancel_during_a_review_withdraws_the_edit(model: ScriptedModelServer, tmp_path: Path,
                                                          kind: str) -> None:
    """A user reviewing the write when the run is cancelled: the server withdraws the applyEdit
    ($/cancelRequest with its id), the editor's review ends unapplied, nothing is on disk."""
    _script_write(model)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        withdrawn: list[str] = []

        async def reviewing(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            _cancel(client, kind, "review-1", "review-token")
            try:
                await asyncio.sleep(60)  # the user is still looking at the diff
            except asyncio.CancelledError:
                withdrawn.append("cancelled")  # pygls cancels the handler on $/cancelRequest
                raise
            _apply_to_disk(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)

        from tests.lsp_harness import _apply_to_disk

        client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = reviewing
        result = _plain(await asyncio.wait_for(_send_command(client, "review-1", "review-token"), timeout=30))
        follow_up = await ask(client, "quick one")
    assert withdrawn == ["cancelled"], "the server withdrew the pending applyEdit"
    assert result["stop_reason"] == "cancelled"
    assert [e["applied"] for e in result["edits"]] == [False], result["edits"]
    assert not (tmp_path / "ws" / "notes.txt").exists()
    assert "Saved." not in result["answer"], result
    assert "not apply" in result["edits"][0]["reason"]
    # the result's notes and the answer's ledger say the edit was not applied
    assert "Declined: notes.txt" in result["notes"], result["notes"]
    assert "stop_reason" in follow_up


async def test_cancel_request_interrupts_cortex_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    from pygls.exceptions import JsonRpcException

    async with lsp_session(model, tmp_path, env={"CORTEX_CODE_EXEC_TIMEOUT_SECONDS": "60"}) as client:
        script = tmp_path / "ws" / "slow.py"
        script.write_text("import time\ntime.sleep(40)\nprint('done')\n", encoding="utf-8")
        future = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.run", arguments=[{"uri": script.as_uri()}]),
            msg_id="run-to-cancel"))
        server_pid = client._server.pid  # type: ignore[union-attr]
        # the sandbox worker is running the code: a process below the server sleeps in time.sleep(40)
        (sleeper, *_) = await until(lambda: _sleeping(descendants(server_pid)), within=60,
                                    what="the sandbox worker to run the snippet (a process in nanosleep)")
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-to-cancel"))
        try:
            outcome: object = await asyncio.wait_for(future, timeout=50)
        except JsonRpcException as exc:
            outcome = exc
        # the sandbox worker running the code is stopped
        await until(lambda: not alive(sleeper), what="the worker running the code to be stopped")
        follow_up = await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="cortex.session.new", arguments=[])), timeout=30)
    assert isinstance(outcome, JsonRpcException) and outcome.code == -32800, outcome
    assert follow_up is not None


def _sleeping(pids: set[int]) -> list[int]:
    """The processes of ``pids`` blocked in a sleep (time.sleep: clock_nanosleep)."""
    found = []
    for pid in pids:
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            continue
        if "nanosleep" in wchan:
            found.append(pid)
    return found


@CLIENT_TOKEN
async def test_an_edit_the_editor_answers_after_the_settle_is_reported_unknown(model: ScriptedModelServer,
                                                                               tmp_path: Path) -> None:
    """The editor applies the edit but answers only after SETTLE_SECONDS: the result can't know, so it
    says so (``applied: null``, "Unknown: check notes.txt"), never "not written" — the file is there."""
    from cortex_lsp.server.runs import SETTLE_SECONDS
    from tests.lsp_harness import _apply_to_disk

    _script_write(model)
    answered = asyncio.Event()
    async with lsp_session(model, tmp_path, direct_plans=False) as client:

        async def late_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            _cancel(client, "request", "late-1", "late-token")
            _apply_to_disk(params.edit)  # applied at once, but the answer comes late
            loop = asyncio.get_running_loop()
            deadline = loop.time() + SETTLE_SECONDS + 1.5
            while (left := deadline - loop.time()) > 0:
                try:
                    await asyncio.sleep(left)
                except asyncio.CancelledError:
                    pass  # the server withdraws the request ($/cancelRequest); this editor answers anyway
            answered.set()
            return types.ApplyWorkspaceEditResult(applied=True)

        client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = late_apply
        future = _send_command(client, "late-1", "late-token")
        result = _plain(await asyncio.wait_for(future, timeout=SETTLE_SECONDS + 30))
        await asyncio.wait_for(answered.wait(), timeout=30)
        follow_up = await ask(client, "quick one")
    written = tmp_path / "ws" / "notes.txt"
    assert written.read_text() == "hello\n"
    assert result["stop_reason"] == "cancelled"
    assert [(e["uri"], e["applied"]) for e in result["edits"]] == [(written.resolve().as_uri(), None)]
    assert "check the file" in result["edits"][0]["reason"]
    assert result["answer"].endswith("Unknown: check notes.txt")
    assert "Not written" not in result["answer"] and "Declined" not in result["answer"]
    assert "Unknown: check notes.txt" in result["notes"]
    assert "stop_reason" in follow_up, "the server keeps serving"
