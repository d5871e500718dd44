"""``cortex.run`` through the real server: size before parse, and no silent downgrade without bubblewrap."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.lsp_harness import execute, lsp_session
from tests.scripted_model import ScriptedModelServer


def _open(client: object, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(  # type: ignore[attr-defined]
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


async def test_a_huge_document_is_refused_by_size_and_code_actions_still_answer(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    huge = "x = 1\n" * 1_000_000  # 6 MB of valid Python: a parse would take seconds
    async with lsp_session(model, tmp_path) as client:
        big = _open(client, ws / "big.py", huge)
        small = _open(client, ws / "small.py", "print(1)\n")
        run = asyncio.create_task(execute(client, "cortex.run", {"uri": big}))
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=small),
            range=types.Range(start=types.Position(0, 0), end=types.Position(0, 8)),  # "print(1)" selected
            context=types.CodeActionContext(diagnostics=[])))
        result = await run
        ran_small = await execute(client, "cortex.run", {"uri": small})
    assert result["ran"] is False and "over 200000 characters" in result["reason"]
    assert actions is not None and any(a.title == "Cortex: Run this" for a in actions)
    assert ran_small["stdout"] == "1\n"
    assert model.chat_requests == [], "cortex.run never calls the model"


async def test_without_os_isolation_every_result_and_the_first_run_say_so(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    async with lsp_session(model, tmp_path, init_options={"cortex": {"sandbox_isolation": "none"}}) as client:
        uri = _open(client, ws / "a.py", "print(2)\n")
        first = await execute(client, "cortex.run", {"uri": uri})
        second = await execute(client, "cortex.run", {"uri": uri})
        messages = [m.message for m in client.messages]
    for result in (first, second):
        assert result["stdout"] == "2\n"
        assert "not isolated" in (result["warning"] or "")
        assert any("not isolated" in n for n in result["notes"])
    shown = [m for m in messages if "not isolated" in m]
    assert len(shown) == 1, messages  # once per session, not on every run


async def test_a_long_program_runs_whole_never_cut_and_a_block_in_a_huge_file_runs_alone(
    model: ScriptedModelServer, tmp_path: Path
) -> None:
    """The 64 KB cut made for a model never applies to code that runs (a cut program must not run), and
    a small block in a huge file runs without parsing the whole file for its definitions."""
    ws = tmp_path / "ws"
    ws.mkdir()
    program = "x = 0\n" + "x += 1\n" * 14_000 + "print(x)\n"  # ~100 KB: over the model cut, under the limit
    huge = "def helper():\n    return 41\n" + "y = 1\n" * 1_000_000 + "print('block')\n"
    last = huge.count("\n") - 1
    async with lsp_session(model, tmp_path) as client:
        long_uri = _open(client, ws / "long.py", program)
        huge_uri = _open(client, ws / "huge.py", huge)
        ran_long = await execute(client, "cortex.run", {"uri": long_uri})
        ran_block = await execute(client, "cortex.run", {"uri": huge_uri, "range": {
            "start": {"line": last, "character": 0}, "end": {"line": last, "character": 14}}})
    assert ran_long["ran"] and ran_long["stdout"] == "14000\n", ran_long
    assert ran_block["ran"] and ran_block["stdout"] == "block\n", ran_block
    assert any("too large to gather the definitions" in n for n in ran_block["notes"])
