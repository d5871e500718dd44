"""A cancel with the token the server created, sent the moment the client sees the create request,
before ``begin``, a ``wait:false`` run (Helix style) must still stop and write nothing.

The token is bound to the run before ``window/workDoneProgress/create`` goes out, so a cancel at any moment
after the client has it finds the run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.lsp_harness import _plain, execute, lsp_session
from tests.scripted_model import ScriptedModelServer
from tests.server.test_server_cancel import WRITE, _edits_before_later, _script_write, later_write


async def _done(client: Any, within: float = 30) -> dict[str, Any]:
    for _ in range(int(within / 0.05)):
        done = [e for e in client.rec.all_events if e["type"] == "done"]
        if done:
            return done[-1]["data"]  # type: ignore[no-any-return]
        await asyncio.sleep(0.05)
    raise AssertionError("the run never finished")


@pytest.mark.parametrize("answer_create", [True, False])
async def test_cancel_on_create_arrival_stops_a_nowait_run(model: ScriptedModelServer, tmp_path: Path,
                                                           answer_create: bool) -> None:
    _script_write(model, delay=0.3)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        created: list[str] = []
        never = asyncio.Event()

        async def on_create(params: types.WorkDoneProgressCreateParams) -> None:
            created.append(str(params.token))
            client.progress_reports.setdefault(params.token, [])
            client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=params.token))
            if not answer_create:  # the reply never comes: the cancel alone must stop the run
                await never.wait()

        default_create = client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE]
        client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = on_create
        started = _plain(await execute(client, "cortex.ask", {"message": WRITE, "wait": False}))
        done = await _done(client)
        never.set()
        client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = default_create
        # a later run through the same steps writes: a run that ignored the cancel would have by then
        await later_write(client, model, delay=0.3)
        edits = _edits_before_later(client)
    assert "run_id" in started and done["run_id"] == started["run_id"]
    assert len(created) == 1
    assert done["stop_reason"] == "cancelled"
    assert edits == [], "no applyEdit after the cancel"
    assert not (tmp_path / "ws" / "notes.txt").exists()
