"""Cancels at seeded random points of a scripted run that writes a file (planning, the tool call, while the
editor applies the edit, while the answer streams, after the end), by ``$/cancelRequest`` or
``window/workDoneProgress/cancel``. After each: the server answers, no applyEdit follows the result,
and the result is truthful — the edit is listed as applied iff the file is on disk."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import to_fs_path

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import _apply_to_disk, _plain, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call

SEED = 1316
CANCEL_POINTS = 14
HANG = 60.0


FINAL = "final.txt"
SLOWEST = 0.4  # seconds: the longest scripted wait before the plan, and before the tool call


def _script(model: ScriptedModelServer, name: str, rng: random.Random, *, slowest: bool = False) -> None:
    model.reset()
    plan = {"kind": "tools", "steps": [f"Save the text to {name} with write_file"], "tools": ["write_file"]}
    plan_delay, call_delay = (SLOWEST, SLOWEST) if slowest else (rng.uniform(0, SLOWEST), rng.uniform(0, SLOWEST))
    model.on(Reply(content=json.dumps(plan), first_delay=plan_delay), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Saved the file as asked. " * 8, token_delay=0.02), contains="[write_file result]",
             times=None)
    model.on(Reply(tool_calls=[call("write_file", path=name, content="hello\n")], first_delay=call_delay),
             contains=ROLE_EXECUTOR, times=None)


def _file_names(edit: types.WorkspaceEdit) -> set[str]:
    uris = {c.text_document.uri if isinstance(c, types.TextDocumentEdit) else getattr(c, "uri", "")
            for c in edit.document_changes or []}
    uris |= set(edit.changes or {})
    return {Path(to_fs_path(uri) or "").name for uri in uris}


@pytest.mark.filterwarnings("ignore::pytest_lsp.LspSpecificationWarning")
async def test_cancel_at_random_points_of_a_writing_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "ws"
    seen: dict[str, list[float]] = {}
    answered: dict[str, float] = {}
    tally = {"cancelled": 0, "answered": 0, "applied": 0, "not_written": 0}
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        loop = asyncio.get_running_loop()

        async def slow_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            for name in _file_names(params.edit):  # by the file it writes: a late one is never mistaken
                seen.setdefault(name, []).append(loop.time())
            await asyncio.sleep(rng.uniform(0, 0.3))
            _apply_to_disk(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)

        def check(point: int, name: str, result: dict[str, Any]) -> None:
            applied = [e for e in result["edits"] if e["applied"]]
            on_disk = (root / name).exists()
            assert bool(applied) == on_disk, (point, result["stop_reason"], result["edits"], on_disk)
            assert len(seen.get(name, [])) <= 1, "one applyEdit at most"
            assert all(t <= answered[name] for t in seen.get(name, [])), "no applyEdit after the result"

        client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = slow_apply
        results: list[tuple[int, str, dict[str, Any]]] = []
        for point in range(CANCEL_POINTS):
            name = f"notes{point}.txt"
            _script(model, name, rng)
            msg_id, token = f"fuzz-{point}", f"fuzz-token-{point}"
            future = asyncio.ensure_future(client.protocol.send_request_async(
                types.WORKSPACE_EXECUTE_COMMAND,
                types.ExecuteCommandParams(command="cortex.ask", work_done_token=token,
                                           arguments=[{"message": f"Write 'hello' and save it to {name}"}]),
                msg_id=msg_id))
            low, high = rng.choice([(0.0, 0.3), (0.2, 0.9), (0.5, 1.2), (1.2, 3.0)])  # plan, tool, edit, answer
            await asyncio.sleep(rng.uniform(low, high))
            if rng.random() < 0.5:
                client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            else:
                client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
            result: dict[str, Any] = _plain(await asyncio.wait_for(future, timeout=HANG))
            answered[name] = loop.time()
            check(point, name, result)
            results.append((point, name, result))
            assert result["stop_reason"] in ("cancelled", "answered"), result["stop_reason"]
            tally[result["stop_reason"]] += 1
            tally["applied" if (root / name).exists() else "not_written"] += 1
        # a last run, not cancelled, through the same steps at the slowest scripted pace: a run that went on
        # after its result started earlier, so its applyEdit would have arrived by the time this one has written
        _script(model, FINAL, random.Random(0), slowest=True)
        final = _plain(await asyncio.wait_for(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask",
                                       arguments=[{"message": f"Write 'hello' and save it to {FINAL}"}])),
            timeout=HANG))
        assert [e["applied"] for e in final["edits"]] == [True], final
        for point, name, result in results:
            check(point, name, result)
    print(f"cancel fuzz: {CANCEL_POINTS} cancel points, {tally}")
