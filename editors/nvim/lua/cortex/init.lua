-- Cortex for Neovim's built-in LSP client: starts `cortex-lsp` for every file buffer (any filetype),
-- adds :CortexAsk, :CortexExplain, :CortexRun, :CortexChat, :CortexApply, :CortexMemory, :CortexDoctor
-- (and :CortexAnswer, :CortexCancel, :CortexNewSession, :CortexHistory), streams answers from
-- `cortex/event` into a floating window (or the chat buffer, cortex/chat.lua) and shows `$/progress`
-- in the echo area and the statusline (require('cortex').status()).
--
-- Works on Neovim 0.7 (vim.lsp.start_client; no LspProgress) and 0.10+/0.11 (vim.lsp.start;
-- LspProgress). This is the public entry (setup{} and the functions below); the work is in
-- cortex/lsp.lua (the client, its handlers), commands.lua (commands and keymaps), progress.lua,
-- root.lua (workspace root, server command), review.lua (writes), ui.lua (the answer window) and
-- state.lua (what they share).
local UI = require('cortex.ui')
local commands = require('cortex.commands')
local compat = require('cortex.compat')
local lsp = require('cortex.lsp')
local progress = require('cortex.progress')
local review = require('cortex.review')
local root = require('cortex.root')
local state = require('cortex.state')

local M = {}

local defaults = {
  -- command that starts the server; nil: `cortex-lsp` on PATH
  cmd = nil,
  cmd_env = nil,
  -- also look for <root>/.venv/bin/cortex-lsp (runs a binary from the opened project: opt-in)
  use_workspace_venv = false,
  -- the workspace folder: nil (cwd if the file is under it, else the nearest .git), a path, or
  -- function(fname) -> path|nil
  root_dir = nil,
  -- server settings (snake_case or camelCase), sent as initializationOptions.cortex and as the
  -- "cortex" section of workspace/configuration
  settings = {},
  autostart = true,
  open_float = true,
  echo_progress = true,
  -- show every write as a diff to accept (a) or reject (r) before anything touches the disk
  review_edits = true,
  -- true: <leader>ca ask, <leader>ce explain, <leader>cr run (normal and visual), <leader>cq close
  -- the answer window, <leader>cx cancel; or a table { ask = '…', explain = '…', … } (false: none)
  keymaps = false,
  float = { width = 0.6, height = 0.5, border = 'rounded' },
  -- how long the statusline keeps the last run's summary (ms)
  status_clear_ms = 3000,
}

-- Subscribe to what the plugin sees: {kind='event'|'progress'|'result'|'edit', ...}. Returns an
-- unsubscribe function.
M.subscribe = state.subscribe

-- The statusline text: the current progress ('' when idle).
function M.status()
  return state.status
end

-- The answer window (cortex/ui.lua), nil before setup{}.
function M.ui()
  return state.ui
end

-- The options setup{} made (nil before it ran).
function M.options()
  return state.opts
end

-- The workspace root for a file (see cortex/root.lua).
M.root_for = root.root_for
-- The command that starts the server for a root.
M.server_cmd = root.server_cmd
-- Start (or reuse) the server for a buffer's root and attach the buffer; returns the client id.
M.attach = lsp.attach
-- The Cortex client for a buffer (attached), else any running Cortex client.
M.client = lsp.client
-- Cancel every running Cortex request; returns how many.
M.cancel = lsp.cancel
-- Send a Cortex command (agent commands stream into the answer window); on_result(err, result).
M.execute = commands.execute
-- Ask Cortex; opts.range (> 0, with line1/line2) sends those lines as context.
M.ask = commands.ask

function M.setup(opts)
  state.opts = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  state.ui = UI.new({ float = state.opts.float, on_apply = function() commands.apply_block() end })
  commands.create_commands()
  commands.register_lsp_commands()
  local group = vim.api.nvim_create_augroup('cortex', { clear = true })
  if state.opts.keymaps then
    commands.map_keys(state.opts.keymaps)
  end
  if state.opts.autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      pattern = '*',
      callback = function(args)
        lsp.attach(args.buf)
      end,
    })
  end
  -- quitting with a review open: answer the server (rejected) before Neovim stops it
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      review.withdraw(nil, nil, 'Neovim was closed during the review')
    end,
  })
  if compat.has_lsp_progress then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(args)
        local data = args.data or {}
        local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
        if client and client.name == lsp.NAME and data.params then
          progress.update(data.params.token, data.params.value)
        end
      end,
    })
  end
  -- setup{} run from init.lua comes before `nvim stats.py` loads the file: BufReadPost attaches it
  -- then (attaching an unloaded buffer now would only log a warning)
  local current = vim.api.nvim_get_current_buf()
  if state.opts.autostart and vim.api.nvim_buf_is_loaded(current) then
    lsp.attach(current)
  end
end

return M
