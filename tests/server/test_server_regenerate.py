"""cortex.ask with ``regenerate: true``: the session's last exchange is replaced, not replayed as history.

The real server over stdio with the scripted model: the rerun's model request carries the question once
and not the answer it replaces; a follow-up sees only the new exchange; the session keeps one exchange;
an earlier exchange stays; ``regenerate`` without a session, or not a boolean, changes nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp_harness import ask, execute, lsp_session
from tests.memory.disk import files_holding
from tests.scripted_model import Reply, ScriptedModelServer

QUESTION = "Name one prime number"


def _requests_with(model: ScriptedModelServer, text: str) -> list[str]:
    return [json.dumps(r.get("messages", [])) for r in model.chat_requests if text in json.dumps(r.get("messages", []))]


async def test_regenerate_replaces_the_last_exchange(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content=json.dumps({"facts": []})), contains="durable facts about a person", times=None)
    model.on(Reply(content="Hello Ada."), contains="I am Ada", times=1)
    model.on(Reply(content="Seven is a prime number."), contains=QUESTION, times=1)
    model.on(Reply(content="Eleven is a prime number."), contains=QUESTION, times=1)
    model.on(Reply(content="You asked for a prime."), contains="What did I ask", times=None)
    async with lsp_session(model, tmp_path) as client:
        first = await ask(client, "Hi, I am Ada.")
        sid = first["session_id"]
        old = await ask(client, QUESTION, session_id=sid)
        new = await ask(client, QUESTION, session_id=sid, regenerate=True)
        follow = await ask(client, "What did I ask?", session_id=sid)
        sessions = await execute(client, "cortex.memory.sessions")
        replaced_on_disk = files_holding(tmp_path / "data", "Seven is a prime number.")
    assert replaced_on_disk == {}, replaced_on_disk  # gone from every file of the data folder, WAL included
    assert old["answer"].startswith("Seven") and new["answer"].startswith("Eleven"), (old, new)
    assert new["session_id"] == sid and follow["stop_reason"] == "answered"
    rerun = _requests_with(model, QUESTION)[-2]  # the regenerated ask's request (the follow-up's is last)
    assert "Seven is a prime number." not in rerun and rerun.count(QUESTION) == 1, rerun
    assert "Hello Ada." in rerun  # the exchange before it is still history
    followed = _requests_with(model, "What did I ask")[-1]
    assert "Eleven is a prime number." in followed and "Seven is a prime number." not in followed
    assert followed.count(QUESTION) == 1
    turns = [s["turns"] for s in sessions["sessions"] if s["id"] == sid]
    assert turns == [3], sessions  # three exchanges: Ada, the regenerated question, the follow-up


async def test_regenerate_without_a_session_is_a_plain_ask(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="Seven is a prime number."), contains=QUESTION, times=None)
    async with lsp_session(model, tmp_path) as client:
        result = await ask(client, QUESTION, regenerate=True)
        with pytest.raises(JsonRpcInvalidParams, match="regenerate"):
            await ask(client, QUESTION, session_id=result["session_id"], regenerate=1)
        sessions = await execute(client, "cortex.memory.sessions")
    assert result["stop_reason"] == "answered"
    assert [s["turns"] for s in sessions["sessions"] if s["id"] == result["session_id"]] == [1]
