-- One datasourced process, spoken to through Neovim's own JSON-RPC client (vim.lsp.rpc):
-- it frames messages, matches answers to requests, and schedules every callback and
-- notification on the main loop in the order the daemon sent them.

local Connection = {}
Connection.__index = Connection

local function describe_rpc_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local text = err.message or 'unknown error'
  if err.code then
    text = text .. ' (code ' .. err.code .. ')'
  end
  return text
end
Connection.describe_rpc_error = describe_rpc_error

--- Spawns `cmd` (a list: executable, then arguments) and sends `initialize`.
--- `handlers.notification(method, params)` receives the dataSource/... notifications;
--- `handlers.on_exit(code)` is told when the process ends.
function Connection.start(cmd, handlers)
  local self = setmetatable({ cmd = cmd, handlers = handlers or {}, closed = false, exited = false }, Connection)
  local executable = cmd[1]
  if vim.fn.executable(executable) ~= 1 then
    return nil, string.format('cannot start %q: not an executable (set it with require("datasourced").setup{cmd = {...}})', executable)
  end
  local args = vim.list_slice(cmd, 2)
  local ok, rpc = pcall(vim.lsp.rpc.start, executable, args, {
    notification = function(method, params)
      if self.handlers.notification then
        self.handlers.notification(method, params)
      end
    end,
    on_error = function(code, err)
      -- Transport-level trouble (unreadable output, a failing callback): say it, never throw.
      vim.schedule(function()
        vim.notify(string.format('datasourced: connection error %s: %s', tostring(code), vim.inspect(err)), vim.log.levels.ERROR)
      end)
    end,
    on_exit = function(code, signal)
      self.exited = true
      vim.schedule(function()
        if self.handlers.on_exit then
          self.handlers.on_exit(code, signal, self.closed)
        end
      end)
    end,
  })
  if not ok or not rpc then
    return nil, 'cannot start datasourced: ' .. tostring(rpc)
  end
  self.rpc = rpc
  self:request('initialize', { clientInfo = { name = 'datasourced.nvim', version = '0.1.0' } }, function(err, result)
    if err then
      vim.notify('datasourced: initialize failed: ' .. describe_rpc_error(err), vim.log.levels.ERROR)
    else
      self.server_info = result.serverInfo
    end
  end)
  return self
end

--- Sends a request; `callback(err, result)` runs on the main loop. Returns false when the
--- daemon is gone (the callback is then called at once with an error).
function Connection:request(method, params, callback)
  callback = callback or function() end
  if self.exited or not self.rpc then
    callback({ message = 'datasourced is not running' }, nil)
    return false
  end
  local sent = self.rpc.request(method, params, function(err, result)
    -- A failing callback must not surface as a Lua traceback from inside the RPC client.
    local ok, failure = pcall(callback, err, result)
    if not ok then
      vim.notify('datasourced: ' .. method .. ' handler failed: ' .. tostring(failure), vim.log.levels.ERROR)
    end
  end)
  if not sent then
    callback({ message = 'datasourced is not running' }, nil)
  end
  return sent
end

function Connection:notify(method, params)
  if not self.exited and self.rpc then
    self.rpc.notify(method, params or vim.empty_dict())
  end
end

--- shutdown, then exit; waits (at most `timeout_ms`) for the process to end.
function Connection:stop(timeout_ms)
  if self.closed then
    return
  end
  self.closed = true
  if self.exited or not self.rpc then
    return
  end
  local answered = false
  self:request('shutdown', nil, function()
    answered = true
  end)
  vim.wait(timeout_ms or 1000, function()
    return answered or self.exited
  end, 10)
  self:notify('exit')
  vim.wait(timeout_ms or 1000, function()
    return self.exited
  end, 10)
  if not self.exited then
    self.rpc.terminate()
  end
end

return Connection
