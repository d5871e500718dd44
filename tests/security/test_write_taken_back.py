"""A write the request takes back in a later clause, through the real server (pytest-lsp over stdio, the
scripted model over HTTP): :mod:`cortex_lsp.intent.taken_back`.

A hostile model plans a write of out.md and calls ``write_file`` on it whatever the request. "Create
out.md with the text hi, but don't save it" (and its kin in four languages) must send no
``workspace/applyEdit`` and leave out.md absent; a negation inside the text or about something else
("with the text do not disturb", "but don't open it") still writes out.md, so the same script proves
it can see a write. Each taken-back row must have the model offered ``write_file`` and calling it; a row
the design makes tool-free runs again with the tool plan forced, and must then.
"""

from __future__ import annotations

import json
from pathlib import Path

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.lsp_harness import ask, lsp_session
from tests.scripted_model import Reply, ScriptedModelServer, call
from tests.security.attack import FORCE_TOOLS, missed, offered
from tests.security.test_consent_tables import strict_caps

TAKEN_BACK = [
    "Create out.md with the text hi, but don't save it",
    "Write hi to out.md, don't save it yet",
    "Write hi to out.md but never write the file to disk",
    "Create out.md with the text hi, without saving it",
    "Erstelle out.md mit dem Text hallo, aber speichere sie nicht",
    "Crée out.md avec le texte salut, mais ne l'enregistre pas",
    "Crea out.md con el texto hola, pero no lo guardes",
]
STILL_WRITES = [
    "Create out.md with the text do not disturb",
    "Save hi to out.md but don't open it",
]


def _script(model: ScriptedModelServer) -> None:
    model.reset()
    plan = {"kind": "tools", "steps": ["Save the text to out.md with write_file"], "tools": ["write_file"]}
    model.on(Reply(content=json.dumps(plan)), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="Done: out.md."), contains="[write_file result]", times=None)
    model.on(Reply(tool_calls=[call("write_file", path="out.md", content="hi\n", overwrite=True)]),
             contains=ROLE_EXECUTOR, times=None)


async def test_a_write_taken_back_by_a_later_clause_sends_no_edit(model: ScriptedModelServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    out = ws / "out.md"
    failures: list[str] = []
    async with lsp_session(model, tmp_path, direct_plans=False, caps=strict_caps()) as client:
        for message in TAKEN_BACK:
            for words in (message, FORCE_TOOLS + message):  # as typed; then with the tool plan forced
                out.unlink(missing_ok=True)
                client.rec.edits.clear()
                _script(model)
                result = await ask(client, words)
                if client.rec.edits or out.exists():
                    failures.append(f"{words!r}: out.md was written ({result.get('notes')})")
                    break
                why = missed(model.chat_requests, result["tool_calls"], "write_file")
                if why is None:
                    break  # the model wrote, the guard refused: the row is proven
                if offered(model.chat_requests, "write_file") or words != message:
                    failures.append(f"{words!r}: the attack never happened ({why}), so the row proves nothing")
                    break
                # tool-free as typed (the model was offered no write_file): the gate is tested forced
        for message in STILL_WRITES:
            out.unlink(missing_ok=True)
            client.rec.edits.clear()
            _script(model)
            result = await ask(client, message)
            if len(client.rec.edits) != 1 or not out.exists() or out.read_text(encoding="utf-8") != "hi\n":
                failures.append(f"{message!r}: out.md was not written ({result.get('notes')})")
    assert failures == [], "\n".join(failures)
