"""Feedback at once: an ask sent the moment a fresh server is up begins its progress before the warm-up
(imports, model connection, memory store) is done, and a cancel right then ends it at once: the request
answers ``cancelled``, the progress is closed, and the model is never asked anything.

The order is asserted, not a time: the warm-up logs "warm-up done" (mirrored to the editor at INFO) and
the ``$/progress`` begin comes before it. How soon it comes is measured in benchmarks/warm_bench.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.lsp_harness import CortexClient, _plain, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer

TOKEN = "ask-at-once"


def _warm(client: CortexClient) -> bool:
    return any("warm-up done" in m.message for m in client.log_messages)


async def _begun(client: CortexClient) -> bool:
    """Wait for the begin on TOKEN; True when the warm-up had not finished by then."""
    while not client.progress_reports.get(TOKEN):
        await client.wait_for_notification(types.PROGRESS)
    return not _warm(client)


async def test_progress_begins_before_the_warm_up_ends_and_a_cancel_ends_it(model: ScriptedModelServer,
                                                                             tmp_path: Path) -> None:
    model.on(Reply(content="Tokyo."), contains="capital", times=None)
    async with lsp_session(model, tmp_path, env={"CORTEX_LOG_LEVEL": "INFO"}) as client:
        client.progress_reports.setdefault(TOKEN, [])
        request = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": "What is the capital of Japan?"}],
                                       work_done_token=TOKEN)))
        before_warm = await asyncio.wait_for(_begun(client), timeout=60)
        client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                               types.WorkDoneProgressCancelParams(token=TOKEN))
        result: dict[str, Any] = _plain(await asyncio.wait_for(request, timeout=60))
        reports = list(client.progress_reports[TOKEN])
        # the server goes on: the next ask is answered
        again = _plain(await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="cortex.ask", arguments=[{"message": "What is the capital of Japan?"}])))
    assert before_warm, "the first $/progress came only after the warm-up had finished"
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].message == "Starting…"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and len(reports) == 2, reports
    assert result["stop_reason"] == "cancelled", result
    assert "Cancelled before the run started; nothing was done." in result["notes"]
    assert len(model.chat_requests) == 1, "the cancelled ask reached the model"  # the second ask's only
    assert again["stop_reason"] == "answered" and again["answer"] == "Tokyo."
