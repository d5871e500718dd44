"""Logs you can follow per run: every record logged inside a run carries its run id (a context variable
stamped by a logging filter), in readable console lines or JSON lines; outside a run, none."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from cortex_lsp.server import logs


@pytest.fixture
def stderr_log() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    cortex_level = logging.getLogger("cortex").level
    stream = io.StringIO()
    logs.setup_logging("INFO", "console")
    (handler,) = root.handlers
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(stream)
    handler.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        logging.getLogger("cortex").setLevel(cortex_level)


async def _two_runs() -> None:
    log = logging.getLogger("cortex.test")

    async def run(run_id: str) -> None:
        logs.run_id_var.set(run_id)
        for i in range(3):
            log.info("step %d of %s", i, run_id)
            await asyncio.sleep(0)

    await asyncio.gather(run("run-aaa"), run("run-bbb"))  # interleaved on one loop
    log.info("outside any run")


async def test_console_lines_carry_their_run(stderr_log: io.StringIO) -> None:
    await _two_runs()
    lines = stderr_log.getvalue().splitlines()
    assert len(lines) == 7
    for line in lines[:-1]:
        run = "run-aaa" if line.endswith("run-aaa") else "run-bbb"
        assert f" INFO cortex.test [run {run}] step " in line, line
    assert "[run" not in lines[-1] and lines[-1].endswith("cortex.test outside any run")
    with pytest.raises(ValueError):
        json.loads(lines[0])


async def test_json_lines_carry_their_run(stderr_log: io.StringIO) -> None:
    logs.use_format("json")
    await _two_runs()
    records = [json.loads(line) for line in stderr_log.getvalue().splitlines()]
    assert len(records) == 7
    for record in records[:-1]:
        assert record["msg"].endswith(record["run_id"]) and record["logger"] == "cortex.test"
    assert records[-1]["run_id"] == "" and "trace_id" not in records[-1]


def test_editor_lines_keep_their_format() -> None:
    sent: list[tuple[int, str]] = []
    mirror = logs.LspMirror(lambda level, text: sent.append((level, text)))
    mirror.addFilter(logs.RunFilter())
    record = logging.LogRecord("cortex.runs", logging.INFO, __file__, 1, "cancelling run", None, None)
    token = logs.run_id_var.set("abc123")
    try:
        mirror.handle(record)
    finally:
        logs.run_id_var.reset(token)
    assert sent == [(logging.INFO, "[abc123] cortex.runs: cancelling run")]
