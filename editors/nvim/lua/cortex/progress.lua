-- `$/progress` from the server: what each running token last said, shown in the echo area and as
-- the statusline text (require('cortex').status(), cleared a moment after the last run ends); and
-- cancelling every running token.
local compat = require('cortex.compat')
local state = require('cortex.state')

local M = {}

-- One progress notification (begin, report or end) for `token`.
function M.update(token, value)
  if type(value) ~= 'table' then
    return
  end
  local entry = state.progress[token] or {}
  if value.kind == 'begin' then
    entry = { title = value.title or 'Cortex', message = value.message or '' }
    state.progress[token] = entry
  elseif value.kind == 'report' then
    entry.message = value.message or entry.message
    state.progress[token] = entry
  elseif value.kind == 'end' then
    entry.message = value.message or 'done'
    state.progress[token] = nil
    -- the statusline component clears a moment after the last run ends
    vim.defer_fn(function()
      if next(state.progress) == nil then
        state.status = ''
        pcall(vim.cmd, 'redrawstatus')
      end
    end, (state.opts and state.opts.status_clear_ms) or 3000)
  end
  state.status = string.format('%s: %s', entry.title or 'Cortex', entry.message or '')
  if state.opts and state.opts.echo_progress then
    pcall(vim.api.nvim_echo, { { state.status:sub(1, math.max(10, vim.o.columns - 12)), 'ModeMsg' } }, false, {})
  end
  pcall(vim.cmd, 'redrawstatus')
  state.emit({ kind = 'progress', token = token, value = value })
end

-- Ask `client` to cancel every live token (window/workDoneProgress/cancel); returns how many.
function M.cancel_all(client)
  local n = 0
  for token, _ in pairs(state.progress) do
    compat.notify(client, 'window/workDoneProgress/cancel', { token = token })
    n = n + 1
  end
  return n
end

return M
