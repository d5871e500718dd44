"""`:checkhealth cortex` and `:help cortex` work in real Neovim 0.7 and 0.11 (no server started)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.editors.nvim_support import PLUGIN, find_nvims

pytestmark = [pytest.mark.editor]

NVIMS = find_nvims()


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_checkhealth_and_help(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin)
    out = tmp_path / "health.txt"
    script = tmp_path / "probe.vim"
    script.write_text("\n".join([
        f"helptags {plugin}/doc",
        "lua require('cortex').setup{ autostart = false, cmd = { '/nonexistent/cortex-lsp' } }",
        "checkhealth cortex",
        f"call writefile(getline(1, '$'), '{out}')",
        "help cortex-review",
        f"call writefile([expand('%:t'), getline('.')], '{out}.help')",
        "qa!",
    ]))
    subprocess.run([nvim.path, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={plugin}",
                    "-S", str(script)], env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
                   capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    report = out.read_text()
    assert "cortex" in report and "server not found: /nonexistent/cortex-lsp" in report, report
    assert "workspace root for this buffer" in report
    help_file, help_line = Path(f"{out}.help").read_text().splitlines()[:2]
    assert help_file == "cortex.txt" and "cortex-review" in help_line
