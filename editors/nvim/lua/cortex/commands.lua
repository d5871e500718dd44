-- What the user runs: sending a Cortex command (`execute`, streaming agent runs into the answer
-- window and showing the other commands' results there), :CortexAsk and the other Ex commands, the
-- code-action commands routed through the plugin, and the optional keymaps.
local compat = require('cortex.compat')
local lsp = require('cortex.lsp')
local root = require('cortex.root')
local state = require('cortex.state')

local M = {}

local AGENT_COMMANDS = { ['cortex.ask'] = true, ['cortex.explain'] = true, ['cortex.fix'] = true }

local function utf16_len(text)
  if vim.fn.has('nvim-0.11') == 1 then
    return vim.str_utfindex(text, 'utf-16')
  end
  local _, n = vim.str_utfindex(text)
  return n
end

-- LSP range of lines line1..line2 (1-based, inclusive), or the cursor position when no range.
local function command_range(bufnr, opts)
  if opts and opts.range and opts.range > 0 then
    local last = vim.api.nvim_buf_get_lines(bufnr, opts.line2 - 1, opts.line2, false)[1] or ''
    return { start = { line = opts.line1 - 1, character = 0 }, ['end'] = { line = opts.line2 - 1, character = utf16_len(last) } }
  end
  local pos = vim.api.nvim_win_get_cursor(0)
  local line = vim.api.nvim_buf_get_lines(bufnr, pos[1] - 1, pos[1], false)[1] or ''
  local col = utf16_len(line:sub(1, pos[2]))
  return { start = { line = pos[1] - 1, character = col }, ['end'] = { line = pos[1] - 1, character = col } }
end

local function title_for(command, args)
  local uri = type(args) == 'table' and args.uri or nil
  local file = uri and vim.fn.fnamemodify(vim.uri_to_fname(uri), ':t') or ''
  if command == 'cortex.ask' then
    local msg = args.message or ''
    return 'Ask: ' .. (#msg > 80 and (msg:sub(1, 80) .. '…') or msg)
  elseif command == 'cortex.explain' then
    return (args.diagnostic and 'Explain error in ' or 'Explain ') .. file
  elseif command == 'cortex.fix' then
    return 'Fix error in ' .. file
  elseif command == 'cortex.run' then
    return (args.range and 'Run ' or 'Run file ') .. file
  end
  return command
end

local function run_result_lines(result)
  if type(result) ~= 'table' then
    return { vim.inspect(result) }
  end
  if result.ran == false then
    return { 'Not run: ' .. tostring(result.reason or 'the sandbox refused it') }
  end
  local out = {}
  if type(result.summary) == 'string' and result.summary ~= '' then
    table.insert(out, result.summary:sub(1, 1):upper() .. result.summary:sub(2))
  end
  local function add(label, text)
    if type(text) == 'string' and text ~= '' then
      table.insert(out, label)
      vim.list_extend(out, vim.split(text:gsub('\n$', ''), '\n', { plain = true }))
    end
  end
  add('Output:', result.stdout)
  add('Errors:', result.stderr)
  if result.value ~= nil and result.value ~= vim.NIL then
    table.insert(out, 'Value: ' .. vim.inspect(result.value))
  end
  if type(result.error) == 'string' then
    table.insert(out, 'Error: ' .. result.error)
  end
  return #out > 0 and out or { 'Ran with no output.' }
end

-- Send a Cortex command. Agent commands open the answer window and stream into it.
-- `on_result(err, result)` is called when the server answers.
local START_RETRIES, START_RETRY_MS = 300, 100 -- wait up to 30 s for a server that is still starting

-- `how.float == false`: do not open the answer window (the chat shows the run itself).
function M.execute(command, args, on_result, bufnr, how, attempt)
  local client = lsp.client(bufnr)
  if not client then
    local id = lsp.attach(bufnr)
    client = id and vim.lsp.get_client_by_id(id) or nil
  end
  if client and not client.initialized then
    -- the server is still starting (it takes a few seconds): send the command once it is ready
    attempt = attempt or 0
    if attempt < START_RETRIES then
      if attempt == 0 then
        vim.api.nvim_echo({ { 'Cortex: starting the server…', 'ModeMsg' } }, false, {})
      end
      vim.defer_fn(function()
        M.execute(command, args, on_result, bufnr, how, attempt + 1)
      end, START_RETRY_MS)
      return true
    end
    client = nil
  end
  if not client then
    vim.notify('Cortex: no cortex-lsp is running (open a file first)', vim.log.levels.ERROR)
    return false
  end
  local key
  local float = state.opts.open_float and not (how and how.float == false)
  if AGENT_COMMANDS[command] then
    local a = args or {}
    key = state.ui:begin(title_for(command, a), a.uri and { uri = a.uri, range = a.range } or nil)
    state.ui:run(key).quiet = how ~= nil and how.float == false
    if float then
      state.ui:show(false)
    end
  end
  local arguments = args ~= nil and { compat.as_object(args) } or {}
  -- our own workDoneToken: the server reports progress on it at once (no window/workDoneProgress/create
  -- round trip to wait for)
  state.token_counter = (state.token_counter or 0) + 1
  local params = { command = command, arguments = arguments,
                   workDoneToken = string.format('cortex-nvim-%d-%d', vim.fn.getpid(), state.token_counter) }
  compat.request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      if key then
        state.ui:fail(key, err.message or vim.inspect(err))
      end
      vim.notify('Cortex: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif key then
      state.ui:complete(key, result)
      if type(result) == 'table' and result.stop_reason == 'model_unavailable' then
        -- the answer window (or the chat) shows the error; a message only when nothing else does, and
        -- once until a run answers again
        if not state.model_down_shown and not float and not (how and how.float == false) then
          state.model_down_shown = true
          vim.notify('Cortex: ' .. tostring(result.answer) .. '\nCheck settings.ollama_base_url in setup{} or run :CortexDoctor.',
            vim.log.levels.ERROR)
        end
      elseif type(result) == 'table' and result.stop_reason == 'answered' then
        state.model_down_shown = false
      end
      if type(result) == 'table' and type(result.session_id) == 'string' then
        state.session_id = result.session_id
      end
    elseif command == 'cortex.run' then
      state.ui:note(title_for(command, args or {}), run_result_lines(result))
      state.ui:show(false)
    end
    state.ui:refresh()
    state.emit({ kind = 'result', command = command, err = err, result = result, key = key })
    if on_result then
      on_result(err, result)
    end
  end, bufnr)
  return true, key
end

function M.ask(message, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local args = { message = message }
  if state.session_id then
    args.session_id = state.session_id
  end
  if opts.range and opts.range > 0 and root.is_file_buffer(bufnr) then
    args.uri = vim.uri_from_bufnr(bufnr)
    args.range = command_range(bufnr, opts)
  end
  return M.execute('cortex.ask', args, opts.on_result, bufnr)
end

local function on_code(command, opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if not root.is_file_buffer(bufnr) then
    vim.notify('Cortex: open a file first', vim.log.levels.WARN)
    return false
  end
  -- in the session, so a follow-up question still has the code
  local args = { uri = vim.uri_from_bufnr(bufnr), range = command_range(bufnr, opts), session_id = state.session_id }
  return M.execute(command, args, nil, bufnr)
end

-- Apply the code block at the cursor of the answer window (cortex/apply.lua).
function M.apply_block()
  local fallback
  local alt = vim.fn.bufnr('#')
  for _, b in ipairs({ alt, vim.api.nvim_get_current_buf() }) do
    if b > 0 and vim.api.nvim_buf_is_valid(b) and root.is_file_buffer(b) then
      fallback = vim.uri_from_bufnr(b)
    end
  end
  return require('cortex.apply').from_answer(state.ui, M.execute, fallback)
end

local function memory(opts)
  local sub, rest = (opts.args or ''):match('^%s*(%S*)%s*(.-)%s*$')
  if sub == 'sessions' then
    M.execute('cortex.memory.sessions', nil, function(err, result)
      if err then
        return
      end
      local lines = {}
      for _, s in ipairs(type(result) == 'table' and result.sessions or {}) do
        table.insert(lines, string.format('%s  %s  (%s turns)  %s', s.id, s.title or '', s.turns or 0, s.root or ''))
      end
      state.ui:note('Sessions', #lines > 0 and lines or { '(no sessions)' })
      state.ui:show(false)
    end)
  elseif sub == 'forget' then
    M.execute('cortex.memory.forget', { id = rest }, function(err, result)
      if not err then
        vim.notify('Cortex: ' .. ((result and result.deleted) and 'forgot ' or 'nothing to forget for ') .. rest)
      end
    end)
  elseif sub == 'reset' then
    if opts.bang or vim.fn.confirm('Delete all of Cortex\'s memory?', '&Yes\n&No', 2) == 1 then
      M.execute('cortex.memory.reset', { confirm = true }, function(err)
        if not err then
          state.session_id = nil
          vim.notify('Cortex: memory reset')
        end
      end)
    end
  else
    local query = sub == 'search' and rest or vim.trim(opts.args or '')
    if query == '' then
      vim.notify('Usage: :CortexMemory [search] QUERY | sessions | forget ID | reset', vim.log.levels.INFO)
      return
    end
    M.execute('cortex.memory.search', { query = query, limit = 20 }, function(err, result)
      if err then
        return
      end
      local lines = {}
      for _, h in ipairs(type(result) == 'table' and result.results or {}) do
        table.insert(lines, string.format('[%s] %s  (%.2f)  id=%s', h.type or '?', h.content or h.text or '', h.score or 0, h.id))
      end
      state.ui:note('Memory: ' .. query, #lines > 0 and lines or { '(nothing matches)' })
      state.ui:show(false)
    end)
  end
end

local function doctor()
  M.execute('cortex.doctor', nil, function(err, result)
    if err then
      return
    end
    local lines = {}
    for _, c in ipairs(type(result) == 'table' and result.checks or {}) do
      table.insert(lines, (c.ok and '✔ ' or '✘ ') .. tostring(c.name) .. ': ' .. tostring(c.detail or ''))
      if not c.ok and type(c.fix) == 'string' and c.fix ~= '' then
        table.insert(lines, '    fix: ' .. c.fix)
      end
    end
    state.ui:note('Doctor', #lines > 0 and lines or { vim.inspect(result) })
    state.ui:show(false)
  end)
end

function M.create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('CortexAsk', function(opts)
    if opts.args ~= '' then
      M.ask(opts.args, opts)
    else
      vim.ui.input({ prompt = 'Ask Cortex: ' }, function(input)
        if input and input ~= '' then
          M.ask(input, opts)
        end
      end)
    end
  end, { nargs = '*', range = true, desc = 'Ask Cortex (a range is sent as context)' })
  cmd('CortexExplain', function(opts)
    on_code('cortex.explain', opts)
  end, { range = true, desc = 'Explain the range, or the function around the cursor' })
  cmd('CortexRun', function(opts)
    on_code('cortex.run', opts)
  end, { range = true, desc = 'Run the range (Python) in the sandbox' })
  cmd('CortexMemory', memory, {
    nargs = '*',
    bang = true,
    desc = 'Cortex memory: [search] QUERY | sessions | forget ID | reset',
  })
  cmd('CortexDoctor', doctor, { desc = 'Check the model server, models, data folders, sandbox and roots' })
  cmd('CortexNewSession', function()
    M.execute('cortex.session.new', nil, function(err, result)
      if not err and type(result) == 'table' then
        state.session_id = result.session_id
        vim.notify('Cortex: new session ' .. tostring(result.session_id))
      end
    end)
  end, { desc = 'Start a new Cortex session' })
  cmd('CortexRuns', function()
    local items = state.ui:run_list()
    vim.ui.select(items, {
      prompt = 'Cortex runs',
      format_item = function(item) return item.label end,
    }, function(choice)
      if choice then
        state.ui:show_run(choice.key)
      end
    end)
  end, { desc = 'Pick a run to show in the answer window' })
  cmd('CortexClose', function()
    state.ui:close()
  end, { desc = 'Close the answer window (from anywhere)' })
  cmd('CortexAnswer', function()
    state.ui:show(true)
  end, { desc = 'Show (and focus) the Cortex answer window' })
  cmd('CortexCancel', function()
    lsp.cancel()
  end, { desc = 'Cancel the running Cortex request' })
  cmd('CortexApply', function()
    M.apply_block()
  end, { desc = 'Apply the code block at the cursor of the answer (reviewed as a diff)' })
  cmd('CortexChat', function(opts)
    require('cortex.chat').open(opts)
  end, { range = true, bang = true, desc = 'Chat about the range or the buffer (! without context)' })
  cmd('CortexHistory', function()
    require('cortex.chat').pick_session()
  end, { desc = 'Reopen a past session in the chat' })
end

-- Code actions arrive as commands named cortex.*: route them through the plugin so the answer
-- window opens and the result is shown.
function M.register_lsp_commands()
  for name, _ in pairs({ ['cortex.ask'] = 1, ['cortex.explain'] = 1, ['cortex.run'] = 1, ['cortex.fix'] = 1 }) do
    vim.lsp.commands[name] = function(command, ctx)
      local args = vim.deepcopy((command.arguments or {})[1] or {})
      if args.session_id == nil and state.session_id and name ~= 'cortex.ask' then
        args.session_id = state.session_id -- a follow-up question still has the code
      end
      M.execute(command.command, args, nil, ctx and ctx.bufnr)
    end
  end
end

-- setup{keymaps=true}: <leader>ca ask, <leader>ce explain, <leader>cr run (normal and visual),
-- <leader>cq close the answer window, <leader>cx cancel; a table { ask = '…', … } picks other keys
-- (false: none for that one).
function M.map_keys(keymaps)
  local keys = type(keymaps) == 'table' and keymaps or {}
  local function map(modes, name, default, rhs, desc)
    local lhs = keys[name] == nil and default or keys[name]
    if lhs then
      vim.keymap.set(modes, lhs, rhs, { desc = desc, silent = true })
    end
  end
  map('n', 'ask', '<leader>ca', ':CortexAsk ', 'Cortex: ask')
  map('x', 'ask', '<leader>ca', ':CortexAsk ', 'Cortex: ask about the selection')
  map({ 'n', 'x' }, 'explain', '<leader>ce', ':CortexExplain<cr>', 'Cortex: explain')
  map({ 'n', 'x' }, 'run', '<leader>cr', ':CortexRun<cr>', 'Cortex: run')
  map('n', 'close', '<leader>cq', '<cmd>CortexClose<cr>', 'Cortex: close the answer window')
  map('n', 'cancel', '<leader>cx', '<cmd>CortexCancel<cr>', 'Cortex: cancel')
end

return M
