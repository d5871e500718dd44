"""Shutdown while a command is still running (a long answer streaming): the shutdown request answers
without an error and the server exits cleanly (pygls used to fail iterating its request table)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.lsp_harness import lsp_session
from tests.scripted_model import Reply, ScriptedModelServer


async def test_shutdown_with_a_run_in_flight_answers_cleanly(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="word " * 400, token_delay=0.05), times=None)
    async with lsp_session(model, tmp_path) as client:
        running = asyncio.ensure_future(client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="cortex.ask", arguments=[{"message": "go on and on"}]),
        ))
        for _ in range(600):
            if any(e["type"] == "token" for e in client.rec.all_events):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("no token streamed")
        reply = await asyncio.wait_for(client.protocol.send_request_async(types.SHUTDOWN, None), timeout=15)
        assert reply is None  # an error reply would raise here
        running.cancel()
        client.protocol.notify(types.EXIT, None)
        await asyncio.sleep(0.2)
