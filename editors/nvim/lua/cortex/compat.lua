-- Version shims so one plugin runs on Neovim 0.7 (vim.lsp.start_client, no LspProgress, dot-call
-- client methods) and 0.10+/0.11 (vim.lsp.start, LspProgress, colon-call client methods).
local M = {}

M.has_start = vim.lsp.start ~= nil -- 0.8+
M.has_lsp_progress = vim.fn.exists('##LspProgress') == 1 -- 0.10+
M.colon_methods = vim.fn.has('nvim-0.11') == 1

function M.request(client, method, params, handler, bufnr)
  if M.colon_methods then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if M.colon_methods then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.get_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  local out = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if not filter or not filter.name or client.name == filter.name then
      table.insert(out, client)
    end
  end
  return out
end

-- An empty Lua table encodes as a JSON array; settings must stay objects.
function M.as_object(tbl)
  if tbl == nil or next(tbl) == nil then
    return vim.empty_dict()
  end
  return tbl
end

function M.is_dir(path)
  local stat = vim.loop.fs_stat(path)
  return stat ~= nil and stat.type == 'directory'
end

function M.exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

function M.is_executable(path)
  return path ~= nil and path ~= '' and vim.fn.executable(path) == 1
end

-- The folder holding the nearest `.git` (directory or file) above `path`, else nil.
function M.git_root(path)
  local dir = path
  if not M.is_dir(dir) then
    dir = vim.fn.fnamemodify(dir, ':h')
  end
  while dir and dir ~= '' do
    if M.exists(dir .. '/.git') then
      return dir
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return nil
end

return M
