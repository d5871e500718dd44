-- The Cortex client of Neovim's LSP: the capabilities it advertises, the handlers for what the
-- server sends (`cortex/event` into the answer window, `workspace/applyEdit` through the review,
-- `$/cancelRequest`, and `$/progress` on 0.7), starting or reusing the server for a buffer's root,
-- finding the client, and cancelling its runs.
--
-- Neovim applies `documentChanges` and `CreateFile` edits but does not advertise them, so the plugin
-- advertises what the client really does; it also makes CreateFile honour `overwrite: false` (Neovim
-- would otherwise truncate an existing file).
local compat = require('cortex.compat')
local progress = require('cortex.progress')
local review = require('cortex.review')
local root = require('cortex.root')
local state = require('cortex.state')

local M = {}

M.NAME = 'cortex'

-- Handlers --------------------------------------------------------------------------------------
local function on_event(_, result)
  if type(result) ~= 'table' then
    return
  end
  local run = state.ui:run(state.ui:apply(result))
  if state.opts.open_float and not (run and run.quiet) then
    state.ui:show(false)
  else
    state.ui:refresh()
  end
  state.emit({ kind = 'event', event = result })
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
            state.emit({ kind = 'edit', applied = false, reason = reason, params = params })
            return { applied = false, failureReason = reason }
          end
        end
      end
    end
    local opts = vim.tbl_extend('force', state.opts or {}, {
      can_yield = can_yield,
      on_review = function(shown)
        state.emit({ kind = 'review', label = shown.label, files = shown.files, tab = shown.tab, review = shown.review })
      end,
    })
    local result = review.handle(params, opts, { client_id = ctx and ctx.client_id, request_id = request_id })
    state.emit({ kind = 'edit', applied = result.applied, reason = result.failureReason, params = params, result = result })
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
  -- the plugin reviews every agent edit (review.lua): the server proposes writes for review; with the
  -- review off nobody reviews, so the server only sends writes the user's words asked for
  if (state.opts or {}).review_edits ~= false then
    caps.experimental = vim.tbl_extend('force', caps.experimental or {}, { cortexReview = true })
  elseif caps.workspace.workspaceEdit then
    caps.workspace.workspaceEdit.changeAnnotationSupport = nil
  end
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
        progress.update(result.token, result.value)
      end
    end
  end
  return h
end

-- Starting ------------------------------------------------------------------------------------
-- Start (or reuse) the server for this buffer's root and attach the buffer. Returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not root.is_file_buffer(bufnr) then
    return nil
  end
  local dir = root.root_for(vim.api.nvim_buf_get_name(bufnr))
  local cmd = root.server_cmd(dir)
  if vim.fn.executable(cmd[1]) ~= 1 then
    vim.notify_once('Cortex: ' .. cmd[1] .. ' not found; install cortex-lsp or set cmd in setup{}', vim.log.levels.WARN)
    return nil
  end
  local settings = compat.as_object(vim.deepcopy(state.opts.settings))
  local config = {
    name = M.NAME,
    cmd = cmd,
    cmd_env = state.opts.cmd_env,
    root_dir = dir,
    workspace_folders = { { uri = vim.uri_from_fname(dir), name = dir } },
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
  local id = state.clients[dir]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or client.is_stopped() then
    local withdraw = config.on_exit
    config.on_exit = function(...)
      state.clients[dir] = nil
      withdraw(...)
    end
    id = vim.lsp.start_client(config)
    if not id then
      return nil
    end
    state.clients[dir] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- The Cortex client for a buffer (attached), else any running Cortex client.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local any
  for _, client in ipairs(compat.get_clients({ name = M.NAME })) do
    if client.attached_buffers and client.attached_buffers[bufnr] then
      return client
    end
    any = any or client
  end
  return any
end

-- Cancel every running Cortex request (window/workDoneProgress/cancel for each live token).
function M.cancel()
  local client = M.client()
  if not client then
    return 0
  end
  -- a write waiting for review belongs to a run that is going away: close it, write nothing
  review.withdraw(client.id, nil, 'the run was cancelled before you decided')
  return progress.cancel_all(client)
end

return M
