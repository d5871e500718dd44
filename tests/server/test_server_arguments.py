"""Command arguments over the real server: booleans are JSON booleans. A destructive ``confirm`` given as
``1``, ``"true"``, ``"yes"`` or ``1.0`` is InvalidParams naming the field and deletes nothing; ``wait``
given as anything but a boolean is refused the same way and runs nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp_harness import ask, execute, lsp_session
from tests.scripted_model import ScriptedModelServer

NOT_TRUE: list[Any] = [1, "true", "yes", 1.0, "True", [True], {"value": True}]
NOT_BOOL: list[Any] = [1, 0, "false", "no", "yes", "true", None]


async def test_reset_needs_the_boolean_true(model: ScriptedModelServer, tmp_path: Path) -> None:
    async with lsp_session(model, tmp_path) as client:
        first = await ask(client, "What is the capital of Japan?")
        for value in NOT_TRUE:
            with pytest.raises(JsonRpcInvalidParams) as info:
                await execute(client, "cortex.memory.reset", {"confirm": value})
            assert "confirm" in str(info.value), (value, str(info.value))
        kept = await execute(client, "cortex.memory.sessions")
        assert any(s["id"] == first["session_id"] for s in kept["sessions"]), kept
        assert (await execute(client, "cortex.memory.reset", {"confirm": True})) == {"reset": True}
        gone = await execute(client, "cortex.memory.sessions")
    assert not any(s["id"] == first["session_id"] for s in gone["sessions"]), gone


async def test_wait_must_be_a_boolean(model: ScriptedModelServer, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    doc = (tmp_path / "ws" / "x.py")
    doc.write_text("x = 1\n", encoding="utf-8")
    async with lsp_session(model, tmp_path) as client:
        for value in NOT_BOOL:
            for command, argument in (("cortex.ask", {"message": "hi"}), ("cortex.explain", {"uri": doc.as_uri()})):
                with pytest.raises(JsonRpcInvalidParams) as info:
                    await execute(client, command, {**argument, "wait": value})
                assert "wait" in str(info.value), (command, value, str(info.value))
        assert model.chat_requests == [], "nothing ran"
        assert client.rec.all_events == []
