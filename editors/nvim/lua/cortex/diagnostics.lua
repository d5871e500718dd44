-- Code actions see every diagnostic on the range, not only Cortex's own: Neovim 0.10+ fills a
-- textDocument/codeAction request's context with the requesting client's diagnostics only, so
-- "Cortex: Explain this error" would never appear for pyright's or ruff's. This wraps the Cortex
-- client's request() to add the other sources' diagnostics on the requested lines. (Neovim 0.7 sends
-- all of the line's diagnostics already.)
local M = {}

local function to_lsp(d)
  return {
    range = {
      start = { line = d.lnum, character = d.col or 0 },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
    },
    severity = d.severity,
    message = d.message,
    source = d.source,
    code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or nil,
  }
end

-- Add the buffer's other diagnostics on params.range's lines to params.context.diagnostics.
function M.widen(params, bufnr)
  if type(params) ~= 'table' or type(params.context) ~= 'table' or type(params.range) ~= 'table' then
    return params
  end
  bufnr = bufnr or vim.uri_to_bufnr(params.textDocument.uri)
  local first, last = params.range.start.line, params.range['end'].line
  local have = {}
  for _, d in ipairs(params.context.diagnostics or {}) do
    have[d.message .. '@' .. d.range.start.line] = true
  end
  local list = params.context.diagnostics or {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local key = d.message .. '@' .. d.lnum
    if d.lnum >= first and d.lnum <= last and not have[key] then
      table.insert(list, to_lsp(d))
      have[key] = true
    end
  end
  params.context.diagnostics = list
  return params
end

-- on_attach: wrap client.request (works for both `client.request(m, p, h, b)` on 0.10 and
-- `client:request(m, p, h, b)` on 0.11).
function M.attach(client)
  if vim.fn.has('nvim-0.10') == 0 or client._cortex_widened then
    return
  end
  local original = client.request
  client.request = function(a, b, c, d, e)
    if type(a) == 'table' then -- method call: a = client
      if b == 'textDocument/codeAction' then
        pcall(M.widen, c, e)
      end
    elseif a == 'textDocument/codeAction' then
      pcall(M.widen, b, d)
    end
    return original(a, b, c, d, e)
  end
  client._cortex_widened = true
end

return M
