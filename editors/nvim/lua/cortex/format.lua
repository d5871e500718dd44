-- Text for the answer window and the chat: a value as a string, a file name from a URI, a run's
-- one-line summary, and tool calls and results as one readable line each (no raw JSON, no escaped
-- newlines: `⚙ write_file notes.txt · content: "Hello from Cortex!" (2 lines)`).
local M = {}

M.MAX_VALUE = 48 -- characters of one argument value shown
M.MAX_LINE = 110 -- characters of a tool line

function M.str(value, fallback)
  if type(value) == 'string' then
    return value
  end
  if value == nil or value == vim.NIL then
    return fallback or ''
  end
  local ok, encoded = pcall(vim.fn.json_encode, value)
  return ok and encoded or tostring(value)
end

function M.basename(uri)
  local name = M.str(uri):match('([^/]+)$') or M.str(uri)
  return (name:gsub('%%(%x%x)', function(h)
    return string.char(tonumber(h, 16))
  end))
end

-- `text` cut to `n` characters (on a character boundary) with … when cut.
function M.cut(text, n)
  if vim.fn.strchars(text) <= n then
    return text
  end
  return vim.fn.strcharpart(text, 0, n - 1) .. '…'
end

-- One value as it reads in a line: strings quoted, first line only, with the line count.
local function value_text(value)
  if type(value) ~= 'string' then
    return M.cut(M.str(value), M.MAX_VALUE)
  end
  local lines = vim.split(value:gsub('\n$', ''), '\n', { plain = true })
  local shown = '"' .. M.cut(lines[1] or '', M.MAX_VALUE) .. '"'
  if #lines > 1 then
    shown = shown .. string.format(' (%d lines)', #lines)
  end
  return shown
end

local FIRST = { path = 1, url = 1, query = 1, expression = 1, code = 2, content = 3 }

-- `⚙ tool path · other: value …`: the path-like argument bare, the others as name: value.
function M.tool_call(tool, args)
  local head, rest = '⚙ ' .. M.str(tool, 'tool'), {}
  if type(args) == 'table' then
    local keys = vim.tbl_keys(args)
    table.sort(keys, function(a, b)
      local ra, rb = FIRST[a] or 9, FIRST[b] or 9
      if ra == rb then
        return tostring(a) < tostring(b)
      end
      return ra < rb
    end)
    for _, k in ipairs(keys) do
      local v = args[k]
      if (k == 'path' or k == 'url') and type(v) == 'string' and head:find(' ', 5, true) == nil then
        head = head .. ' ' .. M.cut(v, M.MAX_VALUE)
      elseif k ~= 'overwrite' or v == true then
        table.insert(rest, tostring(k) .. ': ' .. value_text(v))
      end
    end
  end
  table.insert(rest, 1, head)
  return M.cut(table.concat(rest, ' · '), M.MAX_LINE)
end

-- `✔ tool: first line of the output …` (✘ when it failed).
function M.tool_result(tool, success, output)
  local text = M.str(output):gsub('\r', '')
  local first = text:match('^%s*([^\n]*)') or ''
  if text:find('\n%s*%S') then
    first = first .. ' …'
  end
  local mark = success == false and '✘ ' or '✔ '
  return M.cut(mark .. M.str(tool, 'tool') .. (first ~= '' and (': ' .. first) or ''), M.MAX_LINE)
end

local STOP_LABELS = {
  model_unavailable = 'model unavailable',
  step_budget = 'stopped: step budget used up',
  time_budget = 'stopped: time budget used up',
  error = 'failed',
}

function M.summary(result)
  local stop = M.str(result.stop_reason, 'done')
  local parts = { STOP_LABELS[stop] or stop }
  local calls = type(result.tool_calls) == 'table' and #result.tool_calls or 0
  local written, unwritten = {}, {}
  for _, e in ipairs(type(result.edits) == 'table' and result.edits or {}) do
    table.insert(type(e) == 'table' and e.applied == true and written or unwritten,
      M.basename(type(e) == 'table' and e.uri or ''))
  end
  if calls > 0 then
    table.insert(parts, calls .. ' tool call' .. (calls == 1 and '' or 's'))
  end
  if #written > 0 then
    table.insert(parts, 'written: ' .. table.concat(written, ', '))
  end
  if #unwritten > 0 then
    table.insert(parts, 'not written: ' .. table.concat(unwritten, ', '))
  end
  if type(result.elapsed_ms) == 'number' then
    table.insert(parts, string.format('%.1f s', result.elapsed_ms / 1000))
  end
  return table.concat(parts, ' · ')
end

return M
