"""A hostile ``cortex.yaml`` in the opened folder, through the real server: ``initialize`` returns, one
visible "ignored" message (``window/showMessage``) names the file, defaults are used, the server serves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.fuzz.hostile import HOSTILE_CONFIGS, hostile_folder
from tests.lsp_harness import execute, lsp_session
from tests.scripted_model import ScriptedModelServer
from tests.waiting import until


@pytest.mark.parametrize("kind", HOSTILE_CONFIGS)
async def test_hostile_folder_config_never_breaks_initialize(model: ScriptedModelServer, tmp_path: Path,
                                                             kind: str) -> None:
    root = hostile_folder(tmp_path, kind)
    session = lsp_session(model, tmp_path, folders=[root])
    client = await asyncio.wait_for(session.__aenter__(), timeout=60)
    try:
        doctor = await asyncio.wait_for(execute(client, "cortex.doctor"), timeout=60)  # settings are loaded by now
        # the message is sent when the settings load; under load that can take seconds
        await until(lambda: any("cortex.yaml" in m.message for m in client.messages), what="the cortex.yaml message")
        # a second message (there must be none) would have come with the first, before the server answers a
        # request sent after the first arrived (the server writes in order)
        await asyncio.wait_for(execute(client, "cortex.memory.sessions"), timeout=60)
        about = [m.message for m in client.messages if "cortex.yaml" in m.message]
    finally:
        await session.__aexit__(None, None, None)
    assert len(about) == 1 and ("ignored" in about[0] or "mapping" in about[0]), about
    assert "checks" in doctor, "the server serves after the hostile folder was opened"
