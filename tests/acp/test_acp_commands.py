"""Slash commands over ACP: ``/explain`` (an agent run in explain mode, the pasted code as data),
``/run`` (LSP's cortex.run path: no model call), ``/memory``, ``/new``, ``/doctor``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from cortex_lsp.agent.prompts import ROLE_EXPLAIN
from tests.acp.acp_harness import WAIT, acp_session
from tests.scripted_model import Reply, ScriptedModelServer


async def test_slash_commands(model: ScriptedModelServer, tmp_path: Path) -> None:
    model.on(Reply(content="It adds one to x."), contains=ROLE_EXPLAIN, times=None)
    model.on(Reply(content="Noted."), contains="remember", times=None)
    async with acp_session(model, tmp_path) as run:
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        sid = session.session_id

        async def say(text: str) -> tuple[str, str]:
            since = run.client.mark()
            response = await asyncio.wait_for(run.conn.prompt(session_id=sid, prompt=[text_block(text)]), WAIT)
            return response.stop_reason, run.client.answer_text(since)

        stop, answer = await say("/explain ```python\ny = x + 1\n```")
        assert stop == "end_turn" and "It adds one to x." in answer
        explain = [r for r in model.chat_requests if ROLE_EXPLAIN in json.dumps(r["messages"])]
        assert explain and "y = x + 1" in json.dumps(explain[-1]["messages"])

        calls_before = len(model.chat_requests)
        stop, answer = await say("/run name = input()\nprint(name)")
        assert stop == "end_turn" and "keyboard" in answer
        run_calls = [c for c in run.client.tool_calls() if c.kind == "execute"]
        assert run_calls and len(model.chat_requests) == calls_before, "no model call for /run"

        stop, answer = await say("/doctor")
        assert stop == "end_turn" and ("✔" in answer or "✘" in answer)

        _, first = await say("/new")
        assert "new conversation" in first
        listed = await run.conn.list_sessions(cwd=str(run.root))
        assert len(listed.sessions) == 2  # the first conversation and the new one

        stop, answer = await say("/memory nothing-like-this-anywhere")
        assert stop == "end_turn" and "Nothing in memory" in answer
