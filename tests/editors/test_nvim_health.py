"""`:checkhealth cortex` and `:help cortex` work in real Neovim 0.7 and 0.11 (no server started)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.editors.nvim_support import PLUGIN, find_nvims, run_probe

pytestmark = [pytest.mark.editor]

NVIMS = find_nvims()


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_checkhealth_and_help(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin)
    workspace = tmp_path / "repo" / "workspace"  # inside a bigger repository: the cwd is the root
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    workspace.mkdir()
    (workspace / "stats.py").write_text("print(1)\n")
    out = tmp_path / "health.txt"
    script = "\n".join([
        f"helptags {plugin}/doc",
        "lua require('cortex').setup{ autostart = false, cmd = { '/nonexistent/cortex-lsp' }, keymaps = true }",
        f"call writefile([maparg('<leader>ce', 'n'), maparg('<leader>cq', 'n')], '{out}.keys')",
        f"cd {workspace}",
        "edit stats.py",
        "checkhealth cortex",
        f"call writefile(getline(1, '$'), '{out}')",
        "help cortex-review",
        f"call writefile([expand('%:t'), getline('.')], '{out}.help')",
        "qa!",
    ])
    report = run_probe(nvim.path, script, tmp_path, out_name=out.name, plugin=plugin, suffix=".vim")
    assert "cortex" in report and "server not found: /nonexistent/cortex-lsp" in report, report
    # the root of the file the user was editing (not of the report's own buffer)
    assert f"workspace root for stats.py: {workspace}" in report, report
    explain_key, close_key = Path(f"{out}.keys").read_text().splitlines()[:2]
    assert "CortexExplain" in explain_key and "CortexClose" in close_key
    help_file, help_line = Path(f"{out}.help").read_text().splitlines()[:2]
    assert help_file == "cortex.txt" and "cortex-review" in help_line
