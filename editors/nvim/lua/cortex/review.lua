-- The review of every write Cortex proposes (`workspace/applyEdit`): a new tab shows each file as a
-- diff (before | after; a new file against an empty buffer) and the user answers with one key:
--   a  accept (write the files and save them)    r / q / <Esc>  reject (nothing touches the disk)
--   <Tab>  switch side; closing the tab rejects; every other key works as usual
-- The review is not modal on 0.10+ (the request's answer waits in the handler's coroutine); on 0.7,
-- which must answer at once, the handler reads keys and runs them as normal-mode commands while the
-- event loop keeps going. It has no time-out (the server's tool time-out does not run during it), and
-- a cancel of the run (:CortexCancel, or the server withdrawing the request) closes it unwritten.
-- Accepted files are written straight to disk (a loaded buffer gets the new text and is :written),
-- so no hidden modified buffer is left behind and `:qa` just works.
local M = {}

local function is_loaded(fname)
  local b = vim.fn.bufnr(fname)
  return b ~= -1 and vim.api.nvim_buf_is_loaded(b), b
end

local function file_lines(fname)
  local loaded, b = is_loaded(fname)
  if loaded then
    return vim.api.nvim_buf_get_lines(b, 0, -1, false), true
  end
  if vim.fn.filereadable(fname) == 1 then
    return vim.fn.readfile(fname), true
  end
  return {}, false
end

-- Apply LSP text edits to `lines` in a scratch buffer (Neovim's own edit code, UTF-16 positions).
local function apply_edits(lines, edits)
  local scratch = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, lines)
  vim.lsp.util.apply_text_edits(edits, scratch, 'utf-16')
  local out = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
  vim.api.nvim_buf_delete(scratch, { force = true })
  -- text ending in a newline leaves an empty last line: the file ends in that newline instead
  if #out > 1 and out[#out] == '' then
    table.remove(out)
  end
  return out
end

-- The files a WorkspaceEdit touches: { {fname, create, overwrite, before, after, existed} }, or nil and why.
function M.plan(edit)
  local files, order = {}, {}
  local function entry(uri)
    if not files[uri] then
      files[uri] = { fname = vim.uri_to_fname(uri), create = false, overwrite = true, edits = {} }
      table.insert(order, uri)
    end
    return files[uri]
  end
  if type(edit) ~= 'table' then
    return nil, 'the edit is not an object'
  end
  if type(edit.documentChanges) == 'table' then
    for _, change in ipairs(edit.documentChanges) do
      if change.kind == 'create' then
        local f = entry(change.uri)
        f.create = true
        f.overwrite = type(change.options) == 'table' and change.options.overwrite == true
      elseif change.kind ~= nil then
        return nil, 'a ' .. tostring(change.kind) .. ' operation (Cortex only creates and edits files)'
      elseif type(change.textDocument) == 'table' and type(change.edits) == 'table' then
        vim.list_extend(entry(change.textDocument.uri).edits, change.edits)
      else
        return nil, 'an unreadable change'
      end
    end
  elseif type(edit.changes) == 'table' then
    for uri, edits in pairs(edit.changes) do
      vim.list_extend(entry(uri).edits, edits)
    end
  end
  local out = {}
  for _, uri in ipairs(order) do
    local f = files[uri]
    local before, existed = file_lines(f.fname)
    f.before, f.existed = before, existed
    f.after = apply_edits(before, f.edits)
    table.insert(out, f)
  end
  if #out == 0 then
    return nil, 'the edit changes nothing'
  end
  return out
end

local function scratch(name, lines, ft)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, b, name)
  vim.api.nvim_buf_set_option(b, 'bufhidden', 'wipe')
  vim.api.nvim_buf_set_option(b, 'modifiable', false)
  if ft and ft ~= '' then
    pcall(vim.api.nvim_buf_set_option, b, 'filetype', ft)
  end
  return b
end

-- Open reviews: { review, client_id, request_id }, for withdrawing them on a cancel.
local pending = {}

local DECIDE = {
  a = true, A = true, -- accept
  r = false, R = false, q = false, ['<Esc>'] = false, -- reject
}

-- Open the review tab for `files` (non-modal: the keys are buffer-local maps, the editor stays
-- usable). `on_done(accepted, reason)` is called exactly once: a/r/q/<Esc>, the tab closed by hand,
-- or `review:close(reason)` (a cancel). Returns the review.
function M.open(files, label, on_done)
  local review = { label = label, files = files, done = false, buffers = {} }
  local tab_before = vim.api.nvim_get_current_tabpage()
  local hint = string.format(' %s — a: accept  r/q/<Esc>: reject  <Tab>: other side ', label)
  local function set_up(buf, win)
    table.insert(review.buffers, buf)
    pcall(vim.api.nvim_win_set_option, win, 'statusline', (hint:gsub('%%', '%%%%')))
    for lhs, accept in pairs(DECIDE) do
      vim.keymap.set('n', lhs, function()
        vim.schedule(function()
          review:finish(accept, accept and nil or 'you rejected it in the review')
        end)
      end, { buffer = buf, nowait = true, silent = true, desc = 'Cortex review' })
    end
    vim.keymap.set('n', '<Tab>', '<C-w>w', { buffer = buf, nowait = true, silent = true })
  end
  for i, f in ipairs(files) do
    local name = vim.fn.fnamemodify(f.fname, ':t')
    local ft = vim.fn.fnamemodify(f.fname, ':e')
    local key = tostring(vim.loop.hrtime())
    if i == 1 then
      vim.cmd('tabnew')
    else
      vim.cmd('split')
    end
    local empty = vim.api.nvim_get_current_buf()
    local before = scratch('cortex-review://' .. key .. '/before/' .. name, f.before, ft)
    vim.api.nvim_win_set_buf(0, before)
    if vim.api.nvim_buf_is_valid(empty) and empty ~= before then
      pcall(vim.api.nvim_buf_delete, empty, { force = true })
    end
    vim.cmd('diffthis')
    set_up(before, vim.api.nvim_get_current_win())
    vim.cmd('rightbelow vsplit')
    local after = scratch('cortex-review://' .. key .. '/after/' .. name, f.after, ft)
    vim.api.nvim_win_set_buf(0, after)
    vim.cmd('diffthis')
    set_up(after, vim.api.nvim_get_current_win())
  end
  review.tab = vim.api.nvim_get_current_tabpage()
  -- closing the review by hand (:tabclose, :q in each window) rejects it
  review.group = vim.api.nvim_create_augroup('cortex-review-' .. tostring(review.tab), { clear = true })
  for _, buf in ipairs(review.buffers) do
    vim.api.nvim_create_autocmd('BufWipeout', {
      group = review.group,
      buffer = buf,
      callback = function()
        vim.schedule(function()
          review:finish(false, 'you closed the review')
        end)
      end,
    })
  end

  function review.finish(self, accepted, reason)
    if self.done then
      return
    end
    self.done = true
    self.accepted = accepted == true
    self.reason = reason
    pcall(vim.api.nvim_del_augroup_by_id, self.group)
    for i, entry in ipairs(pending) do
      if entry.review == self then
        table.remove(pending, i)
        break
      end
    end
    if vim.api.nvim_tabpage_is_valid(self.tab) then
      local back = vim.api.nvim_get_current_tabpage()
      vim.api.nvim_set_current_tabpage(self.tab)
      pcall(vim.cmd, 'tabclose!')
      if back ~= self.tab and vim.api.nvim_tabpage_is_valid(back) then
        vim.api.nvim_set_current_tabpage(back)
      elseif vim.api.nvim_tabpage_is_valid(tab_before) then
        vim.api.nvim_set_current_tabpage(tab_before)
      end
    end
    pcall(vim.api.nvim_echo, { { '' } }, false, {})
    pcall(vim.cmd, 'redraw')
    if on_done then
      on_done(self.accepted, reason)
    end
  end

  -- Withdraw the review (the run was cancelled): the tab closes and nothing is written.
  function review.close(self, reason)
    self:finish(false, reason or 'the run was cancelled before you decided')
  end

  pcall(vim.cmd, 'redraw')
  pcall(vim.api.nvim_echo, { { hint, 'Question' } }, false, {})
  return review
end

-- Neovim 0.7 must answer a server request with the handler's return value, so there the handler
-- waits here for the decision: keys are read and run as normal-mode commands (scrolling, window
-- moves, `:` commands), and between keys the event loop runs, so a cancel closes the review.
local PREFIX = { g = true, z = true, Z = true, ['['] = true, [']'] = true, ['\23'] = true, ['"'] = true }

-- Whether an Ex command line quits Neovim (:q, :qa!, :wqa, :xa, :cq, …).
function M.is_quit(cmd)
  local name = (cmd or ''):match('^[%s:]*(%a+)')
  local QUITS = { q = 1, qu = 1, qui = 1, quit = 1, qa = 1, qal = 1, qall = 1, quita = 1, quitall = 1,
                  wq = 1, wqa = 1, wqall = 1, x = 1, xa = 1, xall = 1, xit = 1, exi = 1, exit = 1,
                  cq = 1, cquit = 1 }
  return name ~= nil and QUITS[name] ~= nil
end

function M.wait(review)
  while not review.done do
    local ok, ch = pcall(vim.fn.getchar, 0)
    if not ok then
      review:finish(false, 'you rejected it in the review') -- <C-c>
      break
    end
    if ch == 0 or ch == '' then
      local _, interrupted = vim.wait(40, function() return review.done end, 10)
      if interrupted == -2 then
        review:finish(false, 'you rejected it in the review')
      end
    else
      local key = type(ch) == 'number' and vim.fn.nr2char(ch) or ch
      if key == ':' then
        local got, cmd = pcall(vim.fn.input, { prompt = ':', completion = 'command', cancelreturn = '' })
        if got and M.is_quit(cmd) then
          -- quitting: answer the server first (rejected), then quit once the handler has returned
          review:finish(false, 'Neovim was closed during the review')
          vim.schedule(function()
            vim.cmd(cmd)
          end)
        elseif got and cmd ~= '' then
          local ran, err = pcall(vim.cmd, cmd)
          if not ran then
            vim.api.nvim_echo({ { tostring(err), 'ErrorMsg' } }, true, {})
          end
        end
      else
        -- a two-key command, or the start of a mapping (<leader>cx: cancel): read the rest of it
        local tries = 0
        while tries < 8 and (PREFIX[key] and tries == 0
            or (vim.fn.mapcheck(key, 'n') ~= '' and vim.fn.maparg(key, 'n') == '')) do
          tries = tries + 1
          local ok2, ch2 = pcall(vim.fn.getchar)
          if not ok2 then
            break
          end
          key = key .. (type(ch2) == 'number' and vim.fn.nr2char(ch2) or ch2)
        end
        pcall(vim.api.nvim_feedkeys, key, 'mx', false)
      end
      pcall(vim.cmd, 'redraw')
    end
  end
  return review.accepted, review.reason
end

-- Withdraw open reviews: the one answering the server request `request_id` of `client_id`; every
-- review of that client when the id is unknown (nil); every review when `client_id` is nil.
function M.withdraw(client_id, request_id, reason)
  local matched = {}
  for _, entry in ipairs(pending) do
    if client_id == nil or (entry.client_id == client_id
        and (request_id == nil or entry.request_id == nil or entry.request_id == request_id)) then
      table.insert(matched, entry.review)
    end
  end
  for _, review in ipairs(matched) do
    review:close(reason)
  end
  return #matched
end

function M.open_count()
  return #pending
end

local function track(review, client_id, request_id)
  table.insert(pending, { review = review, client_id = client_id, request_id = request_id })
end

-- Write the accepted files: a loaded buffer gets the text and is saved; otherwise straight to disk.
function M.write(files)
  local written = {}
  for _, f in ipairs(files) do
    if f.create and not f.overwrite and (vim.fn.filereadable(f.fname) == 1) then
      return false, vim.fn.fnamemodify(f.fname, ':t') .. ' appeared during the review'
    end
    vim.fn.mkdir(vim.fn.fnamemodify(f.fname, ':h'), 'p')
    local loaded, b = is_loaded(f.fname)
    local ok, err
    if loaded then
      ok, err = pcall(function()
        vim.api.nvim_buf_set_lines(b, 0, -1, false, f.after)
        vim.api.nvim_buf_call(b, function()
          vim.cmd('silent keepalt write!')
        end)
      end)
    else
      ok, err = pcall(vim.fn.writefile, f.after, f.fname)
      ok = ok and err == 0
    end
    if not ok then
      return false, string.format('writing %s failed: %s', f.fname, tostring(err))
    end
    table.insert(written, f.fname)
  end
  return true, written
end

-- The whole flow for one workspace/applyEdit: returns the ApplyWorkspaceEditResult. On 0.10+ the
-- handler's coroutine yields until the user decides (the editor stays fully usable); on 0.7 it waits
-- in M.wait. `ctx.request_id` names the server's request, for a withdrawal ($/cancelRequest).
function M.handle(params, opts, ctx)
  local files, why = M.plan(params and params.edit)
  if not files then
    return { applied = false, failureReason = 'Cortex could not read the edit: ' .. why }
  end
  if opts.review_edits ~= false then
    local label = params.label or 'Cortex: write'
    local co = opts.can_yield and coroutine.running() or nil
    local waiting = false
    local review = M.open(files, label, function()
      if waiting then
        waiting = false
        local ok, err = coroutine.resume(co)
        if not ok then
          vim.notify('Cortex: review: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end
    end)
    review.request_id, review.modal = ctx and ctx.request_id, co == nil
    track(review, ctx and ctx.client_id, review.request_id)
    if opts.on_review then
      pcall(opts.on_review, { label = label, files = files, tab = review.tab, review = review })
    end
    if co then
      if not review.done then
        waiting = true
        coroutine.yield()
      end
    else
      M.wait(review)
    end
    if not review.accepted then
      return { applied = false, failureReason = review.reason or 'you rejected it in the review' }
    end
  end
  local ok, result = M.write(files)
  if not ok then
    return { applied = false, failureReason = result }
  end
  return { applied = true }
end

return M
