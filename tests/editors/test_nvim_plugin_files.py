"""The Neovim plugin's files refer to things that exist (no Neovim needed): every `require('cortex.…')`
names a module under editors/nvim/lua/, every module says what it is for and stays under ~500 lines,
and every |cortex…| / |:Cortex…| link in the help file names a tag the help file defines."""

from __future__ import annotations

import re

from tests.editors.nvim_support import PLUGIN

MODULES = PLUGIN / "lua" / "cortex"
HELP = PLUGIN / "doc" / "cortex.txt"


def test_every_required_module_exists() -> None:
    required = {name for path in MODULES.glob("*.lua")
                for name in re.findall(r"require\(['\"](cortex(?:\.\w+)?)['\"]\)", path.read_text(encoding="utf-8"))}
    assert {"cortex", "cortex.lsp", "cortex.commands", "cortex.review", "cortex.ui"} <= required, required
    missing = [name for name in required
               if not (MODULES / ("init.lua" if name == "cortex" else name.split(".", 1)[1] + ".lua")).is_file()]
    assert missing == [], missing


def test_every_module_is_described_and_small() -> None:
    for path in MODULES.glob("*.lua"):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines and lines[0].startswith("-- "), f"{path.name} does not start with what it is for"
        assert len(lines) <= 500, f"{path.name} has {len(lines)} lines"


def test_help_links_name_tags_that_exist() -> None:
    text = HELP.read_text(encoding="utf-8")
    tags = set(re.findall(r"\*([^*\s|]+)\*", text))
    links = set(re.findall(r"\|((?::Cortex|cortex)[^|\s]*)\|", text))
    assert {"cortex-setup", ":CortexCancel"} <= links and "cortex-root" in tags, (links, tags)
    assert links - tags == set(), links - tags
