"""Neovim 0.7 and 0.11 against the real server and a scripted model: :CortexChat sends a multi-line
question with its range as context and streams the answer into the chat buffer, a follow-up stays in
the session; `ga` in the answer window applies a code block through `cortex.apply`, reviewed as a diff:
rejected, the file is unchanged; accepted, the function of the same name is replaced. *Cortex: Fix this
error* on another tool's diagnostic ends in a reviewed, accepted edit of the file; :CortexHistory
reopens the chat's session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortex_lsp.agent.prompts import ROLE_DIRECT, ROLE_EXECUTOR, ROLE_PLANNER
from tests.editors.editor_scenario import CALC, make_workspace, role
from tests.editors.nvim_support import REPO, find_nvims, run_driver, server_command
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer, call

pytestmark = [pytest.mark.editor, pytest.mark.slow]

NVIMS = find_nvims()
DRIVER = Path(__file__).with_name("nvim_chat_driver.lua")
CHAT = ["Explain these lines", "in one sentence please"]
FOLLOW_UP = "And what would it return for two lists?"
CODE_MESSAGE = "Show a documented add"
BETTER_ADD = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b'
FIX_MESSAGE = "mul should guard against None"
FIXED_MUL = "def mul(a, b):\n    if a is None or b is None:\n        return None\n    return a * b"


def _script(model: ScriptedModelServer) -> None:
    direct = json.dumps({"kind": "direct", "steps": ["Answer directly"], "tools": []})
    fix_plan = json.dumps({"kind": "tools", "steps": ["Write the fixed calc.py"], "tools": ["write_file"]})
    model.on(Reply(content=fix_plan), when=role(ROLE_PLANNER, "Fix the error in calc.py"), times=None)
    model.on(Reply(tool_calls=[call("write_file", path="calc.py", content=CALC.replace(
        "def mul(a, b):\n    return a * b", FIXED_MUL), overwrite=True)]),
        when=role(ROLE_EXECUTOR, "Fix the error in calc.py"), times=1)
    model.on(Reply(content="Fixed mul."), when=role(ROLE_EXECUTOR, "Fix the error in calc.py"), times=None)
    model.on(Reply(content=direct), contains=ROLE_PLANNER, times=None)
    model.on(Reply(content="It adds a and b.", token_delay=0.01), when=role(ROLE_DIRECT, CHAT[1]), times=1)
    model.on(Reply(content=f"Here:\n\n```python\n{BETTER_ADD}\n```\n"), contains=CODE_MESSAGE, times=None)
    model.on(Reply(content="It would concatenate them."), contains=FOLLOW_UP, times=None)


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_chat_and_apply(label: str, model: ScriptedModelServer, tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    root = make_workspace(tmp_path)
    _script(model)
    monkeypatch.setattr("tests.editors.nvim_support.DRIVER", DRIVER)
    scenario = {"root": str(root), "file": str(root / "calc.py"), "cmd": server_command(), "chat_lines": CHAT,
                "follow_up": FOLLOW_UP, "code_message": CODE_MESSAGE, "decisions": ["r", "a", "a"],
                "fix_message": FIX_MESSAGE}
    env = server_env(model, tmp_path / "data", PYTHONPATH=str(REPO))  # this checkout's server
    out, proc, _ = run_driver(nvim.path, scenario, env, tmp_path / "nvim", 150)
    assert out and out["failures"] == [], f"{out}\n{proc.stderr[-2000:]}"

    # the chat: context shown, the two-line question sent with lines 4-5 as data, the answers streamed in
    assert out["context_line"] == "Context: calc.py lines 4-5"
    first = next(r for r in model.chat_requests if ROLE_DIRECT in json.dumps(r["messages"])
                 and r["messages"][-1]["content"] == "\n".join(CHAT))
    assert "editor selection" in json.dumps(first["messages"]) and "return a + b" in json.dumps(first["messages"])
    follow = next(r for r in model.chat_requests if r["messages"][-1]["content"] == FOLLOW_UP
                  and ROLE_PLANNER not in r["messages"][0]["content"])
    assert "It adds a and b." in json.dumps(follow["messages"][:-1])  # the first exchange is its history
    assert [c["question"] for c in out["chats"]] == ["\n".join(CHAT), FOLLOW_UP]
    assert out["chats"][0]["session_id"] == out["chats"][1]["session_id"]  # one session
    assert "It adds a and b." in out["chat_text"] and "It would concatenate them." in out["chat_text"]
    assert out["float_opened_by_chat"] is False

    # apply: rejected first (unchanged), then accepted (add replaced, mul kept)
    assert out["reviews"] >= 2, out["applies"]
    rejected, accepted = out["applies"]
    assert rejected["result"]["applied"] is False and rejected["disk"] == CALC.rstrip("\n")
    assert accepted["result"]["applied"] is True and accepted["result"]["edits"][0]["asked"] is True
    assert accepted["disk"] == CALC.replace("def add(a, b):\n    return a + b", BETTER_ADD).rstrip("\n")

    # Fix this error: offered on the other tool's diagnostic, reviewed (the third review), accepted
    assert out["fix_title"] == f"Cortex: Fix this error: {FIX_MESSAGE}"
    assert out["reviews"] == 3 and out["fix"]["stop_reason"] == "answered", out["fix"]
    assert out["fix"]["edits"][0]["applied"] is True
    assert FIXED_MUL in out["fix_disk"]
    fix_request = next(r for r in model.chat_requests if ROLE_EXECUTOR in json.dumps(r["messages"])
                       and "Fix the error in calc.py" in json.dumps(r["messages"]))
    assert FIX_MESSAGE in json.dumps(fix_request["messages"])  # the diagnostic reached the model, as data

    # :CortexHistory reopened the chat's session: its questions and answers, and it continues there
    assert out["history_session"] == out["chats"][0]["session_id"]
    assert "Explain these lines" in out["history_text"] and "It adds a and b." in out["history_text"]
