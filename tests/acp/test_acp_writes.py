"""Writes over ACP: every write asks ``session/request_permission`` (labelled asked / not asked), then
the client writes it with ``fs/write_text_file``; rejected, or a client that cannot write, means nothing
is written and the answer says so. Cancel stops a streaming run with ``stopReason: cancelled``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block
from acp.schema import FileEditToolCallContent

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.acp.acp_harness import WAIT, acp_session
from tests.scripted_model import Reply, ScriptedModelServer, call


def script_write(model: ScriptedModelServer, path: str, content: str = "hello from cortex\n", *,
                 delay: float = 0.0) -> None:
    plan = {"kind": "tools", "steps": [f"Save the text to {path} with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Saved."), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path=path, content=content)], first_delay=delay),
             contains=ROLE_EXECUTOR, times=None)


WRITE = "Write 'hello from cortex' and save it to notes.txt"
LONG_STORY = "tell me a long story"
QUICK = "quick one"


def script_long_story(model: ScriptedModelServer) -> None:
    """A slowly streamed answer of 400 words to :data:`LONG_STORY` (20 s unless cancelled), a short one to
    :data:`QUICK`."""
    model.on(Reply(content="word " * 400, token_delay=0.05), contains="long story", times=None)
    model.on(Reply(content="short"), contains="quick one", times=None)


async def test_writes_ask_permission_then_the_client_writes(model: ScriptedModelServer, tmp_path: Path) -> None:
    """One session: an allowed write (asked, then written by the client), a rejected one (nothing
    written, the answer says so), and a cancel while the permission is open (nothing written)."""
    script_write(model, "notes.txt")
    async with acp_session(model, tmp_path, plans=False) as run:
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        response = await asyncio.wait_for(run.conn.prompt(session_id=session.session_id,
                                                          prompt=[text_block(WRITE)]), WAIT)
        target = run.root / "notes.txt"
        (asked,) = run.client.permissions
        assert [o.kind for o in asked.options] == ["allow_once", "reject_once"]
        assert asked.tool_call.kind == "edit" and "notes.txt" in (asked.tool_call.title or "")
        assert asked.tool_call.field_meta == {"cortex": {"asked": True, "description": "You asked for this change.",
                                                         "label": asked.tool_call.title}}
        diffs = [c for c in asked.tool_call.content or [] if isinstance(c, FileEditToolCallContent)]
        assert diffs and diffs[0].new_text == "hello from cortex\n" and diffs[0].old_text is None
        assert run.client.writes == [(str(target), "hello from cortex\n")]
        assert target.read_text() == "hello from cortex\n"
        edit_calls = [c for c in run.client.tool_calls() if c.kind == "edit"]
        assert len(edit_calls) == 1
        finished = [u for u in run.client.tool_updates() if u.tool_call_id == edit_calls[0].tool_call_id]
        assert finished[-1].status == "completed"
        assert any(isinstance(c, FileEditToolCallContent) for u in finished for c in u.content or [])
        meta = (response.field_meta or {})["cortex"]
        assert meta["edits"] == [{"uri": target.resolve().as_uri(), "kind": "create", "applied": True,
                                  "asked": True, "reason": ""}]

        # rejected: nothing written, and the answer never says it was
        model.reset()
        script_write(model, "other.txt")
        run.client.permission = "reject"
        since = run.client.mark()
        response = await asyncio.wait_for(run.conn.prompt(session_id=session.session_id, prompt=[
            text_block("Write 'hello from cortex' and save it to other.txt")]), WAIT)
        assert len(run.client.permissions) == 2
        assert len(run.client.writes) == 1
        assert not (run.root / "other.txt").exists()
        meta = (response.field_meta or {})["cortex"]
        assert meta["edits"][0]["applied"] is False and "rejected" in meta["edits"][0]["reason"]
        answer = run.client.answer_text(since)
        assert "Declined: other.txt" in answer, answer  # the run's ledger, after the model's own words

        # cancelled while the user looks at the permission: nothing written
        model.reset()
        script_write(model, "third.txt")
        run.client.permission = "hold"
        prompt = asyncio.create_task(run.conn.prompt(session_id=session.session_id, prompt=[
            text_block("Write 'hello from cortex' and save it to third.txt")]))
        await run.client.wait_for(lambda: len(run.client.permissions) == 3)
        await run.conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(prompt, 15)
        run.client.release.set()
        assert response.stop_reason == "cancelled"
        assert len(run.client.writes) == 1 and not (run.root / "third.txt").exists()


async def test_a_client_that_cannot_write_gets_no_write(model: ScriptedModelServer, tmp_path: Path) -> None:
    script_write(model, "notes.txt")
    async with acp_session(model, tmp_path, plans=False, write=False) as run:
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        response = await asyncio.wait_for(run.conn.prompt(session_id=session.session_id,
                                                          prompt=[text_block(WRITE)]), WAIT)
        assert run.client.permissions == [] and run.client.writes == []
        assert not (run.root / "notes.txt").exists()
        edit = (response.field_meta or {})["cortex"]["edits"][0]
        assert edit["applied"] is False and "fs/write_text_file" in edit["reason"]


async def test_cancel_mid_stream_answers_cancelled(model: ScriptedModelServer, tmp_path: Path) -> None:
    script_long_story(model)
    async with acp_session(model, tmp_path) as run:
        session = await run.conn.new_session(cwd=str(run.root), mcp_servers=[])
        since = run.client.mark()
        prompt = asyncio.create_task(run.conn.prompt(session_id=session.session_id,
                                                     prompt=[text_block(LONG_STORY)]))
        await run.client.wait_for(lambda: "word" in run.client.answer_text(since))
        await run.conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(prompt, 15)
        assert response.stop_reason == "cancelled"
        assert run.client.answer_text(since).count("word") < 400
        follow = await asyncio.wait_for(run.conn.prompt(session_id=session.session_id,
                                                        prompt=[text_block(QUICK)]), WAIT)
        assert follow.stop_reason == "end_turn"
