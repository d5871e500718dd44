"""The Neovim review module on its own, in real Neovim 0.7 and 0.11 (no server): a withdrawal closes
exactly the review answering that request id (another id leaves it open), the answer is "not applied"
and nothing is on disk; on 0.10+ the handler waits in its coroutine (the editor runs on), on 0.7 in
its own loop; and the Ex commands that quit are recognised (the 0.7 loop answers before quitting)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.editors.nvim_support import find_nvims, run_probe

pytestmark = [pytest.mark.editor]

NVIMS = find_nvims()

PROBE = r"""
local review = require('cortex.review')
local out = {}
local target = vim.env.PROBE_DIR .. '/new.md'
local uri = vim.uri_from_fname(target)
local zero = { line = 0, character = 0 }
local params = { label = 'Cortex: create new.md', edit = { documentChanges = {
  { kind = 'create', uri = uri, options = { overwrite = false } },
  { textDocument = { uri = uri, version = vim.NIL },
    edits = { { range = { start = zero, ['end'] = zero }, newText = 'text\n' } } },
} } }
local ctx = { client_id = 7, request_id = 'cortex-edit-1' }
local result
local function decide()
  out.tabs_open = #vim.api.nvim_list_tabpages()
  out.closed_other = review.withdraw(7, 'cortex-edit-2', 'x')        -- another request: stays open
  out.closed_other_client = review.withdraw(8, 'cortex-edit-1', 'x') -- another client: stays open
  out.open_after_others = review.open_count()
  out.closed_own = review.withdraw(7, 'cortex-edit-1', 'the run was cancelled before you decided')
end
local yields = vim.fn.has('nvim-0.10') == 1
if yields then
  local co = coroutine.create(function()
    result = review.handle(params, { can_yield = true }, ctx)
  end)
  coroutine.resume(co)
  out.waiting = result == nil -- the handler yielded: the editor runs on while the review is open
  decide()
else
  vim.defer_fn(decide, 200) -- runs while the 0.7 handler waits in its loop
  result = review.handle(params, { can_yield = false }, ctx)
  out.waiting = true
end
vim.wait(1000, function() return result ~= nil end, 10)
out.result = result
out.tabs_after = #vim.api.nvim_list_tabpages()
out.on_disk = vim.fn.filereadable(target) == 1
out.quits = {}
for _, cmd in ipairs({ 'q', 'qa', 'qa!', ' :wqa', 'xa', 'cq', 'quitall', 'x',
                      'CortexCancel', 'tabclose', 'w', 'quux' }) do
  out.quits[cmd] = review.is_quit(cmd)
end
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.PROBE_OUT)
"""


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_withdrawal_closes_that_review(label: str, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    seen = json.loads(run_probe(nvim.path, PROBE, tmp_path))
    assert seen["waiting"] is True and seen["tabs_open"] == 2, seen
    assert seen["closed_other"] == 0 and seen["closed_other_client"] == 0 and seen["open_after_others"] == 1
    assert seen["closed_own"] == 1
    assert seen["result"] == {"applied": False, "failureReason": "the run was cancelled before you decided"}
    assert seen["tabs_after"] == 1 and seen["on_disk"] is False
    assert not (tmp_path / "new.md").exists()
    quits = seen["quits"]
    assert all(quits[c] for c in ("q", "qa", "qa!", " :wqa", "xa", "cq", "quitall", "x")), quits
    assert not any(quits[c] for c in ("CortexCancel", "tabclose", "w", "quux")), quits
