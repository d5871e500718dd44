"""Long-term memory across servers while the vector store starts: a fact stored by an earlier server is
recalled by a later one once its memory is ready, and an ask sent before then either recalls it or says
in its notes that it could not (never silently without it). Real server over stdio, real SQLite and Chroma."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.lsp_harness import ask, execute, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer
from tests.waiting import until

CONSOLIDATION = "durable facts about a person"
QUESTION = "What's my name?"
NOT_YET = "Long-term memory was still starting"


def _system_of_last(model: ScriptedModelServer, words: str) -> str:
    """The system prompt of the last answer request that carried ``words``."""
    answers = [r for r in model.chat_requests
               if words in json.dumps(r.get("messages", "")) and CONSOLIDATION not in json.dumps(r)]
    return " ".join(m["content"] for m in answers[-1]["messages"] if m["role"] == "system")


async def test_a_fact_from_an_earlier_server_is_recalled_once_memory_is_ready(
        model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content=json.dumps({"facts": ["The user's name is Roydon."]})), contains=CONSOLIDATION,
             times=None)
    model.on(Reply(content="Nice to meet you."), contains="My name is Roydon", times=None)
    model.on(Reply(content="You told me before."), contains=QUESTION, times=None)

    async with lsp_session(model, tmp_path) as client:
        await ask(client, "My name is Roydon.")

        async def stored() -> list[dict[str, Any]]:
            found = await execute(client, "cortex.memory.search", {"query": "name", "types": ["semantic"]})
            return [h for h in found["results"] if "Roydon" in h["content"]]

        await until(stored, what="the fact to be stored")

    async with lsp_session(model, tmp_path) as client:  # a new server on the same data folder
        first: dict[str, Any] = await ask(client, QUESTION)  # at once: its vector store is still starting
        recalled_first = "Roydon" in _system_of_last(model, QUESTION)
        # memory.search waits for the vector store: memory is ready when it answers
        await execute(client, "cortex.memory.search", {"query": "name", "types": ["semantic"]})
        second = await ask(client, QUESTION)
        recalled_second = "Roydon" in _system_of_last(model, QUESTION)
    assert first["stop_reason"] == second["stop_reason"] == "answered"
    assert recalled_first or any(NOT_YET in n for n in first["notes"]), (
        "the first ask neither recalled the stored fact nor said why not", first["notes"])
    assert recalled_second, "the fact stored by the earlier server was not recalled once memory was ready"
    assert not any(NOT_YET in n for n in second["notes"])
