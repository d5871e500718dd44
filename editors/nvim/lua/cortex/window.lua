-- Floating-window helpers for the answer window: the Cortex highlight groups (a float that looks like
-- the editor, not 0.7's magenta Pmenu: CortexFloat, CortexFloatBorder, CortexFloatTitle, all
-- `default` links a colour scheme may override), a title with key hints (the border title on 0.9+, a
-- one-line float laid over the top border on 0.7/0.8), and a redraw that shows an update at once.
local M = {}

M.border_title = vim.fn.has('nvim-0.9') == 1

function M.define_highlights()
  local modern = vim.fn.has('nvim-0.10') == 1
  vim.cmd('highlight default link CortexFloat Normal')
  vim.cmd('highlight default link CortexFloatBorder ' .. (modern and 'FloatBorder' or 'Comment'))
  vim.cmd('highlight default link CortexFloatTitle ' .. (M.border_title and 'FloatTitle' or 'Comment'))
end

M.WINHIGHLIGHT = 'Normal:CortexFloat,NormalFloat:CortexFloat,FloatBorder:CortexFloatBorder'
  .. (M.border_title and ',FloatTitle:CortexFloatTitle' or '')

-- Give `config` (for nvim_open_win) its title where the border can hold one.
function M.with_title(config, title)
  if M.border_title then
    config.title = title
    config.title_pos = 'right'
  end
  return config
end

-- On 0.7/0.8: a one-line float over the top border of `win` (opened with `config`) showing `title`.
-- Returns the title window (nil where the border holds the title, or without a border).
function M.open_title(win, config, title)
  if M.border_title or not config.border or config.border == 'none' then
    return nil
  end
  local width = vim.fn.strdisplaywidth(title)
  if width + 2 > config.width then
    return nil
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { title })
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'wipe')
  local zindex = (vim.api.nvim_win_get_config(win).zindex or 50) + 1
  local twin = vim.api.nvim_open_win(buf, false, {
    relative = 'editor', row = config.row, col = config.col + config.width + 1 - width, width = width, height = 1,
    style = 'minimal', focusable = false, zindex = zindex, noautocmd = true,
  })
  pcall(vim.api.nvim_win_set_option, twin, 'winhighlight', 'Normal:CortexFloatTitle,NormalFloat:CortexFloatTitle')
  return twin
end

function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) then
    pcall(vim.api.nvim_win_close, win, true)
  end
end

-- Show what changed now: an update from a server callback is otherwise drawn only at the next key or
-- timer (on 0.11, a code action picked from a visual selection showed its answer seconds late).
function M.redraw()
  pcall(vim.cmd, 'redraw')
end

return M
