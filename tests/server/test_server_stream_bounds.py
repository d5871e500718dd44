"""A hostile model's flood is cut while it streams, through the real server and the real Ollama client:
a 150 MB answer, one 150 MB token, a 150 MB tool argument, and a model that calls tools without end.

Each test checks that the model really sent it (the scripted server counts what it wrote), that the
reading stopped early (it wrote a small part before the connection closed), and what the user gets:
an answer within ``max_answer_bytes`` that says it was cut, no tool run with the flood, a run that stops
calling tools at ``max_tool_calls``. The server's RSS is checked with a generous bound (the 50 MB
figure is measured in benchmarks/stream_bench.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import CortexClient, ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call

FLOOD = 150 * 1024 * 1024
#: what may have been written before the server stopped reading: the bound itself plus socket buffers
EARLY = 24 * 1024 * 1024


def _rss_kb(client: CortexClient) -> int:
    pid = client._server.pid  # type: ignore[attr-defined,union-attr]
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _rss(client: CortexClient) -> int:
    return await asyncio.to_thread(_rss_kb, client)


async def test_a_150_mb_answer_is_cut_at_max_answer_bytes(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="Here is the text: ", flood_bytes=FLOOD), contains="the whole text", times=None)
    async with lsp_session(model, tmp_path) as client:
        await ask(client, "Hello")  # memory and the model client are open: growth is the flood's own
        before = await _rss(client)
        result = await ask(client, "Give me the whole text")
        grown_mb = (await _rss(client) - before) / 1024
        events = [e for e in client.rec.all_events if e["run_id"] == result["run_id"]]
    assert model.flood_sent and model.flood_sent[-1] < EARLY, model.flood_sent  # cut early, not read to the end
    answer = result["answer"]
    assert result["stop_reason"] == "answered"
    assert "cut the answer" in answer and "max_answer_bytes" in answer  # the user is told
    assert 200 * 1024 < len(answer.encode()) < 256 * 1024 + 1024
    streamed = "".join(e["data"]["value"] for e in events if e["type"] == "token")
    assert len(streamed.encode()) < 256 * 1024 + 1024  # nor did more reach the editor
    assert grown_mb < 100, f"RSS grew {grown_mb:.0f} MB"


async def test_a_single_150_mb_token_is_refused_before_it_is_held(model: ScriptedModelServer,
                                                                  tmp_path: Path) -> None:
    model.on(Reply(flood_bytes=FLOOD, flood_as="line"), contains="the whole text", times=None)
    async with lsp_session(model, tmp_path) as client:
        await ask(client, "Hello")
        before = await _rss(client)
        result = await ask(client, "Give me the whole text")
        grown_mb = (await _rss(client) - before) / 1024
    assert model.flood_sent and model.flood_sent[-1] < EARLY, model.flood_sent
    assert "single message over" in result["answer"], result["answer"]
    assert len(result["answer"]) < 4096
    assert grown_mb < 100, f"RSS grew {grown_mb:.0f} MB"


async def test_150_mb_of_tool_arguments_are_never_run(model: ScriptedModelServer, tmp_path: Path) -> None:
    plan = {"kind": "tools", "steps": ["Save the text to big.txt with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(flood_bytes=FLOOD, flood_as="tool_args"), contains=ROLE_EXECUTOR, times=None)
    async with lsp_session(model, tmp_path, direct_plans=False) as client:
        result = await ask(client, "Save the summary to big.txt")
        edits = list(client.rec.edits)
    offered = any(t.get("function", {}).get("name") == "write_file"
                  for body in model.chat_requests for t in body.get("tools") or [])
    assert offered, "the hostile model was never offered write_file (the test would prove nothing)"
    assert model.flood_sent and model.flood_sent[-1] < EARLY, model.flood_sent  # the model did send it
    assert edits == []
    assert not (tmp_path / "ws" / "big.txt").exists()
    assert not any(c["tool"] == "write_file" and c["success"] for c in result["tool_calls"])


async def test_a_run_stops_calling_tools_at_max_tool_calls(model: ScriptedModelServer, tmp_path: Path) -> None:
    plan = {"kind": "tools", "steps": ["Compute with calculator"], "tools": ["calculator"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    for n in range(40):  # a different call every time (a repeated one would be answered from the cache)
        model.on(Reply(tool_calls=[call("calculator", expression=f"{n}+1")]), contains=ROLE_EXECUTOR, times=1)
    env = {"CORTEX_MAX_TOOL_CALLS": "3", "CORTEX_MAX_AGENT_STEPS": "30"}
    async with lsp_session(model, tmp_path, direct_plans=False, env=env) as client:
        result = await ask(client, "What is 12345 * 6789 plus the square root of 2, step by step with the calculator?")
    calls = result["tool_calls"]
    assert len(calls) > 3, f"the hostile model never went past the limit (the test would prove nothing): {calls}"
    assert sum(1 for c in calls if c["success"]) <= 3, calls
    assert any("max_tool_calls" in c["output"] for c in calls if not c["success"]), calls
