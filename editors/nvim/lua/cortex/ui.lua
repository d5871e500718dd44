-- The answer window: a transcript of runs rebuilt from `cortex/event` notifications and command
-- results, shown in a floating window that updates (and redraws) while a run streams, without taking
-- focus; its title shows the keys (on 0.7 too, as a one-line float over the border).
local M = {}
M.__index = M

local F = require('cortex.format')
local W = require('cortex.window')

local MAX_RUNS = 20
local str, basename = F.str, F.basename

M.FAILED = { model_unavailable = true, error = true }
M.summary = F.summary

function M.new(opts)
  local self = setmetatable({}, M)
  self.opts = opts or {}
  self.runs = {}
  self.counter = 0
  self.buf = nil
  self.win = nil
  self.current = nil
  return self
end

function M:_push(run)
  table.insert(self.runs, run)
  while #self.runs > MAX_RUNS do
    table.remove(self.runs, 1)
  end
  self.current = run
end

function M:_find(key)
  for _, run in ipairs(self.runs) do
    if run.key == key then
      return run
    end
  end
end

-- Start a run the user asked for; the first event with an unknown run id attaches to it.
-- `context` ({uri, range}): the file (and range) the run is about; Apply puts a code block there.
function M:begin(title, context)
  self.counter = self.counter + 1
  local run = { key = 'local-' .. self.counter, title = title, blocks = {}, streamed = false, finished = false,
                context = context }
  self:_push(run)
  return run.key
end

function M:_run_for(run_id)
  for _, run in ipairs(self.runs) do
    if run.run_id == run_id then
      return run
    end
  end
  for _, run in ipairs(self.runs) do
    if run.run_id == nil and not run.finished and #run.blocks == 0 then
      run.run_id = run_id
      return run
    end
  end
  local run = { key = 'run-' .. run_id, run_id = run_id, title = 'Cortex', blocks = {}, streamed = false, finished = false }
  self:_push(run)
  return run
end

local function append_text(run, text)
  if text == '' then
    return
  end
  run.streamed = true
  local last = run.blocks[#run.blocks]
  if last and last.kind == 'text' then
    last.text = last.text .. text
  else
    table.insert(run.blocks, { kind = 'text', text = text })
  end
end

-- The final answer is authoritative: it replaces the streamed text (tokens may still be in flight
-- when the result arrives), and tokens for a finished run are ignored.
local function set_answer(run, answer)
  local kept, placed = {}, false
  for _, b in ipairs(run.blocks) do
    if b.kind ~= 'text' then
      table.insert(kept, b)
    elseif not placed then
      table.insert(kept, { kind = 'text', text = answer })
      placed = true
    end
  end
  if not placed then
    table.insert(kept, { kind = 'text', text = answer })
  end
  run.blocks = kept
  run.streamed = true
end

local function finish(run, data)
  if run.finished then
    return
  end
  if type(data.answer) == 'string' and data.answer ~= '' and M.FAILED[str(data.stop_reason)] then
    -- one error line: the `error` event's, or the answer's, after what was streamed (the partial answer
    -- stays: it is what the user read); and no plan when no step ran (the model was down: the plan was
    -- the router's guess, never carried out)
    local kept, shown = {}, false
    local ran = type(data.tool_calls) == 'table' and #data.tool_calls > 0
    for _, b in ipairs(run.blocks) do
      if b.kind == 'error' then
        if not shown then
          table.insert(kept, b)
          shown = true
        end
      elseif b.kind == 'text' or ran or (b.kind ~= 'plan' and not (b.kind == 'line' and b.step)) then
        table.insert(kept, b)
      end
    end
    if not shown then
      table.insert(kept, { kind = 'error', text = 'Error: ' .. data.answer })
    end
    run.blocks = kept
  elseif type(data.answer) == 'string' and data.answer ~= '' then
    set_answer(run, data.answer)
  end
  table.insert(run.blocks, { kind = 'done', text = M.summary(data) })
  run.finished = true
end

-- Apply one `cortex/event` ({run_id, type, data}); returns the run's key.
function M:apply(event)
  local run = self:_run_for(str(event.run_id))
  local d = type(event.data) == 'table' and event.data or {}
  local t = event.type
  if t == 'plan' then
    local steps = {}
    for i, s in ipairs(type(d.steps) == 'table' and d.steps or {}) do
      steps[i] = str(s)
    end
    table.insert(run.blocks, { kind = 'plan', plan_kind = str(d.kind, 'direct'), steps = steps })
  elseif t == 'step_start' then
    table.insert(run.blocks, { kind = 'line', step = true, text = '▶ ' .. str(d.description or d.step) })
  elseif t == 'tool_call' then
    table.insert(run.blocks, { kind = 'line', text = F.tool_call(d.tool, d.arguments) })
  elseif t == 'tool_result' then
    table.insert(run.blocks, { kind = 'line', text = F.tool_result(d.tool, d.success, d.output or d.error) })
  elseif t == 'token' then
    if not run.finished then
      append_text(run, str(d.value))
    end
  elseif t == 'edit' then
    local why = str(d.reason)
    local state = d.applied == true and 'written' or ('not written' .. (why ~= '' and (': ' .. why) or ''))
    table.insert(run.blocks, { kind = 'line', text = '✏ ' .. str(d.kind, 'edit') .. ' ' .. basename(d.uri) .. ' — ' .. state })
  elseif t == 'error' then
    local text = 'Error: ' .. str(d.message, 'error')
    local last = run.blocks[#run.blocks]
    if not (last and last.kind == 'error' and last.text == text) then
      table.insert(run.blocks, { kind = 'error', text = text })
    end
  elseif t == 'done' then
    finish(run, d)
  end
  -- the window keeps showing the run it shows (the newest one started); another run's events do not
  -- take it over, so two runs don't fight: `]r` / `[r` / :CortexRuns switch
  self.current = self.current or run
  return run.key
end

-- The command's own result (fills in an answer that was not streamed).
function M:complete(key, result)
  local run = self:_find(key)
  if run and type(result) == 'table' then
    finish(run, result)
  end
end

function M:fail(key, message)
  local run = self:_find(key)
  if run then
    table.insert(run.blocks, { kind = 'error', text = 'Error: ' .. message })
    run.finished = true
  end
end

-- The run with `key` (nil: the one shown).
function M:run(key)
  return key and self:_find(key) or self.current
end

function M:note(title, lines)
  self.counter = self.counter + 1
  local run = { key = 'local-' .. self.counter, title = title, blocks = {}, finished = true }
  for _, l in ipairs(lines) do
    table.insert(run.blocks, { kind = 'line', text = l })
  end
  self:_push(run)
  return run.key
end

-- The current run as buffer lines.
function M:lines(run)
  run = run or self.current
  if not run then
    return { '(no answer yet)' }
  end
  local out = { '# ' .. run.title, '' }
  local function add(text)
    for _, l in ipairs(vim.split(text, '\n', { plain = true })) do
      table.insert(out, l)
    end
  end
  for _, b in ipairs(run.blocks) do
    if b.kind == 'plan' then
      add('Plan (' .. b.plan_kind .. '):')
      for i, s in ipairs(b.steps) do
        add(string.format('  %d. %s', i, s))
      end
    elseif b.kind == 'text' then
      add(b.text)
    elseif b.kind == 'done' then
      add('')
      add('— ' .. b.text)
    else
      add(b.text)
    end
  end
  if not run.finished then
    add('')
    add('… working')
  end
  return out
end

function M:text(run)
  return table.concat(self:lines(run), '\n')
end

-- Window ---------------------------------------------------------------------------------------
-- Where it opens (`float.position`): 'right' (default: a side float over the right part of the
-- editor, full height, so the code stays visible), 'center' (the classic float), or 'split' (a real
-- vertical split on the right). Markdown is rendered with treesitter where available (0.10+) and
-- conceal; lines wrap at word boundaries; the title shows the keys (cortex/window.lua).
local HINT = ' q close · ]r [r runs · ga apply block '

function M:_ensure_buf()
  if self.buf and vim.api.nvim_buf_is_valid(self.buf) then
    return self.buf
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'filetype', 'markdown')
  pcall(vim.api.nvim_buf_set_name, buf, 'cortex://answer')
  local function map(lhs, fn)
    if vim.keymap and vim.keymap.set then
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true })
    end
  end
  map('q', function() self:close() end)
  map('<Esc>', function() self:close() end)
  map(']r', function() self:step_run(1) end)
  map('[r', function() self:step_run(-1) end)
  map('ga', function()
    if self.opts.on_apply then
      self.opts.on_apply(self)
    end
  end)
  if vim.treesitter and vim.treesitter.start and vim.fn.has('nvim-0.10') == 1 then
    pcall(vim.treesitter.start, buf, 'markdown')
  end
  self.buf = buf
  return buf
end

function M:_window_config()
  local fopts = self.opts.float or {}
  local cols, rows = vim.o.columns, vim.o.lines
  local position = fopts.position or 'right'
  local config = { relative = 'editor', style = 'minimal', border = fopts.border or 'rounded' }
  if position == 'center' then
    local width = math.min(math.max(30, math.floor(cols * (fopts.width or 0.6))), cols - 2)
    local height = math.min(math.max(6, math.floor(rows * (fopts.height or 0.5))), rows - 4)
    config.width, config.height = width, height
    config.row, config.col = math.floor((rows - height) / 2), math.floor((cols - width) / 2)
  else
    local width = math.min(math.max(30, math.floor(cols * (fopts.side_width or 0.4))), cols - 2)
    config.width, config.height = width, math.max(3, rows - 4)
    config.row, config.col = 0, cols - width - 2
  end
  return W.with_title(config, HINT)
end

function M:show(focus)
  local buf = self:_ensure_buf()
  if not (self.win and vim.api.nvim_win_is_valid(self.win)) then
    local fopts = self.opts.float or {}
    if fopts.position == 'split' then
      local back = vim.api.nvim_get_current_win()
      vim.cmd('botright vsplit')
      self.win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(self.win, buf)
      vim.api.nvim_win_set_width(self.win, math.max(30, math.floor(vim.o.columns * (fopts.side_width or 0.4))))
      if not focus then
        vim.api.nvim_set_current_win(back)
      end
    else
      local config = self:_window_config()
      self.win = vim.api.nvim_open_win(buf, focus == true, config)
      W.close(self.title_win)
      self.title_win = W.open_title(self.win, config, HINT)
      local win, title_win = self.win, self.title_win
      if title_win then -- the title goes with its window, however that is closed
        vim.api.nvim_create_autocmd('WinClosed', { pattern = tostring(win), once = true, callback = function()
          vim.schedule(function() W.close(title_win) end)
        end })
      end
    end
    W.define_highlights()
    for option, value in pairs({ wrap = true, linebreak = true, breakindent = true, conceallevel = 2,
                                 winhighlight = W.WINHIGHLIGHT }) do
      pcall(vim.api.nvim_win_set_option, self.win, option, value)
    end
    self.shown_key = nil
  elseif focus then
    vim.api.nvim_set_current_win(self.win)
  end
  self:refresh()
end

-- Show another run (+1 newer, -1 older) or the run with `key`.
function M:step_run(delta)
  for i, run in ipairs(self.runs) do
    if run == self.current then
      local other = self.runs[i + delta]
      if other then
        self.current = other
        self:refresh()
      end
      return
    end
  end
end

function M:show_run(key)
  local run = self:_find(key)
  if run then
    self.current = run
    self:show(false)
  end
end

-- Every run, newest first: { key, label } for a picker.
function M:run_list()
  local out = {}
  for i = #self.runs, 1, -1 do
    local run = self.runs[i]
    local last = run.blocks[#run.blocks]
    local state = run.finished and (last and last.kind == 'done' and last.text or 'done') or 'running'
    table.insert(out, { key = run.key, label = string.format('%s — %s', run.title, state) })
  end
  return out
end

-- New content keeps the reader's place: the view follows the live end only while the cursor is on
-- the last line; switching to a finished run shows it from the top, a running one from its live end.
function M:refresh()
  if not (self.buf and vim.api.nvim_buf_is_valid(self.buf)) then
    return
  end
  local lines = self:lines()
  local win_ok = self.win and vim.api.nvim_win_is_valid(self.win)
  local follow = true
  if win_ok and self.shown_key == (self.current and self.current.key) then
    local cursor = vim.api.nvim_win_get_cursor(self.win)[1]
    follow = cursor >= vim.api.nvim_buf_line_count(self.buf)
  end
  local switched = win_ok and self.shown_key ~= nil and self.shown_key ~= (self.current and self.current.key)
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(self.buf, 'modified', false)
  if win_ok then
    if switched and self.current and self.current.finished then
      pcall(vim.api.nvim_win_set_cursor, self.win, { 1, 0 }) -- browsing an earlier run: from its top
    elseif follow then
      pcall(vim.api.nvim_win_set_cursor, self.win, { #lines, 0 })
    end
    self.shown_key = self.current and self.current.key
    W.redraw()
  end
end

function M:close()
  if self.win and vim.api.nvim_win_is_valid(self.win) then
    vim.api.nvim_win_close(self.win, true)
  end
  W.close(self.title_win)
  self.win, self.title_win = nil, nil
end

-- The fenced code block at (or else the last one above, else the first below) line `lnum` of the shown
-- run: { text, info, first, last } (info: what follows the opening fence), or nil.
function M:code_block(lnum)
  local lines = self:lines()
  local blocks, open = {}, nil
  for i, l in ipairs(lines) do
    local fence, info = l:match('^%s*(```+)%s*(.-)%s*$')
    if fence and not open then
      open = { first = i, fence = fence, info = info }
    elseif fence and open and #fence >= #open.fence and info == '' then
      open.last = i
      open.text = table.concat(vim.list_slice(lines, open.first + 1, i - 1), '\n')
      table.insert(blocks, open)
      open = nil
    end
  end
  local above, below
  for _, b in ipairs(blocks) do
    if lnum >= b.first and lnum <= b.last then
      return b
    end
    if b.last < lnum then
      above = b
    elseif not below then
      below = b
    end
  end
  return above or below
end

return M
