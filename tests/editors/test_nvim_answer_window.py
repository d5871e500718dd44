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
    # what was streamed before the model went away stays, with the one error line after it
    assert "partial" in text and text.index("partial") < text.index("Error: The Ollama server is not answering.")
    assert text.count("Error:") == 1
    assert "✏ create x.md — not written" in text and "not written: \n" not in text + "\n"  # no empty reason
    # the summary says which files were written and which were not (not just "2 edits")
    assert "written: a.md · not written: b c.md" in text


LINES_PROBE = r"""
vim.o.columns, vim.o.lines = 160, 40
local UI = require('cortex.ui')
local ui = UI.new({ float = {} })
local out = {}
local key = ui:begin('Ask: save')
local function event(type_, data) ui:apply({ run_id = 'A', type = type_, data = data }) end
event('tool_call', { tool = 'write_file',
                     arguments = { path = 'notes.txt', content = 'Hello from Cortex!\nSecond line\n' } })
event('tool_result', { tool = 'write_file', success = true,
                       output = 'Created notes.txt (31 bytes); the editor applied the edit.\nmore' })
event('tool_call', { tool = 'python_exec', arguments = { code = 'import json\nprint(json.dumps({"a": "b\\nc"}))' } })
out.tool_text = ui:text()
-- the model server is down after the router's plan: one error, no plan that never ran
local down = ui:begin('Ask: hi')
ui:apply({ run_id = 'B', type = 'plan', data = { kind = 'direct', steps = { 'Answer directly' } } })
ui:apply({ run_id = 'B', type = 'step_start', data = { step = 1, description = 'Answer directly' } })
ui:apply({ run_id = 'B', type = 'error', data = { message = 'The Ollama server is not answering.' } })
ui:apply({ run_id = 'B', type = 'done',
           data = { answer = 'The Ollama server is not answering.', stop_reason = 'model_unavailable' } })
ui:complete(down, { answer = 'The Ollama server is not answering.', stop_reason = 'model_unavailable' })
out.down_text = ui:text()
ui:show(false)
local config = vim.api.nvim_win_get_config(ui.win)
out.title = config.title ~= nil and vim.inspect(config.title) or vim.NIL
out.title_float = ui.title_win ~= nil
  and vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(ui.title_win), 0, -1, false)[1] or vim.NIL
out.winhighlight = vim.api.nvim_win_get_option(ui.win, 'winhighlight')
local function bg(group) return vim.fn.synIDattr(vim.fn.synIDtrans(vim.fn.hlID(group)), 'bg#') end
out.float_bg, out.pmenu_bg = bg('CortexFloat'), bg('Pmenu')
ui:close()
out.title_closed = ui.title_win == nil
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.PROBE_OUT)
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_tool_lines_one_error_and_a_titled_float(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    seen = json.loads(run_probe(nvim.path, LINES_PROBE, tmp_path))
    tool_lines = [line for line in seen["tool_text"].split("\n") if line.startswith(("⚙", "✔", "✘"))]
    assert tool_lines == [
        '⚙ write_file notes.txt · content: "Hello from Cortex!" (2 lines)',
        "✔ write_file: Created notes.txt (31 bytes); the editor applied the edit. …",
        '⚙ python_exec · code: "import json" (2 lines)',
    ], tool_lines
    assert "\\n" not in seen["tool_text"] and "{" not in seen["tool_text"].split("\n", 1)[1]
    down = seen["down_text"]
    assert down.count("The Ollama server is not answering.") == 1, down
    assert "Plan" not in down and "▶" not in down, down  # no plan that never ran
    # the key hints: the border's title on 0.9+, a one-line float over the border on 0.7
    hint = seen["title"] if label != "0.7" else seen["title_float"]
    assert hint is not None and "q close" in hint and "ga apply" in hint, seen
    assert "NormalFloat:CortexFloat" in seen["winhighlight"]
    assert seen["float_bg"] != seen["pmenu_bg"] or seen["pmenu_bg"] == "", seen  # not the magenta Pmenu look
    assert seen["title_closed"] is True
