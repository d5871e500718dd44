-- Drives the Cortex Neovim plugin in a real `nvim --headless` against the real cortex-lsp (pointed at
-- a scripted model by the caller). Reads its scenario from $CORTEX_NVIM_SCENARIO (JSON), writes what
-- it saw to scenario.out (JSON) and quits: 0 when every step ran, 1 on failure, 3 on the hard timeout.
-- Every step is pcall'ed and a timer ends Neovim after scenario.timeout_ms, so nothing can hang CI.
local scenario = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('CORTEX_NVIM_SCENARIO')), '\n'))
local out = {
  version = vim.version(),
  failures = {},
  steps = {},
  progress = {},
  events = {},
  results = {},
  edits = {},
  reviews = {},
  latency = {},
}

local function write_out()
  local ok, encoded = pcall(vim.fn.json_encode, out)
  if not ok then
    encoded = vim.fn.json_encode({ failures = { 'could not encode results: ' .. tostring(encoded) } })
  end
  vim.fn.writefile({ encoded }, scenario.out)
end

local function fail(msg)
  table.insert(out.failures, msg)
end

local function check(cond, msg)
  if not cond then
    fail(msg)
  end
  return cond
end

local timer = vim.loop.new_timer()
timer:start(scenario.timeout_ms, 0, vim.schedule_wrap(function()
  fail('hard timeout after ' .. scenario.timeout_ms .. ' ms')
  write_out()
  vim.cmd('cquit 3')
end))

local function wait(ms, cond, what)
  local ok = vim.wait(ms, cond, 5)
  if not ok then
    fail('timed out waiting for ' .. what)
  end
  return ok
end

local function step(name, fn)
  local t0 = vim.loop.hrtime()
  local ok, err = pcall(fn)
  out.steps[name] = { ok = ok, ms = (vim.loop.hrtime() - t0) / 1e6 }
  if not ok then
    fail(name .. ': ' .. tostring(err))
  end
  return ok
end

vim.opt.runtimepath:prepend(scenario.plugin)
local cortex = require('cortex')
local unsubscribe = cortex.subscribe(function(r)
  if r.kind == 'progress' then
    table.insert(out.progress, { token = r.token, kind = r.value.kind, title = r.value.title, message = r.value.message })
  elseif r.kind == 'event' then
    table.insert(out.events, r.event)
  elseif r.kind == 'result' then
    table.insert(out.results, { command = r.command, result = r.result, err = r.err })
  elseif r.kind == 'review' then
    local files = {}
    for _, f in ipairs(r.files) do
      table.insert(files, {
        name = vim.fn.fnamemodify(f.fname, ':t'), create = f.create, after = table.concat(f.after, '\n'),
        on_disk = vim.fn.filereadable(f.fname) == 1,
      })
    end
    local diff_windows = 0
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(r.tab)) do
      if vim.api.nvim_win_get_option(w, 'diff') then
        diff_windows = diff_windows + 1
      end
    end
    table.insert(out.reviews, { label = r.label, files = files, diff_windows = diff_windows, tab = r.tab,
                                request_id = r.review and r.review.request_id, modal = r.review and r.review.modal,
                                current_tab = vim.api.nvim_get_current_tabpage() == r.tab })
  elseif r.kind == 'edit' then
    table.insert(out.edits, { applied = r.applied, reason = r.reason })
  end
end)

local function results_for(command)
  local n = 0
  for _, r in ipairs(out.results) do
    if r.command == command then
      n = n + 1
    end
  end
  return n
end

local function last_result(command)
  for i = #out.results, 1, -1 do
    if out.results[i].command == command then
      return out.results[i]
    end
  end
end

local function code_action_params(bufnr, l1, l2)
  local last = vim.api.nvim_buf_get_lines(bufnr, l2, l2 + 1, false)[1] or ''
  return {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = l1, character = 0 }, ['end'] = { line = l2, character = #last } },
    context = { diagnostics = {} },
  }
end

local function request(client, method, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

-- Sequential textDocument/codeAction round trips; returns sorted latencies (ms) and the last result.
local function measure_code_actions(client, bufnr, n)
  local samples, last = {}, nil
  for _ = 1, n do
    local done = false
    local t0 = vim.loop.hrtime()
    request(client, 'textDocument/codeAction', code_action_params(bufnr, 1, 2), function(err, result)
      table.insert(samples, (vim.loop.hrtime() - t0) / 1e6)
      last = { err = err, result = result }
      done = true
    end, bufnr)
    if not vim.wait(5000, function() return done end, 1) then
      fail('codeAction request did not answer in 5 s')
      break
    end
  end
  table.sort(samples)
  return samples, last
end

local function percentile(sorted, p)
  if #sorted == 0 then
    return nil
  end
  local idx = math.max(1, math.min(#sorted, math.ceil(p / 100 * #sorted)))
  return sorted[idx]
end

local bufnr, client
local ok_all = step('setup', function()
  cortex.setup({ cmd = scenario.cmd, settings = scenario.settings or {}, echo_progress = true, keymaps = true })
  vim.cmd('edit ' .. vim.fn.fnameescape(scenario.file))
  bufnr = vim.api.nvim_get_current_buf()
  assert(wait(30000, function()
    local c = cortex.client(bufnr)
    return c ~= nil and c.server_capabilities ~= nil and next(c.server_capabilities) ~= nil
  end, 'the server to initialize'), 'server did not start')
  client = cortex.client(bufnr)
  out.server_commands = client.server_capabilities.executeCommandProvider
    and client.server_capabilities.executeCommandProvider.commands
end)

if ok_all then
  step('code_actions', function()
    local _, last = measure_code_actions(client, bufnr, 3)
    local titles = {}
    for _, a in ipairs((last and last.result) or {}) do
      table.insert(titles, a.title)
    end
    out.code_action_titles = titles
    check(vim.tbl_contains(titles, 'Cortex: Explain this'), 'no "Cortex: Explain this" code action')
    if scenario.file:match('%.py$') then
      check(vim.tbl_contains(titles, 'Cortex: Run this'), 'no "Cortex: Run this" code action')
    end
    local samples = measure_code_actions(client, bufnr, scenario.latency_samples or 50)
    out.latency.idle = { n = #samples, median = percentile(samples, 50), p99 = percentile(samples, 99), max = samples[#samples] }
  end)

  step('explain_code_action', function()
    -- The real path: vim.lsp.buf code action on a range, the user picks "Cortex: Explain this".
    local picked
    vim.ui.select = function(items, opts, on_choice)
      for i, item in ipairs(items) do
        local title = opts.format_item and opts.format_item(item) or tostring(item)
        if title == 'Cortex: Explain this' then
          picked = title
          return on_choice(item, i)
        end
      end
      return on_choice(nil, nil)
    end
    local before = results_for('cortex.explain')
    if vim.fn.has('nvim-0.10') == 1 then
      vim.lsp.buf.code_action({ range = { start = { 4, 0 }, ['end'] = { 5, 15 } } })
    else
      vim.lsp.buf.range_code_action(nil, { 4, 0 }, { 5, 15 })
    end
    assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.explain') > before end, 'the explain result'))
    check(picked == 'Cortex: Explain this', 'the code action menu did not offer "Cortex: Explain this"')
    local r = last_result('cortex.explain')
    check(r.err == nil or r.err == vim.NIL, 'explain failed: ' .. vim.inspect(r.err))
    out.explain = r.result
    out.explain_float = cortex.ui():text()
  end)

  step('other_source_diagnostic', function()
    -- a diagnostic from another tool (as pyright would publish it): "Explain this error" is offered
    local ns = vim.api.nvim_create_namespace('pretend-pyright')
    vim.diagnostic.set(ns, bufnr, { { lnum = 4, col = 4, end_lnum = 4, end_col = 16, severity = vim.diagnostic.severity.ERROR,
                                      message = 'pretend pyright error', source = 'pyright' } })
    local titles
    vim.ui.select = function(items, opts, on_choice)
      titles = {}
      for _, item in ipairs(items) do
        table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
      end
      return on_choice(nil, nil)
    end
    vim.api.nvim_win_set_cursor(0, { 5, 6 })
    vim.lsp.buf.code_action()
    wait(10000, function() return titles ~= nil end, 'the code-action menu')
    out.other_source_titles = titles or {}
    vim.diagnostic.reset(ns, bufnr)
  end)

  step('ask_command', function()
    local before = results_for('cortex.ask')
    vim.cmd('CortexAsk ' .. scenario.ask_message)
    assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.ask') > before end, 'the :CortexAsk result'))
    local r = last_result('cortex.ask')
    check(r.err == nil or r.err == vim.NIL, ':CortexAsk failed: ' .. vim.inspect(r.err))
    out.ask = r.result
    out.ask_float = cortex.ui():text()
  end)

  -- The review: the write shows as a diff tab; the user's key arrives later (after the tool time-out
  -- would have cut the run off), from outside the editor's loop, as typed keys do.
  local function modified_buffers()
    local names = {}
    for _, info in ipairs(vim.fn.getbufinfo({ bufmodified = 1 })) do
      local b = info.bufnr
      -- a modified scratch buffer (buftype nofile/prompt, like the answer window's) never blocks :qa
      if vim.api.nvim_buf_get_option(b, 'buftype') == '' then
        table.insert(names, info.name)
      end
    end
    return names
  end

  -- Keys the user types `ms` from now. On 0.7 the review reads them itself (getchar); on 0.10+ the
  -- review is not modal and they run as normal-mode keys, which a headless driver sitting in vim.wait
  -- does not do by itself: they are executed as Neovim's input loop would (feedkeys, remapped).
  local non_modal = vim.fn.has('nvim-0.10') == 1
  local function type_later(ms, keys)
    local t = vim.loop.new_timer()
    t:start(ms, 0, function()
      t:close()
      if non_modal then
        vim.schedule(function()
          vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
        end)
      else
        vim.api.nvim_input(keys)
      end
    end)
  end

  -- The next review shown: `fn(record)` runs `ms` later (the review is open then, on every version).
  local function on_next_review(ms, fn)
    local seen = #out.reviews
    local t = vim.loop.new_timer()
    t:start(50, 50, vim.schedule_wrap(function()
      if #out.reviews > seen and not t:is_closing() then
        t:stop()
        t:close()
        vim.defer_fn(function() fn(out.reviews[#out.reviews]) end, ms)
      end
    end))
  end

  -- Keys the user types once the next review is shown, `ms` after it opened (never into an editor that
  -- has not shown it yet, however slow the machine).
  local function type_on_review(ms, keys)
    on_next_review(ms, function() type_later(0, keys) end)
  end

  -- A write the run proposes while the user reviews it, then the run is cancelled: `cancel()` does it
  -- (:CortexCancel, or a progress cancel the plugin does not know of, so the server's withdrawal
  -- must close the review). The review closes, nothing is written, and an accept typed later does
  -- nothing.
  local function cancelled_review(message, file, cancel)
    local target = scenario.root .. '/' .. file
    local before = results_for('cortex.ask')
    local seen = {}
    on_next_review(300, function(r)
      seen.tabs_during = #vim.api.nvim_list_tabpages()
      cancel(r)
    end)
    vim.cmd('CortexAsk ' .. message)
    assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.ask') > before end, 'the cancelled write result'))
    seen.tabs_after = #vim.api.nvim_list_tabpages()
    seen.result = last_result('cortex.ask').result
    seen.on_disk_after = vim.fn.filereadable(target) == 1
    -- the user presses accept after all, too late: the key runs in normal mode wherever they are
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('a<Esc>', true, false, true), 'mx', false)
    -- whatever the key set off (an accept writes at once) has run once a callback queued after it has run
    local handled = false
    vim.schedule(function() handled = true end)
    assert(wait(10000, function() return handled end, 'the late key to be handled'))
    seen.on_disk_later = vim.fn.filereadable(target) == 1
    seen.tabs_later = #vim.api.nvim_list_tabpages()
    seen.open_reviews = require('cortex.review').open_count()
    seen.modified_buffers = modified_buffers()
    seen.float = cortex.ui():text()
    return seen
  end

  if scenario.write_message then
    step('ask_write', function()
      local target = scenario.root .. '/' .. scenario.write_file
      local before = results_for('cortex.ask')
      local reviews = #out.reviews
      type_on_review(scenario.review_delay_ms, 'a')
      vim.cmd('CortexAsk ' .. scenario.write_message)
      assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.ask') > before end, 'the write result'))
      local r = last_result('cortex.ask')
      check(r.err == nil or r.err == vim.NIL, ':CortexAsk (write) failed: ' .. vim.inspect(r.err))
      check(#out.reviews == reviews + 1, 'the write was not shown for review')
      out.write_result = r.result
      out.write_float = cortex.ui():text()
      out.write_disk_after = vim.fn.filereadable(target) == 1 and table.concat(vim.fn.readfile(target), '\n') or vim.NIL
      out.write_modified_buffers = modified_buffers()
      out.write_tabs_after = #vim.api.nvim_list_tabpages()
    end)
  end

  if scenario.reject_message then
    step('ask_write_rejected', function()
      local before = results_for('cortex.ask')
      type_on_review(100, 'r')
      vim.cmd('CortexAsk ' .. scenario.reject_message)
      assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.ask') > before end, 'the rejected write result'))
      local r = last_result('cortex.ask')
      check(r.err == nil or r.err == vim.NIL, ':CortexAsk (rejected write) failed: ' .. vim.inspect(r.err))
      out.reject_result = r.result
      out.reject_float = cortex.ui():text()
      out.reject_on_disk = vim.fn.filereadable(scenario.root .. '/' .. scenario.reject_file) == 1
      out.reject_modified_buffers = modified_buffers()
    end)
  end

  if scenario.cancel_write_message then
    step('cancel_during_review', function()
      out.cancel_review = cancelled_review(scenario.cancel_write_message, scenario.cancel_write_file, function()
        -- typed, as the user would: the <leader>cx keymap (:CortexCancel); on 0.7 the review reads the
        -- keys and must see the whole mapping
        type_later(0, '<Bslash>cx')
      end)
    end)
  end

  if scenario.withdraw_write_message then
    step('withdraw_during_review', function()
      out.withdraw_review = cancelled_review(scenario.withdraw_write_message, scenario.withdraw_write_file, function()
        -- a cancel the plugin does not see (as from another tool): only the server's $/cancelRequest
        -- for its applyEdit can close the review
        local token
        for i = #out.progress, 1, -1 do
          if out.progress[i].kind == 'begin' then
            token = out.progress[i].token
            break
          end
        end
        require('cortex.compat').notify(client, 'window/workDoneProgress/cancel', { token = token })
      end)
    end)
  end

  if scenario.close_write_message then
    step('close_review_tab', function()
      -- the user closes the review tab by hand (:tabclose): that rejects the write
      out.close_review = cancelled_review(scenario.close_write_message, scenario.close_write_file, function(r)
        vim.api.nvim_set_current_tabpage(r.tab)
        vim.cmd('tabclose')
      end)
    end)
  end

  step('refuse_clobber', function()
    -- hostile: a CreateFile (overwrite=false) + text for a file that exists. Neovim's own handler would
    -- truncate it; the plugin's handler must refuse and leave the file alone.
    local target = scenario.root .. '/keep.txt'
    vim.fn.writefile({ 'original' }, target)
    local uri = vim.uri_from_fname(target)
    local handler = client.handlers['workspace/applyEdit']
    local zero = { line = 0, character = 0 }
    local result = handler(nil, { label = 'hostile', edit = { documentChanges = {
      { kind = 'create', uri = uri, options = { overwrite = false } },
      { textDocument = { uri = uri, version = vim.NIL }, edits = { { range = { start = zero, ['end'] = zero }, newText = 'evil' } } },
    } } }, { client_id = client.id, method = 'workspace/applyEdit' })
    out.clobber = { result = result, disk = table.concat(vim.fn.readfile(target), '\n'),
      buffer_modified = vim.fn.bufnr(target) ~= -1 and vim.api.nvim_buf_get_option(vim.fn.bufnr(target), 'modified') }
  end)

  step('other_commands', function()
    -- :CortexDoctor, :CortexMemory and :CortexRun (a range of calc.py) each get an answer
    for _, c in ipairs({ { 'CortexDoctor', 'cortex.doctor' }, { 'CortexMemory closure', 'cortex.memory.search' },
      { '8,9CortexRun', 'cortex.run' } }) do
      local before = results_for(c[2])
      vim.cmd(c[1])
      assert(wait(scenario.run_timeout_ms, function() return results_for(c[2]) > before end, c[1]))
      local r = last_result(c[2])
      out[c[2]] = { result = r.result, err = r.err, float = cortex.ui():text() }
    end
  end)

  if scenario.streaming_latency then
    step('latency_while_streaming', function()
      local before = results_for('cortex.ask')
      local progress_before = #out.progress
      vim.cmd('CortexAsk ' .. scenario.streaming_message)
      -- wait until the run is under way (its progress began), then measure while it goes on
      wait(scenario.run_timeout_ms, function()
        for i = progress_before + 1, #out.progress do
          if out.progress[i].kind == 'begin' then
            return true
          end
        end
        return false
      end, 'the streaming run to begin')
      local t_first = vim.loop.hrtime()
      local samples = measure_code_actions(client, bufnr, scenario.latency_samples_streaming or 30)
      out.streaming_sampling_ms = (vim.loop.hrtime() - t_first) / 1e6
      out.latency.streaming = { n = #samples, median = percentile(samples, 50), p99 = percentile(samples, 99), max = samples[#samples] }
      out.streaming_still_running = results_for('cortex.ask') == before
      assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.ask') > before end, 'the streaming ask result'))
    end)
  end

  if scenario.cancel_message then
    step('cancel', function()
      -- :CortexCancel sends window/workDoneProgress/cancel for the running request's token
      local before = results_for('cortex.ask')
      local events_before = #out.events
      vim.cmd('CortexAsk ' .. scenario.cancel_message)
      -- cancel mid-answer: after the first streamed token
      wait(scenario.run_timeout_ms, function()
        for i = events_before + 1, #out.events do
          if out.events[i].type == 'token' then
            return true
          end
        end
        return false
      end, 'the first token of the run to cancel')
      vim.cmd('CortexCancel')
      assert(wait(scenario.run_timeout_ms, function() return results_for('cortex.ask') > before end, 'the cancelled result'))
      out.cancel = last_result('cortex.ask').result
      out.cancel_float = cortex.ui():text()
    end)
  end
end

unsubscribe()
out.status_busy = cortex.status()
-- the statusline component clears a moment after the last run ends
out.status_cleared = vim.wait(6000, function() return cortex.status() == '' end, 50)
out.status = cortex.status()
write_out()
timer:stop()
for _, c in ipairs(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) do
  if vim.fn.has('nvim-0.11') == 1 then
    c:stop()
  else
    c.stop()
  end
end
vim.wait(2000, function()
  return #(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) == 0
end, 20)
vim.cmd(#out.failures == 0 and 'qall!' or 'cquit 1')
