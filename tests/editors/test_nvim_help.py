"""`:help cortex` works with the documented set-up (the plugin folder on the runtimepath, nothing else):
the plugin ships doc/tags, and the tags file is current with the help file (regenerate it with
`nvim --headless -u NONE -c 'helptags editors/nvim/doc' -c q` after editing doc/cortex.txt)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.editors.nvim_support import PLUGIN, find_nvims, run_probe

pytestmark = [pytest.mark.editor]

HELP = PLUGIN / "doc" / "cortex.txt"
TAGS = PLUGIN / "doc" / "tags"
NVIMS = find_nvims()


def test_the_shipped_tags_are_current() -> None:
    defined = sorted(set(re.findall(r"\*([^*\s|]+)\*", HELP.read_text(encoding="utf-8"))))
    expected = [f"{tag}\tcortex.txt\t/*{tag.replace('/', chr(92) + '/')}*" for tag in defined]
    assert TAGS.is_file(), "editors/nvim/doc/tags is missing: run helptags"
    assert TAGS.read_text(encoding="utf-8").splitlines() == sorted(expected), "doc/tags is stale: run helptags"


PROBE = r"""
vim.opt.runtimepath:append(vim.env.PLUGIN_DIR)
local out = {}
for _, topic in ipairs({ 'cortex', 'cortex-chat', ':CortexChat', 'cortex-apply' }) do
  local ok, err = pcall(vim.cmd, 'help ' .. topic)
  out[topic] = { ok = ok, err = ok and vim.NIL or tostring(err), file = vim.fn.expand('%:t'),
                 line = vim.api.nvim_get_current_line() }
  pcall(vim.cmd, 'helpclose')
end
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.PROBE_OUT)
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_help_opens_with_the_documented_setup(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    # the documented set-up appends the plugin folder; the probe runner's own rtp entry is a copy elsewhere
    seen = json.loads(run_probe(nvim.path, PROBE, tmp_path, env={"PLUGIN_DIR": str(PLUGIN)},
                                plugin=tmp_path / "no-plugin-here"))
    for topic, got in seen.items():
        assert got["ok"] is True and got["file"] == "cortex.txt", (topic, got)
        assert f"*{topic}*" in got["line"], (topic, got)
