-- :checkhealth cortex — is the server there, which root would a file get, is a client running.
local M = {}

local health = vim.health or require('health')
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local err = health.error or health.report_error
local info = health.info or health.report_info
local start = health.start or health.report_start

-- The file the user was editing: :checkhealth shows its report in a buffer (and on 0.10+ a tab) of
-- its own, so the current buffer is the report; look at the alternate buffer and the previous tab.
local function file_of(buf)
  if buf and buf > 0 and vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_option(buf, 'buftype') == '' then
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= '' and not name:match('^%a[%w+.-]*:') then
      return name
    end
  end
end

function M.user_file()
  local found = file_of(vim.api.nvim_get_current_buf()) or file_of(vim.fn.bufnr('#'))
  if found then
    return found
  end
  local previous = vim.fn.tabpagenr('#')
  if previous > 0 then
    for _, buf in ipairs(vim.fn.tabpagebuflist(previous)) do
      found = file_of(buf)
      if found then
        return found
      end
    end
  end
  return ''
end

function M.check()
  start('cortex')
  local v = vim.version()
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    ok('Neovim ' .. version)
  else
    err('Neovim ' .. version .. ' is too old: Cortex needs 0.7 or newer')
  end
  local cortex = require('cortex')
  local opts = cortex.options and cortex.options() or nil
  if not opts then
    warn("require('cortex').setup{} has not run: no commands, no server", { 'Add it to your init.lua' })
    return
  end
  local file = M.user_file()
  local root = cortex.root_for(file)
  local cmd = cortex.server_cmd(root)
  if vim.fn.executable(cmd[1]) == 1 then
    ok('server: ' .. table.concat(cmd, ' '))
  else
    err('server not found: ' .. cmd[1], { "Install cortex-lsp (pip install -e .) or set setup{ cmd = { '/path/to/cortex-lsp' } }" })
  end
  local what = file ~= '' and vim.fn.fnamemodify(file, ':t') or 'files under the current directory'
  info('workspace root for ' .. what .. ': ' .. root .. (opts.root_dir and ' (from root_dir)' or ''))
  local client = cortex.client()
  if client then
    ok(string.format('client %d running (root %s)', client.id, tostring(client.config and client.config.root_dir)))
  else
    info('no Cortex client running yet (it starts with the first file buffer)')
  end
  info('writes are ' .. (opts.review_edits ~= false and 'reviewed (a accepts, r rejects)' or 'applied without review'))
  info('run :CortexDoctor for the model server, models, data folder and sandbox')
end

return M
