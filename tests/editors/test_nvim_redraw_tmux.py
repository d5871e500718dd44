"""Neovim 0.11 in a real terminal (tmux), read off the screen: a code action picked from a visual
selection shows the answer window at once, and the answer as soon as it arrives. On 0.11 the screen kept
the menu's prompt after the pick until the next redraw something else caused (the server's first
progress message, or the statusline clearing: seconds while the server was still starting). Here a
relay (lsp_hold_relay.py) holds every server message after the executeCommand until the window is on
the screen, and no key is pressed and no timer is due (``updatetime`` and the statusline clear pushed
far out): only the plugin's own redraw can show it; without it the test times out. The screen is
saved for a look (``screen.txt``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.editors.editor_scenario import EXPLAIN_ANSWER, make_workspace, script_model
from tests.editors.nvim_support import PLUGIN, REPO, find_nvims, server_command
from tests.lsp_harness import server_env
from tests.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.editor, pytest.mark.slow]

NVIMS = find_nvims()
WAIT_SECONDS = 60.0

INIT = r"""
vim.opt.runtimepath:prepend(vim.env.CORTEX_PLUGIN)
vim.o.updatetime = 3600000 -- no CursorHold redraw
local cortex = require('cortex')
cortex.setup({ cmd = vim.fn.json_decode(vim.env.CORTEX_CMD), status_clear_ms = 3600000 })
vim.keymap.set('x', '<F5>', function() vim.lsp.buf.code_action() end)
cortex.subscribe(function(r)
  if r.kind == 'result' then
    vim.fn.writefile({ r.command }, vim.env.MARKS .. '/result')
  end
end)
local t = vim.loop.new_timer()
t:start(100, 100, vim.schedule_wrap(function()
  local c = cortex.client()
  if c and c.initialized and not t:is_closing() then
    t:stop()
    t:close()
    vim.fn.writefile({ 'ready' }, vim.env.MARKS .. '/ready')
  end
end))
"""


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30,
                              check=False).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "cortex")


def _wait(what: str, cond, tmux: Tmux, timeout: float = WAIT_SECONDS) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; the screen:\n{tmux.screen()}")


def test_a_code_action_from_a_visual_selection_shows_at_once(model: ScriptedModelServer, tmp_path: Path) -> None:
    nvim = NVIMS["0.11"]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    root = make_workspace(tmp_path)
    script_model(model)
    marks = tmp_path / "marks"
    marks.mkdir()
    init = tmp_path / "init.lua"
    init.write_text(INIT, encoding="utf-8")
    release = marks / "release"
    relay = [sys.executable, str(Path(__file__).with_name("lsp_hold_relay.py")), *server_command()]
    env = {**server_env(model, tmp_path / "data", PYTHONPATH=str(REPO)), "CORTEX_PLUGIN": str(PLUGIN),
           "MARKS": str(marks), "CORTEX_CMD": json.dumps(relay), "HOME": str(tmp_path),
           "RELAY_RELEASE": str(release)}
    tmux = Tmux(f"cortex-{uuid.uuid4().hex[:8]}")
    command = [nvim.path, "-u", str(init), "-i", "NONE", "-n", "calc.py"]
    subprocess.run(["tmux", "-L", tmux.socket, "-f", "/dev/null", "new-session", "-d", "-s", "cortex", "-x", "200",
                    "-y", "50", "-c", str(root), "env",
                    *[f"{k}={v}" for k, v in env.items()], *command], check=True, timeout=30)
    try:
        _wait("the server to start", lambda: (marks / "ready").exists(), tmux)
        tmux("send-keys", "-t", "cortex", "4G", "V", "j", "F5")
        # the user reads the whole menu (its prompt is on the screen) before typing a number
        _wait("the code-action menu", lambda: "Type number" in tmux.screen(), tmux)
        menu = tmux.screen()
        number = next(line.split(":")[0].strip() for line in menu.splitlines() if "Cortex: Explain this" in line)
        tmux("send-keys", "-t", "cortex", number, "Enter")
        # the answer window shows the run at once, while the model has not answered yet (on 0.11 the
        # screen kept the menu's prompt until an unrelated redraw, after the result)
        _wait("the relay to hold the server's messages", lambda: Path(f"{release}.holding").exists(), tmux)
        _wait("the answer window", lambda: "# Explain calc.py" in tmux.screen(), tmux)
        working = tmux.screen()
        assert "working" in working, working
        release.write_text("go", encoding="utf-8")  # the server's messages flow again
        _wait("the explain result", lambda: (marks / "result").exists(), tmux)
        got_result = time.monotonic()
        # nothing else is typed: the answer must reach the screen by the plugin's own redraw
        _wait("the answer on the screen", lambda: EXPLAIN_ANSWER[:40] in tmux.screen(), tmux)
        shown_after = time.monotonic() - got_result
        screen = tmux.screen()
        (tmp_path / "screen.txt").write_text(screen, encoding="utf-8")
        print(f"\n[tmux screen] the answer was on the screen {shown_after:.2f} s after the result\n"
              f"{screen}")
    finally:
        tmux("kill-server")
    assert "def add(a, b):" in screen  # the code stays visible beside the answer
    assert "q close" in screen  # the float's title with the keys
