"""The Neovim plugin's workspace root, in real Neovim 0.7 and 0.11 (no server needed): the cwd when
the file is under it (the sample folder inside the repository), else the nearest .git, and
setup{root_dir=…} overrides both."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.editors.nvim_support import PLUGIN, find_nvims

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
    probe = tmp_path / "probe.lua"
    probe.write_text(PROBE)
    out = tmp_path / "out.json"
    env = {"PROBE_REPO": str(repo), "PROBE_OTHER": str(other), "PROBE_OUT": str(out), "HOME": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [nvim.path, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={PLUGIN}",
         "-c", f"luafile {probe}", "-c", "qa!"],
        env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.exists(), proc.stderr
    roots = json.loads(out.read_text())
    ws = str(repo / "workspace")
    assert roots["cwd_nested"] == ws
    assert roots["cwd_nested_relative"] == ws
    assert roots["cwd_elsewhere"] == str(repo)  # the file is not under the cwd: the nearest .git
    assert roots["cwd_repo"] == str(repo)
    assert roots["override_path"] == str(repo)
    assert roots["override_fn"] == str(repo)
    assert roots["override_fn_nil"] == ws  # the function declined: the usual rule
