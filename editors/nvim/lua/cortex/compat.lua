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

-- The JSON-RPC id of the server request being handled, or nil. Neovim hands a server-request handler
-- only (err, params, ctx) (no id, on 0.7 and 0.11), but a server that withdraws its request
-- (`$/cancelRequest`) names it by id: the id is read from the `decoded` message that vim.lsp.rpc's
-- dispatch closure holds (a few frames up). Call it from the handler before any yield.
function M.server_request_id(method)
  for level = 2, 12 do
    local info = debug.getinfo(level, 'f')
    if not info then
      break
    end
    for i = 1, 60 do
      local name, value = debug.getupvalue(info.func, i)
      if name == nil then
        break
      end
      if name == 'decoded' and type(value) == 'table' and value.id ~= nil and value.method == method then
        return value.id
      end
    end
  end
  return nil
end

-- Whether a server-request handler runs in a coroutine it may yield (0.10+: vim.lsp.rpc dispatches
-- server requests in coroutine.wrap, so the answer can wait for the user; 0.7 answers with the
-- handler's return value at once).
function M.can_yield()
  local co, is_main = coroutine.running()
  if co == nil or is_main then
    return false
  end
  return coroutine.isyieldable == nil or coroutine.isyieldable()
end

return M
