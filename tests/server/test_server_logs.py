"""Routine log lines reach the editor as ``window/logMessage`` at their own level, not on stderr
(Neovim logs every stderr line of a server as ERROR); ``CORTEX_STDERR_LOG_LEVEL`` brings them back
to stderr for running the server by hand."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_harness import CortexClient, ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer
from tests.waiting import until


def _stderr_records(text: str) -> list[dict[str, object]]:
    records = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and str(entry.get("logger", "")).startswith("cortex"):
            records.append(entry)
    return records


async def _until_logged(client: CortexClient, words: str) -> types.LogMessageParams:
    for _ in range(400):
        for message in client.log_messages:
            if words in message.message:
                return message
        await asyncio.sleep(0.05)
    raise AssertionError(f"no window/logMessage with {words!r}")


async def _ask_and_cancel(client: CortexClient) -> None:
    task = asyncio.create_task(ask(client, "tell me a long story"))
    for _ in range(400):
        if any(e["type"] == "token" for e in client.rec.all_events):
            break
        await asyncio.sleep(0.05)
    (token,) = list(client.progress_reports)
    # the server logs "cancelling run" at INFO
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, timeout=30)
    assert result["stop_reason"] == "cancelled"


async def _stderr_after_a_marker(client: CortexClient, capfd: pytest.CaptureFixture[str]) -> str:
    """The server's stderr up to a line it writes now, once that line has been forwarded: the positive
    event a "no routine line on stderr" check waits for instead of a quiet period. stderr is one pipe,
    forwarded in order by a task of its own (pytest-lsp's, cancelled when the session ends), so a routine
    line logged before the marker has reached the test by the time the marker has. The marker is the
    stack dump the server writes on SIGUSR1 (cli.py: faulthandler), sent after a request answered, so
    everything the server logged while handling what came before is written by then."""
    await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="cortex.session.new", arguments=[])), timeout=30)
    client._server.send_signal(signal.SIGUSR1)  # type: ignore[union-attr]
    err: list[str] = []

    def marked() -> bool:
        err.append(capfd.readouterr().err)
        return "most recent call first" in "".join(err)

    await until(marked, what="the server's stack dump (SIGUSR1) on stderr")
    return "".join(err)


async def test_routine_lines_go_to_the_editor_not_stderr(model: ScriptedModelServer, tmp_path: Path,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    model.on(Reply(content="word " * 300, token_delay=0.05), times=None)
    async with lsp_session(model, tmp_path, env={"CORTEX_LOG_LEVEL": "INFO", "CORTEX_LOG_FORMAT": "json"}) as client:
        await _ask_and_cancel(client)
        cancelling = await _until_logged(client, "cancelling run")
        err = await _stderr_after_a_marker(client, capfd)
    assert cancelling.type == types.MessageType.Info
    routine = [r for r in _stderr_records(err) if r["level"] in ("DEBUG", "INFO", "WARNING")]
    assert routine == [], routine


async def test_stderr_level_can_be_chosen(model: ScriptedModelServer, tmp_path: Path,
                                          capfd: pytest.CaptureFixture[str]) -> None:
    model.on(Reply(content="word " * 300, token_delay=0.05), times=None)
    env = {"CORTEX_LOG_LEVEL": "INFO", "CORTEX_STDERR_LOG_LEVEL": "info", "CORTEX_LOG_FORMAT": "json"}
    async with lsp_session(model, tmp_path, env=env) as client:
        await _ask_and_cancel(client)
        await _until_logged(client, "cancelling run")
        err: list[str] = []

        def on_stderr() -> bool:  # stderr is forwarded by a task of its own: wait for the line there too
            err.append(capfd.readouterr().err)
            return any(r["level"] == "INFO" and "cancelling run" in str(r["msg"])
                       for r in _stderr_records("".join(err)))

        await until(on_stderr, what="the INFO line 'cancelling run' on stderr")
    err.append(capfd.readouterr().err)
    records = _stderr_records("".join(err))
    assert any(r["level"] == "INFO" and "cancelling run" in str(r["msg"]) for r in records), records
