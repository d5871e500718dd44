"""The Neovim answer window, in real Neovim 0.7 and 0.11 (the plugin's UI module, no server): a side
float that leaves the code visible, wraps at word boundaries, keeps the reader's place while text
streams in, closes with q/<Esc>, and two runs don't fight over it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.editors.nvim_support import find_nvims, run_probe

pytestmark = [pytest.mark.editor]

NVIMS = find_nvims()

PROBE = r"""
vim.o.columns, vim.o.lines = 160, 40
local UI = require('cortex.ui')
local ui = UI.new({ float = {} })
local out = {}
local function event(run_id, type_, data) ui:apply({ run_id = run_id, type = type_, data = data or {} }) end
ui:begin('Ask: first')
event('A', 'plan', { kind = 'direct', steps = { 'Answer directly' } })
for i = 1, 60 do event('A', 'token', { value = 'line ' .. i .. '\n' }) end
ui:show(false)
local win = ui.win
local config = vim.api.nvim_win_get_config(win)
out.col = type(config.col) == 'table' and config.col[false] or config.col
out.width = vim.api.nvim_win_get_width(win)
out.focused = vim.api.nvim_get_current_win() == win
out.wrap = vim.api.nvim_win_get_option(win, 'wrap')
out.linebreak = vim.api.nvim_win_get_option(win, 'linebreak')
out.conceallevel = vim.api.nvim_win_get_option(win, 'conceallevel')
out.filetype = vim.api.nvim_buf_get_option(ui.buf, 'filetype')
out.treesitter = vim.treesitter.highlighter ~= nil and vim.treesitter.highlighter.active[ui.buf] ~= nil
out.title = config.title ~= nil and config.title ~= '' and vim.inspect(config.title) or vim.NIL
out.follow_end = vim.api.nvim_win_get_cursor(win)[1] == vim.api.nvim_buf_line_count(ui.buf)
-- the reader scrolls up; more text streams in: the place is kept
vim.api.nvim_win_set_cursor(win, { 3, 0 })
event('A', 'token', { value = 'more text\n' })
out.kept_place = vim.api.nvim_win_get_cursor(win)[1]
-- a second run starts: the window shows it; the first run's events don't take the window back
ui:begin('Ask: second')
event('B', 'plan', { kind = 'direct', steps = { 'Answer directly' } })
event('A', 'token', { value = 'late A text\n' })
ui:refresh()
out.shown_after_other_events = ui.current.title
ui:step_run(-1)
out.after_prev = ui.current.title
out.runs = #ui:run_list()
-- q closes it
vim.api.nvim_set_current_win(win)
vim.api.nvim_feedkeys('q', 'x', false)
out.closed = not vim.api.nvim_win_is_valid(win)
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.PROBE_OUT)
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_answer_window(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    seen = json.loads(run_probe(nvim.path, PROBE, tmp_path))
    assert seen["col"] >= 80, seen            # a side float: the left of the editor (the code) stays visible
    assert seen["width"] <= 80, seen
    assert seen["focused"] is False           # it does not steal focus
    assert seen["wrap"] is True and seen["linebreak"] is True
    # Markdown: the filetype everywhere; treesitter highlighting (the bundled parser) and conceal on 0.10+
    assert seen["filetype"] == "markdown" and seen["conceallevel"] == 2, seen
    assert seen["treesitter"] is (label != "0.7"), seen
    if label != "0.7":
        assert seen["title"] is not None and "close" in seen["title"]  # key hints in the title (0.9+)
    assert seen["follow_end"] is True         # while at the end, it follows the stream
    assert seen["kept_place"] == 3            # scrolled up: new text does not reset the place
    assert seen["shown_after_other_events"] == "Ask: second"
    assert seen["after_prev"] == "Ask: first"
    assert seen["runs"] == 2
    assert seen["closed"] is True


FAILED_PROBE = r"""
local UI = require('cortex.ui')
local ui = UI.new({ float = {} })
local key = ui:begin('Ask: hi')
ui:apply({ run_id = 'A', type = 'token', data = { value = 'partial' } })
ui:complete(key, { answer = 'The Ollama server is not answering.', stop_reason = 'model_unavailable' })
ui:apply({ run_id = 'A', type = 'edit', data = { uri = 'file:///w/x.md', kind = 'create', applied = false } })
local first = ui:text()
ui:complete(ui:begin('Ask: save'), { answer = 'Done.', stop_reason = 'cancelled', edits = {
  { uri = 'file:///w/a.md', applied = true }, { uri = 'file:///w/b%20c.md', applied = false, reason = 'x' } } })
vim.fn.writefile(vim.split(first .. '\n' .. ui:text(), '\n'), vim.env.PROBE_OUT)
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_model_down_reads_as_an_error(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    text = run_probe(nvim.path, FAILED_PROBE, tmp_path, out_name="out.txt")
    assert "Error: The Ollama server is not answering." in text
    assert "model unavailable" in text and "model_unavailable" not in text
    assert "partial" not in text
    assert "✏ create x.md — not written" in text and "not written: \n" not in text + "\n"  # no empty reason
    # the summary says which files were written and which were not (not just "2 edits")
    assert "written: a.md · not written: b c.md" in text
