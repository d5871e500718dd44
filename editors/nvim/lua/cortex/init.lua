-- Cortex for Neovim's built-in LSP client: starts `cortex-lsp` for every file buffer (any filetype),
-- adds :CortexAsk, :CortexExplain, :CortexRun, :CortexMemory, :CortexDoctor (and :CortexAnswer,
-- :CortexCancel, :CortexNewSession), streams answers from `cortex/event` into a floating window and
-- shows `$/progress` in the echo area and the statusline (require('cortex').status()).
--
-- Works on Neovim 0.7 (vim.lsp.start_client; no LspProgress) and 0.10+/0.11 (vim.lsp.start;
-- LspProgress). Neovim applies `documentChanges` and `CreateFile` edits but does not advertise them,
-- so the plugin advertises what the client really does; it also makes CreateFile honour
-- `overwrite: false` (Neovim would otherwise truncate an existing file).
local compat = require('cortex.compat')
local UI = require('cortex.ui')
local review = require('cortex.review')

local M = {}

local AGENT_COMMANDS = { ['cortex.ask'] = true, ['cortex.explain'] = true }
local NAME = 'cortex'

local state = {
  opts = nil,
  ui = nil,
  clients = {}, -- root -> client id (Neovim 0.7 path)
  progress = {}, -- token -> { title, message }
  status = '',
  subscribers = {},
  session_id = nil,
}

local defaults = {
  -- command that starts the server; nil: `cortex-lsp` on PATH
  cmd = nil,
  cmd_env = nil,
  -- also look for <root>/.venv/bin/cortex-lsp (runs a binary from the opened project: opt-in)
  use_workspace_venv = false,
  -- the workspace folder: nil (cwd if the file is under it, else the nearest .git), a path, or
  -- function(fname) -> path|nil
  root_dir = nil,
  -- server settings (snake_case or camelCase), sent as initializationOptions.cortex and as the
  -- "cortex" section of workspace/configuration
  settings = {},
  autostart = true,
  open_float = true,
  echo_progress = true,
  -- show every write as a diff to accept (a) or reject (r) before anything touches the disk
  review_edits = true,
  -- true: <leader>ca ask, <leader>ce explain, <leader>cr run (normal and visual), <leader>cq close
  -- the answer window, <leader>cx cancel; or a table { ask = '…', explain = '…', … } (false: none)
  keymaps = false,
  float = { width = 0.6, height = 0.5, border = 'rounded' },
}

-- Subscribers -----------------------------------------------------------------------------------
local function emit(record)
  for _, fn in ipairs(state.subscribers) do
    pcall(fn, record)
  end
end

-- Subscribe to what the plugin sees: {kind='event'|'progress'|'result'|'edit', ...}. Returns an
-- unsubscribe function.
function M.subscribe(fn)
  table.insert(state.subscribers, fn)
  return function()
    for i, f in ipairs(state.subscribers) do
      if f == fn then
        table.remove(state.subscribers, i)
        return
      end
    end
  end
end

function M.status()
  return state.status
end

function M.ui()
  return state.ui
end

-- Progress --------------------------------------------------------------------------------------
local function on_progress(token, value)
  if type(value) ~= 'table' then
    return
  end
  local entry = state.progress[token] or {}
  if value.kind == 'begin' then
    entry = { title = value.title or 'Cortex', message = value.message or '' }
    state.progress[token] = entry
  elseif value.kind == 'report' then
    entry.message = value.message or entry.message
    state.progress[token] = entry
  elseif value.kind == 'end' then
    entry.message = value.message or 'done'
    state.progress[token] = nil
    -- the statusline component clears a moment after the last run ends
    vim.defer_fn(function()
      if next(state.progress) == nil then
        state.status = ''
        pcall(vim.cmd, 'redrawstatus')
      end
    end, 3000)
  end
  state.status = string.format('%s: %s', entry.title or 'Cortex', entry.message or '')
  if state.opts and state.opts.echo_progress then
    pcall(vim.api.nvim_echo, { { state.status:sub(1, math.max(10, vim.o.columns - 12)), 'ModeMsg' } }, false, {})
  end
  pcall(vim.cmd, 'redrawstatus')
  emit({ kind = 'progress', token = token, value = value })
end

-- Cancel every running Cortex request (window/workDoneProgress/cancel for each live token).
function M.cancel()
  local client = M.client()
  if not client then
    return 0
  end
  -- a write waiting for review belongs to a run that is going away: close it, write nothing
  review.withdraw(client.id, nil, 'the run was cancelled before you decided')
  local n = 0
  for token, _ in pairs(state.progress) do
    compat.notify(client, 'window/workDoneProgress/cancel', { token = token })
    n = n + 1
  end
  return n
end

-- Handlers --------------------------------------------------------------------------------------
local function on_event(_, result)
  if type(result) ~= 'table' then
    return
  end
  state.ui:apply(result)
  if state.opts.open_float then
    state.ui:show(false)
  else
    state.ui:refresh()
  end
  emit({ kind = 'event', event = result })
end

-- workspace/applyEdit: refuse a CreateFile that would clobber an existing file, then show the
-- write for review (cortex/review.lua: a diff tab, `a` accepts, `r` rejects) and write the accepted
-- files to disk. Nothing is applied as a hidden, unsaved buffer.
local function apply_edit()
  return function(_, params, ctx)
    local request_id = compat.server_request_id('workspace/applyEdit')
    local can_yield = compat.can_yield()
    local edit = params and params.edit
    if edit and type(edit.documentChanges) == 'table' then
      for _, change in ipairs(edit.documentChanges) do
        if change.kind == 'create' then
          local opts = change.options or {}
          local fname = vim.uri_to_fname(change.uri)
          local loaded = vim.fn.bufloaded(fname) == 1
          if (compat.exists(fname) or loaded) and not opts.overwrite and not opts.ignoreIfExists then
            local reason = fname .. ' already exists'
            emit({ kind = 'edit', applied = false, reason = reason, params = params })
            return { applied = false, failureReason = reason }
          end
        end
      end
    end
    local opts = vim.tbl_extend('force', state.opts or {}, {
      can_yield = can_yield,
      on_review = function(shown)
        emit({ kind = 'review', label = shown.label, files = shown.files, tab = shown.tab, review = shown.review })
      end,
    })
    local result = review.handle(params, opts, { client_id = ctx and ctx.client_id, request_id = request_id })
    emit({ kind = 'edit', applied = result.applied, reason = result.failureReason, params = params, result = result })
    return result
  end
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.configuration = true
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  local ops = caps.workspace.workspaceEdit.resourceOperations or {}
  if not vim.tbl_contains(ops, 'create') then
    table.insert(ops, 'create')
  end
  caps.workspace.workspaceEdit.resourceOperations = ops
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return caps
end

local function handlers()
  local h = {
    ['cortex/event'] = on_event,
    ['workspace/applyEdit'] = apply_edit(),
    -- the server withdraws an applyEdit when its run is cancelled: close that review, write nothing
    ['$/cancelRequest'] = function(_, params, ctx)
      review.withdraw(ctx and ctx.client_id, type(params) == 'table' and params.id or nil,
        'the run was cancelled before you decided')
    end,
  }
  if not compat.has_lsp_progress then
    local default = vim.lsp.handlers['$/progress']
    h['$/progress'] = function(err, result, ctx, config)
      if default then
        pcall(default, err, result, ctx, config)
      end
      if result then
        on_progress(result.token, result.value)
      end
    end
  end
  return h
end

-- Starting ------------------------------------------------------------------------------------
-- The workspace for a file: setup{root_dir=…} (a path, or a function(fname) returning one or nil);
-- else the current directory when the file is under it (`cd workspace; nvim stats.py` makes
-- `workspace` the root, even inside a bigger repository), unless the cwd is / or $HOME; else the
-- nearest folder with a `.git`; else the file's own folder.
local function strip_slash(dir)
  return (#dir > 1 and dir:sub(-1) == '/') and dir:sub(1, -2) or dir
end

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

local root_for = M.root_for

function M.options()
  return state.opts
end

local function server_cmd(root)
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
M.server_cmd = server_cmd

local function is_file_buffer(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and not name:match('^%a[%w+.-]*://')
end

-- Start (or reuse) the server for this buffer's root and attach the buffer. Returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not is_file_buffer(bufnr) then
    return nil
  end
  local root = root_for(vim.api.nvim_buf_get_name(bufnr))
  local cmd = server_cmd(root)
  if vim.fn.executable(cmd[1]) ~= 1 then
    vim.notify_once('Cortex: ' .. cmd[1] .. ' not found; install cortex-lsp or set cmd in setup{}', vim.log.levels.WARN)
    return nil
  end
  local settings = compat.as_object(vim.deepcopy(state.opts.settings))
  local config = {
    name = NAME,
    cmd = cmd,
    cmd_env = state.opts.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = capabilities(),
    handlers = handlers(),
    init_options = { cortex = settings },
    settings = { cortex = settings },
    flags = { debounce_text_changes = 80 },
    -- 0.10+: code actions also see pyright's/ruff's diagnostics (cortex/diagnostics.lua)
    on_attach = function(client)
      require('cortex.diagnostics').attach(client)
    end,
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        review.withdraw(client_id, nil, 'the Cortex server stopped before you decided')
      end)
    end,
  }
  if compat.has_start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = state.clients[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or client.is_stopped() then
    local withdraw = config.on_exit
    config.on_exit = function(...)
      state.clients[root] = nil
      withdraw(...)
    end
    id = vim.lsp.start_client(config)
    if not id then
      return nil
    end
    state.clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- The Cortex client for a buffer (attached), else any running Cortex client.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local any
  for _, client in ipairs(compat.get_clients({ name = NAME })) do
    if client.attached_buffers and client.attached_buffers[bufnr] then
      return client
    end
    any = any or client
  end
  return any
end

-- Commands --------------------------------------------------------------------------------------
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
  elseif command == 'cortex.run' then
    return 'Run ' .. file
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
  return #out > 0 and out or { '(ran with no output)' }
end

-- Send a Cortex command. Agent commands open the answer window and stream into it.
-- `on_result(err, result)` is called when the server answers.
local START_RETRIES, START_RETRY_MS = 300, 100 -- wait up to 30 s for a server that is still starting

function M.execute(command, args, on_result, bufnr, attempt)
  local client = M.client(bufnr)
  if not client then
    local id = M.attach(bufnr)
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
        M.execute(command, args, on_result, bufnr, attempt + 1)
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
  if AGENT_COMMANDS[command] then
    key = state.ui:begin(title_for(command, args or {}))
    if state.opts.open_float then
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
        if not state.model_down_shown then -- once, until a run answers again
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
    emit({ kind = 'result', command = command, err = err, result = result })
    if on_result then
      on_result(err, result)
    end
  end, bufnr)
  return true
end

function M.ask(message, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local args = { message = message }
  if state.session_id then
    args.session_id = state.session_id
  end
  if opts.range and opts.range > 0 and is_file_buffer(bufnr) then
    args.uri = vim.uri_from_bufnr(bufnr)
    args.range = command_range(bufnr, opts)
  end
  return M.execute('cortex.ask', args, opts.on_result, bufnr)
end

local function on_code(command, opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if not is_file_buffer(bufnr) then
    vim.notify('Cortex: open a file first', vim.log.levels.WARN)
    return false
  end
  return M.execute(command, { uri = vim.uri_from_bufnr(bufnr), range = command_range(bufnr, opts) }, nil, bufnr)
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

local function create_commands()
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
    M.cancel()
  end, { desc = 'Cancel the running Cortex request' })
end

-- Code actions arrive as commands named cortex.*: route them through the plugin so the answer
-- window opens and the result is shown.
local function register_lsp_commands()
  for name, _ in pairs({ ['cortex.ask'] = 1, ['cortex.explain'] = 1, ['cortex.run'] = 1 }) do
    vim.lsp.commands[name] = function(command, ctx)
      local args = (command.arguments or {})[1]
      M.execute(command.command, args, nil, ctx and ctx.bufnr)
    end
  end
end

function M.setup(opts)
  state.opts = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  state.ui = UI.new({ float = state.opts.float })
  create_commands()
  register_lsp_commands()
  local group = vim.api.nvim_create_augroup('cortex', { clear = true })
  if state.opts.keymaps then
    local keys = type(state.opts.keymaps) == 'table' and state.opts.keymaps or {}
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
  if state.opts.autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      pattern = '*',
      callback = function(args)
        M.attach(args.buf)
      end,
    })
  end
  -- quitting with a review open: answer the server (rejected) before Neovim stops it
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      review.withdraw(nil, nil, 'Neovim was closed during the review')
    end,
  })
  if compat.has_lsp_progress then
    vim.api.nvim_create_autocmd('LspProgress', {
      group = group,
      callback = function(args)
        local data = args.data or {}
        local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
        if client and client.name == NAME and data.params then
          on_progress(data.params.token, data.params.value)
        end
      end,
    })
  end
  -- setup{} run from init.lua comes before `nvim stats.py` loads the file: BufReadPost attaches it
  -- then (attaching an unloaded buffer now would only log a warning)
  local current = vim.api.nvim_get_current_buf()
  if state.opts.autostart and vim.api.nvim_buf_is_loaded(current) then
    M.attach(current)
  end
end

return M
