"""Every work-done progress the server begins gets exactly one ``end``, last, for every ordering that can
race: a fast answer, a cancel (``window/workDoneProgress/cancel`` or ``$/cancelRequest``), a model error,
and — on a token the server asked the client to create — a create reply that comes after the run ended.

With the client's own ``workDoneToken`` the ``end`` is on the wire before the command's response (the
editor closes its progress when the answer shows); on a created token the late reply gets ``begin`` then
``end`` at once. Nothing is reported on a token after its ``end``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp_harness import CortexClient, _plain, ask, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer
from tests.waiting import LATER_TOKEN, later_run, script_later_run, until

SLOW = Reply(content="word " * 400, token_delay=0.05)  # ~20 s unless stopped


def _check_closed(reports: list[Any], token: object) -> None:
    """begin first, exactly one end, and the end last (nothing after it)."""
    kinds = [type(v).__name__ for v in reports]
    assert reports, f"{token}: nothing reported"
    assert isinstance(reports[0], types.WorkDoneProgressBegin), f"{token}: {kinds}"
    assert kinds.count("WorkDoneProgressBegin") == 1, f"{token}: {kinds}"
    assert kinds.count("WorkDoneProgressEnd") == 1, f"{token}: {kinds}"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd), f"{token}: {kinds}"


async def _first_token(client: CortexClient) -> None:
    for _ in range(600):
        if any(e["type"] == "token" for e in client.rec.all_events):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no token streamed")


async def _stopped(client: CortexClient, how: str, token: str, msg_id: str) -> None:
    if how == "progress":
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    else:
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))


@pytest.mark.parametrize("case", ["fast", "cancel-progress", "cancel-request", "model-error", "model-down"])
async def test_client_token_ends_once_before_the_result(model: ScriptedModelServer, tmp_path: Path,
                                                        case: str) -> None:
    model.on(Reply(content="Tokyo."), contains="capital of Japan", times=None)
    model.on(SLOW, contains="long story", times=None)
    script_later_run(model)
    model.on(Reply(status=500, error="model crashed"), contains="crash please", times=None)
    message = {"fast": "What is the capital of Japan?", "model-error": "crash please"}.get(case, "a long story")
    async with lsp_session(model, tmp_path) as client:
        if case == "model-down":
            model.stop()
        token, msg_id = f"vscode-{case}", f"ask-{case}"
        client.progress_reports.setdefault(token, [])
        future = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": message}],
                                       work_done_token=token),
            msg_id=msg_id))
        if case.startswith("cancel"):
            await _first_token(client)
            await _stopped(client, case.removeprefix("cancel-"), token, msg_id)
        result = _plain(await asyncio.wait_for(future, timeout=60))
        at_result = list(client.progress_reports[token])  # what the editor had when the answer came
        await later_run(client)  # nothing may follow the end: by this run's answer it would have arrived
        after = list(client.progress_reports[token])
        others = {k: list(v) for k, v in client.progress_reports.items() if k not in (token, LATER_TOKEN)}
    expected = {"fast": "answered", "model-error": None, "model-down": "model_unavailable"}.get(case, "cancelled")
    if expected:
        assert result["stop_reason"] == expected, result
    else:
        assert result["stop_reason"] in ("model_unavailable", "error"), result
    _check_closed(at_result, token)
    assert after == at_result, "nothing is reported on a token after its end"
    assert others == {}, "no second progress for a run that has the client's token"


@pytest.mark.parametrize("case", ["fast", "cancel-before-begin", "model-down"])
async def test_created_token_answered_late_is_begun_and_ended(model: ScriptedModelServer, tmp_path: Path,
                                                              case: str) -> None:
    """The client holds its reply to ``workDoneProgress/create`` until the run is over."""
    model.on(Reply(content="Tokyo."), contains="capital of Japan", times=None)
    model.on(SLOW, contains="long story", times=None)
    script_later_run(model)
    release = asyncio.Event()
    created: list[str] = []
    async with lsp_session(model, tmp_path) as client:

        async def on_create(params: types.WorkDoneProgressCreateParams) -> None:
            created.append(str(params.token))
            client.progress_reports.setdefault(params.token, [])
            if case == "cancel-before-begin":  # the client cancels the token it was asked to make
                client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=params.token))
            await release.wait()

        client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = on_create
        if case == "model-down":
            model.stop()
        message = "What is the capital of Japan?" if case != "cancel-before-begin" else "a long story"
        result = await asyncio.wait_for(ask(client, message), timeout=60)
        assert len(created) == 1
        assert client.progress_reports[created[0]] == [], "nothing on a token the client has not made"
        release.set()
        await until(lambda: client.progress_reports[created[0]], what="the late token's begin")
        await later_run(client)  # anything more on the late token would have arrived by this run's answer
        reports = list(client.progress_reports[created[0]])
    expected = {"fast": "answered", "model-down": "model_unavailable"}.get(case, "cancelled")
    assert result["stop_reason"] == expected, result
    _check_closed(reports, created[0])
    assert len(reports) == 2, "a late token is closed at once: begin, end"
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and not reports[0].cancellable


@pytest.mark.parametrize("case", ["answered", "cancel"])
async def test_created_token_answered_at_once_ends_with_the_run(model: ScriptedModelServer, tmp_path: Path,
                                                                case: str) -> None:
    model.on(Reply(content="Tokyo.", token_delay=0.01), contains="capital of Japan", times=None)
    model.on(SLOW, contains="long story", times=None)
    script_later_run(model)
    async with lsp_session(model, tmp_path) as client:
        task = asyncio.create_task(ask(client, "a long story" if case == "cancel" else "What is the capital of Japan?"))
        if case == "cancel":
            await _first_token(client)
            for _ in range(200):  # the token is begun once the client's create reply is in
                if any(client.progress_reports.values()):
                    break
                await asyncio.sleep(0.05)
            (token,) = list(client.progress_reports)
            client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(task, timeout=60)
        at_result = {k: list(v) for k, v in client.progress_reports.items()}
        await later_run(client)  # anything after the end would have arrived by this run's answer
        after = {k: list(v) for k, v in client.progress_reports.items() if k != LATER_TOKEN}
    assert result["stop_reason"] == ("cancelled" if case == "cancel" else "answered")
    assert len(after) == 1
    for token, reports in after.items():
        _check_closed(reports, token)
        assert at_result[token] == reports, "the end was sent before the result; nothing after it"


async def test_invalid_params_leave_no_progress_open(model: ScriptedModelServer, tmp_path: Path) -> None:
    """Progress begins the moment an agent command arrives (before its arguments can be read while the
    warm-up imports their models); a refused request ends it, saying why, before it answers the error."""
    async with lsp_session(model, tmp_path) as client:
        client.progress_reports.setdefault("bad", [])
        with pytest.raises(Exception, match="message"):
            await execute(client, "cortex.ask", {"no_message": 1}, token="bad")
        reports = list(client.progress_reports["bad"])
    _check_closed(reports, "bad")
    assert "Not started" in (getattr(reports[-1], "message", None) or ""), reports[-1]
