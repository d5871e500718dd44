-- The review of every write Cortex proposes (`workspace/applyEdit`): a new tab shows each file as a
-- diff (before | after; a new file against an empty buffer) and the user answers with one key:
--   a  accept (write the files and save them)    r / q / <Esc>  reject (nothing touches the disk)
--   j k <C-d> <C-u> <C-f> <C-b> gg G  scroll the diff     <Tab>  switch side
-- The review is modal (the request's answer waits for the key; Neovim 0.7 cannot answer a server
-- request later), it has no time-out, and the server's tool time-out does not run during it.
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

local SCROLL = {
  j = 'j', k = 'k', G = 'G', g = 'gg', ['\4'] = '\4', ['\21'] = '\21', ['\6'] = '\6', ['\2'] = '\2',
}

-- Show the diff tab and wait for one key: returns true (accept) or false (reject).
function M.ask(files, label, on_show)
  local tab_before = vim.api.nvim_get_current_tabpage()
  local right_win
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
    vim.api.nvim_win_set_buf(0, scratch('cortex-review://' .. key .. '/before/' .. name, f.before, ft))
    if vim.api.nvim_buf_is_valid(empty) and empty ~= vim.api.nvim_get_current_buf() then
      pcall(vim.api.nvim_buf_delete, empty, { force = true })
    end
    vim.cmd('diffthis')
    vim.cmd('rightbelow vsplit')
    vim.api.nvim_win_set_buf(0, scratch('cortex-review://' .. key .. '/after/' .. name, f.after, ft))
    vim.cmd('diffthis')
    right_win = vim.api.nvim_get_current_win()
  end
  local review_tab = vim.api.nvim_get_current_tabpage()
  if on_show then
    pcall(on_show, { label = label, files = files, tab = review_tab })
  end
  local hint = string.format('%s — [a]ccept  [r]eject  (j/k/C-d/C-u scroll, Tab: other side)', label)
  local accepted = nil
  while accepted == nil do
    vim.cmd('redraw')
    vim.api.nvim_echo({ { hint, 'Question' } }, false, {})
    local ok, ch = pcall(vim.fn.getchar)
    if not ok then
      accepted = false -- <C-c>
      break
    end
    local key = type(ch) == 'number' and vim.fn.nr2char(ch) or ch
    if key == 'a' or key == 'A' then
      accepted = true
    elseif key == 'r' or key == 'R' or key == 'q' or key == '\27' then
      accepted = false
    elseif key == '\t' then
      vim.cmd('wincmd w')
    elseif SCROLL[key] then
      pcall(vim.api.nvim_win_call, vim.api.nvim_get_current_win() or right_win, function()
        vim.cmd('normal! ' .. SCROLL[key])
      end)
    end
  end
  if vim.api.nvim_tabpage_is_valid(review_tab) then
    vim.api.nvim_set_current_tabpage(review_tab)
    pcall(vim.cmd, 'tabclose!')
  end
  if vim.api.nvim_tabpage_is_valid(tab_before) then
    vim.api.nvim_set_current_tabpage(tab_before)
  end
  vim.api.nvim_echo({ { '' } }, false, {})
  return accepted
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

-- The whole flow for one workspace/applyEdit: returns the ApplyWorkspaceEditResult.
function M.handle(params, opts)
  local files, why = M.plan(params and params.edit)
  if not files then
    return { applied = false, failureReason = 'Cortex could not read the edit: ' .. why }
  end
  if opts.review_edits ~= false then
    local label = params.label or 'Cortex: write'
    if not M.ask(files, label, opts.on_review) then
      return { applied = false, failureReason = 'you rejected it in the review' }
    end
  end
  local ok, result = M.write(files)
  if not ok then
    return { applied = false, failureReason = result }
  end
  return { applied = true }
end

return M
