-- The plugin's state, shared by its modules (cortex/init.lua, lsp.lua, progress.lua, commands.lua,
-- root.lua): the options setup{} made, the answer window, the clients started on 0.7, the running
-- progress and the statusline text, the session, and who subscribed to what the plugin sees.
local M = {
  opts = nil,
  ui = nil,
  clients = {}, -- root -> client id (Neovim 0.7 path)
  progress = {}, -- token -> { title, message }
  status = '',
  subscribers = {},
  session_id = nil,
  token_counter = nil, -- the last workDoneToken number sent
  model_down_shown = nil, -- the "model server is down" message was shown (once, until a run answers)
}

-- Tell every subscriber what the plugin saw (a subscriber's error does not stop the others).
function M.emit(record)
  for _, fn in ipairs(M.subscribers) do
    pcall(fn, record)
  end
end

-- Subscribe to what the plugin sees: {kind='event'|'progress'|'result'|'edit', ...}. Returns an
-- unsubscribe function.
function M.subscribe(fn)
  table.insert(M.subscribers, fn)
  return function()
    for i, f in ipairs(M.subscribers) do
      if f == fn then
        table.remove(M.subscribers, i)
        return
      end
    end
  end
end

return M
