-- Where the server runs and on what: the workspace root of a file, the command that starts
-- `cortex-lsp`, and which buffers are files (the ones the server is started for).
local compat = require('cortex.compat')
local state = require('cortex.state')

local M = {}

local function strip_slash(dir)
  return (#dir > 1 and dir:sub(-1) == '/') and dir:sub(1, -2) or dir
end

-- The workspace for a file: setup{root_dir=…} (a path, or a function(fname) returning one or nil);
-- else the current directory when the file is under it (`cd workspace; nvim stats.py` makes
-- `workspace` the root, even inside a bigger repository), unless the cwd is / or $HOME; else the
-- nearest folder with a `.git`; else the file's own folder.
function M.root_for(path)
  local custom = state.opts and state.opts.root_dir
  if type(custom) == 'function' then
    local ok, dir = pcall(custom, path)
    if ok and type(dir) == 'string' and dir ~= '' then
      return strip_slash(vim.fn.fnamemodify(dir, ':p'))
    end
  elseif type(custom) == 'string' and custom ~= '' then
    return strip_slash(vim.fn.fnamemodify(custom, ':p'))
  end
  local cwd = strip_slash(vim.fn.fnamemodify(vim.loop.cwd(), ':p'))
  local file = path ~= '' and vim.fn.fnamemodify(path, ':p') or ''
  local home = strip_slash(vim.fn.fnamemodify(vim.loop.os_homedir() or '', ':p'))
  if file ~= '' and cwd ~= '/' and cwd ~= home and file:sub(1, #cwd + 1) == cwd .. '/' then
    return cwd
  end
  return compat.git_root(file ~= '' and file or cwd) or (file ~= '' and vim.fn.fnamemodify(file, ':h')) or cwd
end

-- The command that starts the server for `root`: setup{cmd=…}; else <root>/.venv/bin/cortex-lsp when
-- setup{use_workspace_venv=true} and it is there; else `cortex-lsp` on PATH.
function M.server_cmd(root)
  local cmd = state.opts.cmd
  if type(cmd) == 'string' then
    return { cmd }
  end
  if type(cmd) == 'table' then
    return cmd
  end
  if state.opts.use_workspace_venv and compat.is_executable(root .. '/.venv/bin/cortex-lsp') then
    return { root .. '/.venv/bin/cortex-lsp' }
  end
  return { 'cortex-lsp' }
end

-- A buffer holding a file on disk (not a help, terminal or scratch buffer, nor a URL).
function M.is_file_buffer(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and not name:match('^%a[%w+.-]*://')
end

return M
