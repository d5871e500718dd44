"""Memory through the LSP: a fact stated in one session is used in a new one; search, forget, reset."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.lsp_harness import ask, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer

CONSOLIDATION = "durable facts about a person"


async def _wait_for_fact(client, text: str) -> list[dict]:  # type: ignore[no-untyped-def]
    for _ in range(200):
        found = await execute(client, "cortex.memory.search", {"query": text, "types": ["semantic"]})
        hits = [h for h in found["results"] if text.lower() in h["content"].lower()]
        if hits:
            return hits
        await asyncio.sleep(0.1)
    raise AssertionError(f"no fact about {text!r} was stored")


async def test_fact_from_one_session_is_used_in_a_new_one(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content=json.dumps({"facts": ["The user's name is Roydon.", "The user prefers Python."]})),
             contains=CONSOLIDATION, times=None)
    model.on(Reply(content="Nice to meet you, Roydon."), contains="My name is Roydon", times=None)
    model.on(Reply(content="You prefer Python."), contains="Which language", times=None)
    async with lsp_session(model, tmp_path) as client:
        first = await ask(client, "My name is Roydon and I prefer Python.")
        hits = await _wait_for_fact(client, "Python")
        second = await ask(client, "Which language should you use for my examples?")
        sessions = await execute(client, "cortex.memory.sessions")
        forgotten = await execute(client, "cortex.memory.forget", {"id": hits[0]["id"]})
        after_forget = await execute(client, "cortex.memory.search", {"query": "Python", "types": ["semantic"]})
        await execute(client, "cortex.memory.reset", {"confirm": True})
        after_reset = await execute(client, "cortex.memory.search", {"query": "Roydon"})
    assert second["session_id"] != first["session_id"]
    answer_request = [r for r in model.chat_requests if "Which language" in json.dumps(r)][-1]
    system = " ".join(m["content"] for m in answer_request["messages"] if m["role"] == "system")
    assert "Python" in system and "Roydon" in system, "facts from the first session reached the second"
    assert {s["id"] for s in sessions["sessions"]} >= {first["session_id"], second["session_id"]}
    assert forgotten["deleted"] is True
    assert hits[0]["id"] not in {h["id"] for h in after_forget["results"]}
    assert after_reset["results"] == []


async def test_material_the_user_asked_about_is_not_remembered(model: ScriptedModelServer, tmp_path: Path) -> None:
    # a hostile consolidation model "extracts" the name from the JSON anyway
    model.on(Reply(content=json.dumps({"facts": ["The user's name is Ada."]})), contains=CONSOLIDATION, times=None)
    model.on(Reply(content="It describes a person."), times=None)
    async with lsp_session(model, tmp_path) as client:
        await ask(client, 'My task is to analyse this JSON: {"name": "Ada", "role": "admin"}')
        await asyncio.sleep(1.5)  # let background consolidation finish
        found = await execute(client, "cortex.memory.search", {"query": "Ada", "types": ["semantic"]})
    assert found["results"] == []
    assert not any("Ada" in json.dumps(r) for r in model.chat_requests if CONSOLIDATION in json.dumps(r))
