-- Apply a code block from an answer to a file, through the server's `cortex.apply` (a write like any
-- other: shown in the diff review, a accepts, r rejects). Where it goes: the file the block names (a
-- fence such as ```python calc.py, or a first-line comment `# calc.py`), else the file the run was
-- about, else the last file window. What it replaces: the top-level Python definition of the same
-- name, else the range the run was about, else the whole file.
local M = {}

local function utf16_len(text)
  if vim.fn.has('nvim-0.11') == 1 then
    return vim.str_utfindex(text, 'utf-16')
  end
  local _, n = vim.str_utfindex(text)
  return n
end

local PATH = '([%w_%-%./]+%.%w+)'

-- The relative path a block names, or nil.
function M.named_file(block)
  local info = block.info or ''
  local named = info:match('title="?' .. PATH) or info:match('^%w*%s+' .. PATH .. '$') or info:match('^' .. PATH .. '$')
  if named then
    return named
  end
  local first = vim.split(block.text or '', '\n', { plain = true })[1] or ''
  return first:match('^%s*[#/%-]+%s*[Ff]ile:%s*' .. PATH .. '%s*$') or first:match('^%s*[#/%-]+%s*' .. PATH .. '%s*$')
end

-- The one top-level `def`/`class` a Python block holds (decorators, comments, blank lines around it),
-- or nil.
function M.single_definition(text)
  local name
  for _, line in ipairs(vim.split(text, '\n', { plain = true })) do
    if line:match('^%S') and not line:match('^[@#]') then
      local found = line:match('^async%s+def%s+([%w_]+)') or line:match('^def%s+([%w_]+)')
        or line:match('^class%s+([%w_]+)')
      if not found or name then
        return nil
      end
      name = found
    end
  end
  return name
end

-- The range of the top-level definition `name` in `lines` (with its decorators), or nil.
function M.definition_range(lines, name)
  for i, line in ipairs(lines) do
    local found = line:match('^async%s+def%s+([%w_]+)') or line:match('^def%s+([%w_]+)') or line:match('^class%s+([%w_]+)')
    if found == name then
      local first = i
      while first > 1 and lines[first - 1]:match('^@') do
        first = first - 1
      end
      local last = i
      for j = i + 1, #lines do
        if lines[j]:match('^%S') then
          break
        end
        if lines[j]:match('%S') then
          last = j
        end
      end
      return { start = { line = first - 1, character = 0 }, ['end'] = { line = last - 1, character = utf16_len(lines[last]) } }
    end
  end
end

local function file_lines(fname)
  local b = vim.fn.bufnr(fname)
  if b ~= -1 and vim.api.nvim_buf_is_loaded(b) then
    return vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end
  return vim.fn.filereadable(fname) == 1 and vim.fn.readfile(fname) or nil
end

local function is_empty(range)
  return range == nil or (range.start.line == range['end'].line and range.start.character == range['end'].character)
end

-- Where `block` goes: { uri, range (nil: the whole file), label }, or nil and why.
function M.target(block, context, fallback_uri)
  context = context or {}
  local uri, range = context.uri or fallback_uri, context.range
  local named = M.named_file(block)
  if named then
    local base = uri and vim.fn.fnamemodify(vim.uri_to_fname(uri), ':h') or vim.fn.getcwd()
    local root = require('cortex.root').root_for(uri and vim.uri_to_fname(uri) or vim.fn.getcwd() .. '/x')
    local fname = vim.fn.filereadable(base .. '/' .. named) == 1 and base .. '/' .. named or root .. '/' .. named
    if not uri or vim.uri_from_fname(fname) ~= uri then
      range = nil
    end
    uri = vim.uri_from_fname(fname)
  end
  if not uri then
    return nil, 'no file to apply it to: open the file, or name it in the block'
  end
  local fname = vim.uri_to_fname(uri)
  local lines = file_lines(fname)
  local name = fname:match('%.pyw?$') and M.single_definition(block.text)
  local def = name and lines and M.definition_range(lines, name)
  local label = vim.fn.fnamemodify(fname, ':t')
  if def then
    return { uri = uri, range = def, label = label .. ': ' .. name }
  end
  if lines and not is_empty(range) then
    return { uri = uri, range = range, label = string.format('%s lines %d-%d', label, range.start.line + 1, range['end'].line + 1) }
  end
  return { uri = uri, range = nil, label = label .. (lines and ' (the whole file)' or ' (a new file)') }
end

-- Apply the code block at the cursor of the answer window `ui` (or its nearest block).
function M.from_answer(ui, execute, fallback_uri)
  local run = ui:run()
  local lnum = (ui.win and vim.api.nvim_win_is_valid(ui.win) and vim.api.nvim_get_current_win() == ui.win)
    and vim.api.nvim_win_get_cursor(ui.win)[1] or math.huge
  local block = run and ui:code_block(lnum)
  if not block then
    vim.notify('Cortex: no code block in this answer to apply', vim.log.levels.WARN)
    return false
  end
  local target, why = M.target(block, run.context, fallback_uri)
  if not target then
    vim.notify('Cortex: ' .. why, vim.log.levels.WARN)
    return false
  end
  local args = { uri = target.uri, text = block.text, range = target.range }
  return execute('cortex.apply', args, function(err, result)
    if err then
      return
    end
    if type(result) ~= 'table' then
      return
    end
    if result.unchanged then
      vim.notify('Cortex: ' .. target.label .. ' already has this code')
    elseif result.applied then
      vim.notify('Cortex: applied to ' .. target.label)
    else
      vim.notify('Cortex: not applied to ' .. target.label .. ': ' .. tostring(result.reason or ''), vim.log.levels.WARN)
    end
  end)
end

return M
