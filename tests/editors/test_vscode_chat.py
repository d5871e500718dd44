"""The VS Code chat as a user works with it: code-server through Chromium (playwright-core), driven by
scripts/editors/vscode_chat_e2e.cjs against the real server and a scripted model.

One scenario, in order: the selection's context chip and what the model gets; × on the chip and a
`#file:calc.py` mention (the whole file reaches the model); Stop enabled only
while a run streams; a write's review that waits a full minute (the chat's card and the notice are
still there), decided in the chat with nothing left in the notification centre, the accepted file
opened and linked; closing the diff tab rejects; *Apply to file* on a code block changes the file only
after Accept; a model that dies mid-answer keeps what streamed; the chat survives a window reload;
New Chat clears it; Regenerate replaces the answer. Screenshots are kept in tests/editors/artifacts/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from cortex_lsp.agent.prompts import ROLE_DIRECT, ROLE_EXECUTOR, ROLE_PLANNER
from tests.editors.editor_scenario import (
    CLOSE_WRITE_FILE,
    CLOSE_WRITE_MESSAGE,
    NOTE_TEXT,
    WRITE_FILE,
    WRITE_MESSAGE,
    make_workspace,
    role,
    script_model,
)
from tests.editors.test_vscode_editor import (
    ARTIFACTS,
    CHROMIUM,
    CODE_SERVER,
    PLAYWRIGHT,
    REPO,
    VSIX,
    _ensure_fresh_vsix,
    _free_port,
    _keep_screenshots,
    _missing,
    _server_path,
)
from tests.lsp_harness import server_env
from tests.scripted_model import Reply, ScriptedModelServer

pytestmark = [pytest.mark.editor, pytest.mark.slow]

DRIVER = REPO / "scripts" / "editors" / "vscode_chat_e2e.cjs"
REVIEW_WAIT_SECONDS = 60  # longer than any toast stays on screen
CONTEXT_MESSAGE = "What does the selected code return?"
CONTEXT_ANSWER = "It returns the sum of a and b, as computed by the selected function."
MENTION_MESSAGE = "Name the functions defined in #file:calc.py"
MENTION_SENT = "Name the functions defined in calc.py"
MENTION_ANSWER = "calc.py defines add and mul."
APPLY_MESSAGE = "Give add a docstring"
APPLY_MARKER = '"""Return the sum of a and b."""'
APPLY_ANSWER = f"Here it is:\n\n```python\ndef add(a, b):\n    {APPLY_MARKER}\n    return a + b\n```\n"
KILL_MESSAGE = "Tell me a long story about sums"
KILL_TEXT = " ".join(f"word{i}" for i in range(40))
KILL_PARTIAL = "word0 word1 word2 word3 word4 word5"
REGEN_MESSAGE = "Name one prime number"
REGEN_ANSWER = "Seven is a prime number."


def _script(model: ScriptedModelServer) -> None:
    script_model(model)
    direct = json.dumps({"kind": "direct", "steps": ["Answer directly"], "tools": []})
    for message, answer, delay, cut in (
        (CONTEXT_MESSAGE, CONTEXT_ANSWER, 0.15, None),
        (MENTION_SENT, MENTION_ANSWER, 0.0, None),
        (APPLY_MESSAGE, APPLY_ANSWER, 0.0, None),
        (KILL_MESSAGE, KILL_TEXT, 0.05, 8),
        (REGEN_MESSAGE, REGEN_ANSWER, 0.05, None),
    ):
        model.on(Reply(content=direct), when=role(ROLE_PLANNER, message), times=None, first=True)
        model.on(Reply(content=answer, token_delay=delay, cut_after=cut), when=role(ROLE_DIRECT, message), times=None,
                 first=True)
    # should a router read the named file first, the executor answers the same
    model.on(Reply(content=MENTION_ANSWER), when=role(ROLE_EXECUTOR, MENTION_SENT), times=None, first=True)


def _requests_with(model: ScriptedModelServer, text: str) -> list[str]:
    return [json.dumps(r.get("messages", [])) for r in model.chat_requests if text in json.dumps(r.get("messages", []))]


def test_vscode_chat_review_apply_history(model: ScriptedModelServer, tmp_path: Path) -> None:
    _ensure_fresh_vsix()
    why = _missing()
    if why:
        pytest.skip(why)
    root = make_workspace(tmp_path)
    _script(model)
    work = tmp_path / "vscode"
    work.mkdir()
    scenario = {
        "codeServer": str(CODE_SERVER), "playwrightCore": str(PLAYWRIGHT), "chromium": str(CHROMIUM),
        "vsix": str(VSIX), "serverPath": _server_path(), "workspace": str(root), "work": str(work),
        "port": _free_port(), "out": str(work / "out.json"),
        "contextMessage": CONTEXT_MESSAGE, "contextAnswer": CONTEXT_ANSWER,
        "writeMessage": WRITE_MESSAGE, "writeFile": WRITE_FILE, "noteText": NOTE_TEXT,
        "reviewWaitMs": REVIEW_WAIT_SECONDS * 1000,
        "closeMessage": CLOSE_WRITE_MESSAGE, "closeFile": CLOSE_WRITE_FILE,
        "mentionMessage": MENTION_MESSAGE, "mentionAnswer": MENTION_ANSWER,
        "applyMessage": APPLY_MESSAGE, "applyMarker": APPLY_MARKER,
        "killMessage": KILL_MESSAGE, "killPartial": KILL_PARTIAL,
        "regenMessage": REGEN_MESSAGE, "regenAnswer": REGEN_ANSWER,
        "timeoutMs": 480_000,
    }
    (work / "scenario.json").write_text(json.dumps(scenario), encoding="utf-8")
    home = work / "home"
    home.mkdir()
    # the worktree's server (not whatever cortex_lsp the venv has installed)
    python_path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(REPO)) if p)
    env = {**server_env(model, tmp_path / "data", CORTEX_TOOL_TIMEOUT_SECONDS="4"),
           "PYTHONPATH": python_path, "CORTEX_VSCODE_SCENARIO": str(work / "scenario.json"),
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share")}
    started = time.monotonic()
    proc = subprocess.run(["node", str(DRIVER)], env=env, capture_output=True, text=True, timeout=560,
                          stdin=subprocess.DEVNULL, check=False)
    out = json.loads((work / "out.json").read_text(encoding="utf-8")) if (work / "out.json").exists() else {}
    print(f"\n[code-server chat] driver ran in {time.monotonic() - started:.1f} s; steps: "
          + ", ".join(f"{k}={v['ms']}ms" for k, v in (out.get("steps") or {}).items()))
    _keep_screenshots(out.get("screenshots") or [])
    if out:  # what the driver saw, next to the screenshots
        (ARTIFACTS / "vscode-chat-out.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    assert out, f"the driver wrote nothing (exit {proc.returncode}): {proc.stderr[-3000:]}"
    assert out["failures"] == [], f"{out['failures']}\ncode-server: {out.get('code_server_log', '')[-1500:]}"
    # the chip shows the selection, and the selection reached the model with the question
    assert out["chip"].startswith("calc.py:4-5"), out["chip"]
    asked = _requests_with(model, CONTEXT_MESSAGE)
    assert asked and any("return a + b" in r for r in asked), asked
    # Stop: disabled when idle, enabled while the answer streams; what was sent is in view
    assert out["stop_disabled_idle"] is True and out["stop_enabled_running"] is True
    assert out["sent_in_view"] is True
    # × removed the chip; #file:calc.py sent the whole file (mul is outside the earlier selection), and
    # the model got the plain name, not the mention
    assert out["chip_after_remove"] == 0
    mentioned = _requests_with(model, MENTION_SENT)
    assert mentioned and any("def mul(a, b)" in r for r in mentioned), mentioned
    assert not _requests_with(model, "#file:")
    # the review: card and notice after a full minute, nothing on disk until Accept, decided in the chat
    review = out["review"]
    assert "Waiting for your review" in review["card"] and f"create {WRITE_FILE}" in review["card"], review
    assert "Accept" in review["card_after_wait"] and "Reject" in review["card_after_wait"], review
    assert review["toasts_after_wait"] == 1, review
    assert f"create {WRITE_FILE}" in review["tab"], review
    assert review["on_disk_during_review"] is False
    assert review["disk_after_accept"] == NOTE_TEXT
    assert "waiting for your review" not in review["centre"].lower(), review["centre"]
    assert WRITE_FILE in review["file_tab"] and review["file_link"], review
    # closing the diff tab rejected the write
    assert out["close_tab"] == {"card_left": 0, "on_disk": False, "toasts_left": 0}, out["close_tab"]
    assert not (root / CLOSE_WRITE_FILE).exists()
    # Apply to file: a reviewed change of calc.py; only the function it redefines is replaced
    apply = out["apply"]
    assert apply["unchanged_during_review"] is True, apply
    assert "replace calc.py" in apply["card"], apply
    calc = (root / "calc.py").read_text(encoding="utf-8")
    assert APPLY_MARKER in calc and "def mul(a, b):" in calc and calc.count("def add") == 1, calc
    assert "    return a + b\n\n\ndef mul" in calc, calc  # no stray empty line where the block ended
    # the model died mid-answer: the streamed words stay, one error line follows, the status says so
    killed = out["killed"]
    assert KILL_PARTIAL in killed["text"], killed
    assert killed["text"].count("Error:") == 1, killed
    assert "model down" in killed["status"], killed
    assert not re.search(r"ollama_base_url", killed["text"]), killed
    # after a window reload the chat is back, and History lists it
    assert CONTEXT_MESSAGE in out["after_reload"] and CONTEXT_ANSWER in out["after_reload"]
    assert any(CONTEXT_MESSAGE[:20] in item for item in out["history_items"]), out["history_items"]
    # New Chat: an empty view, no session id shown
    assert CONTEXT_ANSWER not in out["after_new_chat"]
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", out["after_new_chat"]), out["after_new_chat"]
    # Regenerate replaced the answer (one question, one answer on screen)
    assert out["regenerated"] == {"answers": 1, "questions": 1}, out["regenerated"]
    # ... and the server dropped the replaced exchange: the rerun's request carries neither the previous
    # answer nor the question twice
    regen = _requests_with(model, REGEN_MESSAGE)
    assert len(regen) >= 2, regen
    assert REGEN_ANSWER not in regen[-1] and regen[-1].count(REGEN_MESSAGE) == 1, regen[-1]
