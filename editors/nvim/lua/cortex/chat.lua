-- :CortexChat: a chat buffer. Write a question (any number of lines) under the last `## You`, send it
-- with <C-s> (Normal or Insert mode) or <CR> (Normal mode); the answer streams in under `## Cortex`,
-- and the next question goes in the same session. The range (or the buffer) :CortexChat was called on
-- is the context sent with every question (uri + range to `cortex.ask`), shown at the top;
-- :CortexChat! chats without one. :CortexHistory reopens a past session (`cortex.session.turns`).
local state = require('cortex.state')
local root = require('cortex.root')

local M = {}

local NS = vim.api.nvim_create_namespace('cortex-chat')
local PROMPT = '## You'
local MAX_MESSAGE = 8192

local chat = nil -- the one chat: { buf, context, session_id, exchanges = { {question, key, answer} }, busy }

local function utf16_len(text)
  if vim.fn.has('nvim-0.11') == 1 then
    return vim.str_utfindex(text, 'utf-16')
  end
  local _, n = vim.str_utfindex(text)
  return n
end

local function context_of(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if opts.bang or not root.is_file_buffer(bufnr) then
    return nil
  end
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  local context = { uri = vim.uri_from_bufnr(bufnr), bufnr = bufnr, label = name .. ' (the whole file)' }
  if opts.range and opts.range > 0 then
    local last = vim.api.nvim_buf_get_lines(bufnr, opts.line2 - 1, opts.line2, false)[1] or ''
    context.range = { start = { line = opts.line1 - 1, character = 0 },
                      ['end'] = { line = opts.line2 - 1, character = utf16_len(last) } }
    context.label = string.format('%s lines %d-%d', name, opts.line1, opts.line2)
  end
  return context
end

-- The row (0-based) of the prompt header: the last `## You`.
local function prompt_row(c)
  local mark = vim.api.nvim_buf_get_extmark_by_id(c.buf, NS, c.mark, {})
  return mark and mark[1] or vim.api.nvim_buf_line_count(c.buf) - 1
end

local function transcript(c)
  local out = { '# Cortex chat', 'Context: ' .. (c.context and c.context.label or 'none'),
                '(<C-s>, or <CR> in Normal mode: send · <C-c>: stop · :CortexChat! without context)', '' }
  for _, ex in ipairs(c.exchanges) do
    table.insert(out, PROMPT)
    vim.list_extend(out, vim.split(ex.question, '\n', { plain = true }))
    table.insert(out, '')
    table.insert(out, '## Cortex')
    local lines
    if ex.key then
      lines = state.ui:lines(state.ui:run(ex.key))
      lines = vim.list_slice(lines, 3) -- without the run's title
    else
      lines = vim.split(ex.answer or '', '\n', { plain = true })
    end
    vim.list_extend(out, lines)
    table.insert(out, '')
  end
  return out
end

-- Redraw the transcript above the prompt; the question being written below it stays as it is.
function M.render()
  local c = chat
  if not (c and vim.api.nvim_buf_is_valid(c.buf)) then
    return
  end
  local row = prompt_row(c)
  local lines = transcript(c)
  table.insert(lines, PROMPT)
  local delta = #lines - (row + 1)
  local cursors = {}
  for _, win in ipairs(vim.fn.win_findbuf(c.buf)) do
    cursors[win] = vim.api.nvim_win_get_cursor(win)
  end
  vim.api.nvim_buf_set_lines(c.buf, 0, row + 1, false, lines)
  c.mark = vim.api.nvim_buf_set_extmark(c.buf, NS, #lines - 1, 0, { id = c.mark })
  for win, pos in pairs(cursors) do
    local line = pos[1] > row + 1 and pos[1] + delta or pos[1]
    if c.busy and pos[1] >= row + 1 then
      line = #lines -- following the answer while it streams
    end
    pcall(vim.api.nvim_win_set_cursor, win, { math.min(math.max(line, 1), vim.api.nvim_buf_line_count(c.buf)), pos[2] })
  end
  vim.api.nvim_buf_set_option(c.buf, 'modified', false)
  pcall(vim.cmd, 'redraw')
end

-- Send what is written under the prompt.
function M.send()
  local c = chat
  if not c then
    return false
  end
  if c.busy then
    vim.notify('Cortex: wait for the answer (or <C-c> to stop it)', vim.log.levels.WARN)
    return false
  end
  local row = prompt_row(c)
  local draft = vim.api.nvim_buf_get_lines(c.buf, row + 1, -1, false)
  local question = vim.trim(table.concat(draft, '\n'))
  if question == '' then
    vim.notify('Cortex: write a question under "' .. PROMPT .. '" first', vim.log.levels.INFO)
    return false
  end
  if #question > MAX_MESSAGE then
    vim.notify(string.format('Cortex: the question is %d characters; the limit is %d', #question, MAX_MESSAGE),
      vim.log.levels.ERROR)
    return false
  end
  local args = { message = question, session_id = c.session_id }
  if c.context then
    args.uri, args.range = c.context.uri, c.context.range
  end
  local ex = { question = question }
  table.insert(c.exchanges, ex)
  vim.api.nvim_buf_set_lines(c.buf, row + 1, -1, false, {})
  c.busy = true
  local sent, key = require('cortex.commands').execute('cortex.ask', args, function(err, result)
    c.busy = false
    if not err and type(result) == 'table' and type(result.session_id) == 'string' then
      c.session_id = result.session_id
    end
    M.render()
    state.emit({ kind = 'chat', question = question, err = err, result = result })
  end, c.context and c.context.bufnr or nil, { float = false })
  if not sent then
    c.busy = false
    return false
  end
  ex.key = key
  M.render()
  return true
end

local function create_buffer()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'markdown')
  pcall(vim.api.nvim_buf_set_name, buf, 'cortex://chat')
  local function map(modes, lhs, fn)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map({ 'n', 'i' }, '<C-s>', function()
    vim.cmd('stopinsert')
    M.send()
  end)
  map('n', '<CR>', M.send)
  map('n', '<C-c>', function() require('cortex.lsp').cancel() end)
  return buf
end

local function show(c)
  local wins = vim.fn.win_findbuf(c.buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, c.buf)
    vim.api.nvim_win_set_width(0, math.max(40, math.floor(vim.o.columns * 0.4)))
    for option, value in pairs({ wrap = true, linebreak = true, number = false, relativenumber = false }) do
      pcall(vim.api.nvim_win_set_option, 0, option, value)
    end
  end
  local last = vim.api.nvim_buf_line_count(c.buf)
  vim.api.nvim_win_set_cursor(0, { last, 0 })
end

-- :[range]CortexChat[!]: open (or show) the chat, with the range or buffer as its context.
function M.open(opts, session)
  opts = opts or {}
  local context = context_of(opts)
  if not (chat and vim.api.nvim_buf_is_valid(chat.buf)) or session then
    local buf = (chat and vim.api.nvim_buf_is_valid(chat.buf)) and chat.buf or create_buffer()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { PROMPT, '' })
    chat = { buf = buf, exchanges = {}, session_id = session and session.session_id or nil,
             mark = vim.api.nvim_buf_set_extmark(buf, NS, 0, 0, {}) }
    for i, t in ipairs(session and session.turns or {}) do
      if t.role == 'user' then
        table.insert(chat.exchanges, { question = t.text, answer = '' })
      elseif t.role == 'assistant' and #chat.exchanges > 0 and i > 1 then
        chat.exchanges[#chat.exchanges].answer = t.text
      end
    end
  end
  if context or opts.bang or session then
    chat.context = context
  end
  M.render()
  show(chat)
  return chat
end

-- The chat (nil before :CortexChat).
function M.current()
  return chat
end

-- :CortexHistory: pick a past session and reopen it in the chat.
function M.pick_session()
  local commands = require('cortex.commands')
  commands.execute('cortex.memory.sessions', nil, function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    local items = {}
    for _, s in ipairs(result.sessions or {}) do
      if (s.turns or 0) > 0 then
        table.insert(items, s)
      end
    end
    vim.ui.select(items, {
      prompt = 'Cortex sessions',
      format_item = function(s)
        return string.format('%s  (%d turns, %s)', s.title ~= '' and s.title or '(untitled)', s.turns or 0,
          os.date('%Y-%m-%d %H:%M', math.floor(s.last_activity or 0)))
      end,
    }, function(choice)
      if not choice then
        return
      end
      commands.execute('cortex.session.turns', { session_id = choice.id }, function(err2, session)
        if not err2 and type(session) == 'table' then
          M.open({ bang = true }, session)
          state.session_id = session.session_id
        end
      end)
    end)
  end)
end

return M
