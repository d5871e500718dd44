-- Drives :CortexChat and Apply in a real `nvim --headless` against the real cortex-lsp and a scripted
-- model. Reads $CORTEX_NVIM_SCENARIO (JSON), writes what it saw to scenario.out (JSON), quits.
local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('CORTEX_NVIM_SCENARIO')), '\n'))
local out = { failures = {}, chats = {}, applies = {}, reviews = 0 }
local function write_out()
  vim.fn.writefile({ vim.fn.json_encode(out) }, scenario.out)
end
local timer = vim.loop.new_timer()
timer:start(scenario.timeout_ms, 0, vim.schedule_wrap(function()
  table.insert(out.failures, 'hard timeout')
  write_out()
  vim.cmd('cquit 3')
end))
local function wait(ms, cond, what)
  if not vim.wait(ms, cond, 10) then
    error('timed out waiting for ' .. what)
  end
end
vim.opt.runtimepath:prepend(scenario.plugin)
local cortex = require('cortex')
local results = {}
cortex.subscribe(function(r)
  if r.kind == 'chat' then
    table.insert(out.chats, { question = r.question, session_id = r.result and r.result.session_id })
  elseif r.kind == 'result' then
    table.insert(results, r)
  elseif r.kind == 'review' then
    out.reviews = out.reviews + 1
    -- the user reads the diff, then decides (0.7 reads the key itself; 0.10+ runs it as a key)
    local key = scenario.decisions[out.reviews] or 'r'
    vim.defer_fn(function()
      if vim.fn.has('nvim-0.10') == 1 then
        vim.api.nvim_feedkeys(key, 'mx', false)
      else
        vim.api.nvim_input(key)
      end
    end, 300)
  end
end)
local ok, err = pcall(function()
  cortex.setup({ cmd = scenario.cmd })
  vim.cmd('edit ' .. vim.fn.fnameescape(scenario.file))
  local file_buf = vim.api.nvim_get_current_buf()
  wait(30000, function()
    local c = cortex.client(file_buf)
    return c ~= nil and c.initialized
  end, 'the server')
  -- the chat, with lines 4-5 (add) as its context: a two-line question, then a follow-up
  vim.cmd('4,5CortexChat')
  local chat = require('cortex.chat').current()
  out.context_line = vim.api.nvim_buf_get_lines(chat.buf, 1, 2, false)[1]
  local function ask(lines)
    vim.api.nvim_buf_set_lines(chat.buf, -1, -1, false, lines)
    local n = #out.chats
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-s>', true, false, true), 'mx', false)
    wait(60000, function() return #out.chats > n end, 'the chat answer')
  end
  ask({ scenario.chat_lines[1], scenario.chat_lines[2] })
  ask({ scenario.follow_up })
  out.chat_text = table.concat(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false), '\n')
  out.float_opened_by_chat = cortex.ui().win ~= nil and vim.api.nvim_win_is_valid(cortex.ui().win)
  -- an answer with a code block: `ga` in the answer window applies it (rejected, then accepted)
  vim.cmd('wincmd p')
  for i = 1, 2 do
    local before = #results
    vim.cmd('CortexAsk ' .. scenario.code_message)
    wait(60000, function()
      for j = before + 1, #results do
        if results[j].command == 'cortex.ask' then return true end
      end
      return false
    end, 'the answer with code')
    cortex.ui():show(true)
    local n = #results
    vim.api.nvim_feedkeys('ga', 'mx', false)
    wait(60000, function()
      for j = n + 1, #results do
        if results[j].command == 'cortex.apply' then return true end
      end
      return false
    end, 'the apply result')
    local r = results[#results]
    table.insert(out.applies, { result = r.result, err = r.err and vim.inspect(r.err) or vim.NIL,
                                disk = table.concat(vim.fn.readfile(scenario.file), '\n') })
    pcall(vim.cmd, 'CortexClose')
    vim.api.nvim_set_current_buf(file_buf)
  end
  -- a diagnostic from another tool: "Cortex: Fix this error" picked from the code-action menu
  local ns = vim.api.nvim_create_namespace('pretend-linter')
  vim.diagnostic.set(ns, file_buf, { { lnum = 8, col = 11, end_lnum = 8, end_col = 16, message = scenario.fix_message,
                                        severity = vim.diagnostic.severity.ERROR, source = 'pretend-linter' } })
  vim.api.nvim_win_set_cursor(0, { 9, 12 })
  local before = #results
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      if title:find('Cortex: Fix this error', 1, true) then
        out.fix_title = title
        return on_choice(item, i)
      end
    end
    return on_choice(nil, nil)
  end
  if vim.fn.has('nvim-0.8') == 1 then
    vim.lsp.buf.code_action()
  else
    vim.lsp.buf.code_action({ diagnostics = vim.lsp.diagnostic.get_line_diagnostics(file_buf) })
  end
  wait(60000, function()
    for j = before + 1, #results do
      if results[j].command == 'cortex.fix' then return true end
    end
    return false
  end, 'the fix result')
  out.fix = results[#results].result
  out.fix_disk = table.concat(vim.fn.readfile(scenario.file), '\n')
  -- :CortexHistory: the chat's session, reopened
  local chat_session = out.chats[1].session_id
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      if item.id == chat_session then
        out.history_label = opts.format_item(item)
        return on_choice(item, i)
      end
    end
    return on_choice(nil, nil)
  end
  before = #results
  local chat_before = require('cortex.chat').current()
  vim.cmd('CortexHistory')
  wait(30000, function()
    for j = before + 1, #results do
      if results[j].command == 'cortex.session.turns' then return true end
    end
    return false
  end, 'the session turns')
  -- the result is announced before the plugin reopens the chat with it: wait for the new chat
  wait(30000, function() return require('cortex.chat').current() ~= chat_before end, 'the reopened chat')
  local reopened = require('cortex.chat').current()
  out.history_text = table.concat(vim.api.nvim_buf_get_lines(reopened.buf, 0, -1, false), '\n')
  out.history_session = reopened.session_id
end)
if not ok then
  table.insert(out.failures, tostring(err))
end
write_out()
timer:stop()
vim.cmd(#out.failures == 0 and 'qall!' or 'cquit 1')
