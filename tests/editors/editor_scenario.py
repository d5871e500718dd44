"""The scripted conversation every real-editor test plays: a small Python workspace, and model replies
scripted per agent role (planner, executor, answer, explain) on the scripted model server.

Explain and ask answer directly; the write request plans a ``write_file`` call, the executor calls
it, then answers; a long answer streams slowly so code actions can be timed while a run is going.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cortex_lsp.agent.prompts import ROLE_DIRECT, ROLE_EXECUTOR, ROLE_EXPLAIN, ROLE_PLANNER
from tests.scripted_model import Reply, ScriptedModelServer, call

EXPLAIN_ANSWER = "The function add returns the sum of its two arguments a and b."
ASK_MESSAGE = "What is a closure?"
ASK_ANSWER = "A closure is a function that keeps the variables of the scope it was defined in."
WRITE_MESSAGE = "Save a short greeting to notes.txt"
WRITE_FILE = "notes.txt"
NOTE_TEXT = "Hello from Cortex!\n"
WRITE_ANSWER = "Saved the greeting to notes.txt."
REJECT_MESSAGE = "Save a summary of calc.py to summary.md"
REJECT_FILE = "summary.md"
REJECT_BOAST = "I saved a summary to summary.md."
CODE_MESSAGE = "Read calc.py and show add with an example"
CODE_LEAD = "add is defined at"
CODE_ANSWER = (f"{CODE_LEAD} calc.py:4 and adds its arguments.\n\n"
               "```python\ndef add(a, b):\n    return a + b  # the sum\n\nprint(add(2, 3))\n```\n")
BACK_MESSAGE = "Are you back on the new server?"
BACK_ANSWER = "Yes: answered by the model server the settings now name."
CANCEL_WRITE_MESSAGE = "Save a draft of calc.py to draft.md"
CANCEL_WRITE_FILE = "draft.md"
WITHDRAW_WRITE_MESSAGE = "Save an outline of calc.py to outline.md"
WITHDRAW_WRITE_FILE = "outline.md"
CLOSE_WRITE_MESSAGE = "Save a list of the functions in calc.py to functions.md"
CLOSE_WRITE_FILE = "functions.md"
STREAM_MESSAGE = "Stream a long answer please"
STREAM_ANSWER = " ".join(["streaming"] * 80)

CALC = '''"""Tiny module for the editor tests."""


def add(a, b):
    return a + b


def mul(a, b):
    return a * b
'''


def make_workspace(tmp_path: Path) -> Path:
    """A project folder (with a .git, so editors take it as the root) holding calc.py."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "calc.py").write_text(CALC, encoding="utf-8")
    return root


def role(marker: str, text: str) -> Callable[[dict[str, Any]], bool]:
    """Match a model request by the agent role's marker (in the system prompt) and the text in the
    latest user turns (not the history: one session carries every ask of a test)."""

    def match(body: dict[str, Any]) -> bool:
        messages = body.get("messages") or []
        system = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
        users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
        return marker in system and any(text in u for u in users[-2:])

    return match


def script_model(model: ScriptedModelServer) -> None:
    direct = json.dumps({"kind": "direct", "steps": ["Answer directly"], "tools": []})
    steps = [f"Write the greeting to {WRITE_FILE}"]
    plan = json.dumps({"kind": "tools", "steps": steps, "tools": ["write_file"]})
    on = model.on
    on(Reply(content=EXPLAIN_ANSWER, token_delay=0.01), when=role(ROLE_EXPLAIN, "return a + b"), times=None)
    on(Reply(content=direct), when=role(ROLE_PLANNER, ASK_MESSAGE), times=None)
    on(Reply(content=ASK_ANSWER, token_delay=0.01), when=role(ROLE_DIRECT, ASK_MESSAGE), times=None)
    on(Reply(content=plan), when=role(ROLE_PLANNER, WRITE_MESSAGE), times=None)
    on(Reply(tool_calls=[call("write_file", path=WRITE_FILE, content=NOTE_TEXT)]),
       when=role(ROLE_EXECUTOR, WRITE_MESSAGE), times=1)
    on(Reply(content=WRITE_ANSWER), when=role(ROLE_EXECUTOR, WRITE_MESSAGE), times=None)
    reject_plan = json.dumps({"kind": "tools", "steps": [f"Write the summary to {REJECT_FILE}"],
                              "tools": ["write_file"]})
    on(Reply(content=reject_plan), when=role(ROLE_PLANNER, REJECT_MESSAGE), times=None)
    on(Reply(tool_calls=[call("write_file", path=REJECT_FILE, content="# calc.py\nadd and mul\n")]),
       when=role(ROLE_EXECUTOR, REJECT_MESSAGE), times=1)
    # hostile: the model claims the save although the user rejected it
    on(Reply(content=REJECT_BOAST), when=role(ROLE_EXECUTOR, REJECT_MESSAGE), times=None)
    # a tool call (one collapsible line in VS Code's chat view), then an answer with a python block and
    # a file:line citation
    read_plan = json.dumps({"kind": "tools", "steps": ["Read calc.py"], "tools": ["read_file"]})
    on(Reply(content=read_plan), when=role(ROLE_PLANNER, CODE_MESSAGE), times=None)
    on(Reply(tool_calls=[call("read_file", path="calc.py")]), when=role(ROLE_EXECUTOR, CODE_MESSAGE), times=1)
    on(Reply(content=CODE_ANSWER), when=role(ROLE_EXECUTOR, CODE_MESSAGE), times=None)
    on(Reply(content=direct), when=role(ROLE_PLANNER, BACK_MESSAGE), times=None)
    on(Reply(content=BACK_ANSWER), when=role(ROLE_DIRECT, BACK_MESSAGE), times=None)
    for message, file in ((CANCEL_WRITE_MESSAGE, CANCEL_WRITE_FILE), (WITHDRAW_WRITE_MESSAGE, WITHDRAW_WRITE_FILE),
                          (CLOSE_WRITE_MESSAGE, CLOSE_WRITE_FILE)):
        write_plan = json.dumps({"kind": "tools", "steps": [f"Write to {file}"], "tools": ["write_file"]})
        on(Reply(content=write_plan), when=role(ROLE_PLANNER, message), times=None)
        on(Reply(tool_calls=[call("write_file", path=file, content="# calc.py\n")]),
           when=role(ROLE_EXECUTOR, message), times=1)
        on(Reply(content=f"Saved {file}."), when=role(ROLE_EXECUTOR, message), times=None)
    on(Reply(content=direct), when=role(ROLE_PLANNER, STREAM_MESSAGE), times=None)
    on(Reply(content=STREAM_ANSWER, token_delay=0.03), when=role(ROLE_DIRECT, STREAM_MESSAGE), times=None)
