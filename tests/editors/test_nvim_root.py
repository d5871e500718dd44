"""The Neovim plugin's workspace root, in real Neovim 0.7 and 0.11 (no server needed): the cwd when
the file is under it (the sample folder inside the repository), else the nearest .git, and
setup{root_dir=…} overrides both."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.editors.nvim_support import PLUGIN, find_nvims, run_probe

pytestmark = [pytest.mark.editor]

NVIMS = find_nvims()

PROBE = """
local out = {}
local cortex = require('cortex')
local function probe(label, cwd, file, opts)
  vim.cmd('cd ' .. vim.fn.fnameescape(cwd))
  cortex.setup(vim.tbl_extend('force', { autostart = false }, opts or {}))
  out[label] = cortex.root_for(file)
end
local repo, ws = vim.env.PROBE_REPO, vim.env.PROBE_REPO .. '/workspace'
probe('cwd_nested', ws, ws .. '/stats.py')
probe('cwd_nested_relative', ws, 'stats.py')
probe('cwd_elsewhere', vim.env.PROBE_OTHER, ws .. '/stats.py')
probe('cwd_repo', repo, ws .. '/stats.py')
probe('override_path', ws, ws .. '/stats.py', { root_dir = repo })
probe('override_fn', ws, ws .. '/stats.py', { root_dir = function(f) return vim.fn.fnamemodify(f, ':h:h') end })
probe('override_fn_nil', ws, ws .. '/stats.py', { root_dir = function() return nil end })
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.PROBE_OUT)
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_root_is_the_cwd_then_git_then_override(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "workspace").mkdir()
    (repo / "workspace" / "stats.py").write_text("print(1)\n")
    other = tmp_path / "elsewhere"
    other.mkdir()
    roots = json.loads(run_probe(nvim.path, PROBE, tmp_path,
                                 env={"PROBE_REPO": str(repo), "PROBE_OTHER": str(other)}))
    ws = str(repo / "workspace")
    assert roots["cwd_nested"] == ws
    assert roots["cwd_nested_relative"] == ws
    assert roots["cwd_elsewhere"] == str(repo)  # the file is not under the cwd: the nearest .git
    assert roots["cwd_repo"] == str(repo)
    assert roots["override_path"] == str(repo)
    assert roots["override_fn"] == str(repo)
    assert roots["override_fn_nil"] == ws  # the function declined: the usual rule


STARTUP = """
vim.opt.runtimepath:prepend(vim.env.PROBE_PLUGIN)
require('cortex').setup({ cmd = vim.fn.json_decode(vim.env.PROBE_CMD) })
vim.api.nvim_create_autocmd('VimEnter', { callback = function()
  local cortex = require('cortex')
  -- the user asks at once, while the server is still starting: the command waits for it
  local answered
  local sent = cortex.execute('cortex.memory.sessions', nil, function(err, result)
    answered = { err = err, ok = type(result) == 'table' and result.sessions ~= nil }
  end)
  local attached = vim.wait(30000, function()
    local c = cortex.client(0)
    local buf = vim.api.nvim_get_current_buf()
    return c ~= nil and c.attached_buffers ~= nil and c.attached_buffers[buf] == true
  end, 50)
  vim.wait(30000, function() return answered ~= nil end, 50)
  local c = cortex.client(0)
  vim.fn.writefile({ vim.fn.json_encode({ sent = sent, answered = answered or vim.NIL, attached = attached,
                                          root = c and c.config.root_dir or vim.NIL,
                                          log = vim.lsp.get_log_path() }) }, vim.env.PROBE_OUT)
  vim.cmd('qa!')
end })
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_startup_as_a_user_starts_it(label: str, tmp_path: Path) -> None:
    """`cd workspace; nvim stats.py` with setup{} in init.lua: the server starts on the workspace, and
    Neovim's LSP log holds no warning or error from the plugin (nothing like "buf_attach_client called
    on unloaded buffer")."""
    from tests.editors.nvim_support import read_out, server_command
    from tests.lsp_harness import server_env

    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    ws = tmp_path / "repo" / "workspace"
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    ws.mkdir()
    (ws / "stats.py").write_text("print(1)\n")
    init = tmp_path / "init.lua"
    init.write_text(STARTUP)
    out = tmp_path / "out.json"
    env = {**server_env(None, tmp_path / "data"), "PROBE_PLUGIN": str(PLUGIN), "PROBE_OUT": str(out),
           "PROBE_CMD": json.dumps(server_command()), "HOME": str(tmp_path / "home"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run([nvim.path, "--headless", "-u", str(init), "-i", "NONE", "stats.py"], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    seen = json.loads(read_out(out, proc))
    assert seen["attached"] is True and seen["root"] == str(ws), seen
    assert seen["sent"] is True and seen["answered"] == {"ok": True}, seen  # asked before it had started
    log = Path(seen["log"]).read_text() if Path(seen["log"]).exists() else ""
    assert "[WARN]" not in log and "[ERROR]" not in log, log
