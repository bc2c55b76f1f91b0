-- One datasourced process, spoken to through Neovim's own JSON-RPC client
-- (vim.lsp.rpc.start, Neovim 0.7 signature): it does the Content-Length framing, matches
-- answers to requests, and hands us responses and notifications in the order the daemon
-- wrote them (both are vim.schedule'd by the client, so they run on the main loop).
--
-- What this module adds: no callback of ours may raise into the RPC client (that would
-- surface as a traceback or a cryptic "connection error"), requests that cannot even be
-- encoded report an error instead of throwing, and a clean stop (shutdown, then exit).

local Connection = {}
Connection.__index = Connection

local CLIENT_INFO = { name = 'datasourced.nvim', version = '0.2.0' }

--- A JSON-RPC error ({code, message, data}) or any other failure, as one line for people.
function Connection.describe_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local text = tostring(err.message or 'unknown error')
  if err.code then
    text = text .. ' (code ' .. tostring(err.code) .. ')'
  end
  return (text:gsub('[\r\n]+', ' '))
end

--- Runs `fn(...)`; a failure becomes an error message instead of a traceback.
local function guarded(what, fn, ...)
  local ok, failure = pcall(fn, ...)
  if not ok then
    vim.notify(string.format('datasourced: %s failed: %s', what, tostring(failure)), vim.log.levels.ERROR)
  end
end
Connection.guarded = guarded

--- Spawns `cmd` (a list: the executable, then its arguments) and sends `initialize`.
--- handlers.notification(method, params) receives the daemon's notifications;
--- handlers.on_exit(code, signal, expected) is told (on the main loop) when it ends.
--- Returns the connection, or nil and the reason.
function Connection.start(cmd, handlers)
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' or cmd[1] == '' then
    return nil, 'cmd must be a list like { "/path/to/datasourced" }, got ' .. vim.inspect(cmd)
  end
  -- Checked first: vim.lsp.rpc.start would only log a vague warning about a "language server".
  if vim.fn.executable(cmd[1]) ~= 1 then
    return nil, string.format('cannot start %q: not an executable (set it with require("datasourced").setup{cmd = {...}})', cmd[1])
  end
  local self = setmetatable({
    cmd = cmd,
    handlers = handlers or {},
    stopping = false, -- we asked it to end: its exit is not news
    exited = false,
  }, Connection)

  local ok, rpc = pcall(vim.lsp.rpc.start, cmd[1], vim.list_slice(cmd, 2), {
    notification = function(method, params)
      if self.handlers.notification then
        guarded('handling ' .. tostring(method), self.handlers.notification, method, params)
      end
    end,
    on_error = function(code, err)
      -- Transport trouble the client could not attribute to a request (output that is not
      -- JSON, an answer nobody waits for...). Said once, in words.
      local name = vim.lsp.rpc.client_errors[code] or tostring(code)
      vim.notify(string.format('datasourced: connection error %s: %s', name, Connection.describe_error(err)), vim.log.levels.ERROR)
    end,
    on_exit = function(code, signal)
      -- Unlike the other dispatchers, on_exit is not scheduled by the 0.7 client: it runs
      -- in a libuv callback (a fast event), where buffers and vim.notify are off limits.
      self.exited, self.exit_code, self.exit_signal = true, code, signal
      vim.schedule(function()
        if self.handlers.on_exit then
          guarded('on_exit', self.handlers.on_exit, code, signal, self.stopping)
        end
      end)
    end,
  })
  if not ok or not rpc then
    return nil, 'cannot start datasourced: ' .. tostring(ok and 'spawn failed' or rpc)
  end
  self.rpc = rpc
  self.pid = rpc.pid

  self:request('initialize', { clientInfo = CLIENT_INFO }, function(err, result)
    if err then
      vim.notify('datasourced: initialize failed: ' .. Connection.describe_error(err), vim.log.levels.ERROR)
    else
      self.server_info = result.serverInfo
    end
  end)
  return self
end

--- Sends a request; callback(err, result) runs later on the main loop, guarded. `params`
--- nil sends none (the daemon reads {}); note that an empty Lua table would be encoded as
--- [] — use vim.empty_dict() for an empty object. Returns whether it was sent.
function Connection:request(method, params, callback)
  callback = callback or function() end
  local function answer(err, result)
    guarded(method .. ' callback', callback, err, result)
  end
  local function fail(message)
    -- Asynchronously, like a real answer, so callers see one order of events.
    vim.schedule(function()
      answer({ message = message }, nil)
    end)
    return false
  end
  if self.exited or not self.rpc then
    return fail('datasourced is not running')
  end
  -- rpc.request encodes before sending: a value JSON cannot hold (a function, say) raises
  -- there, and nothing has been sent.
  local ok, sent = pcall(self.rpc.request, method, params, answer)
  if not ok then
    return fail('cannot send ' .. method .. ': ' .. tostring(sent))
  end
  if not sent then
    return fail('datasourced is not running')
  end
  return true
end

function Connection:notify(method, params)
  if not self.exited and self.rpc then
    pcall(self.rpc.notify, method, params or vim.empty_dict())
  end
end

--- Ends the daemon cleanly: `shutdown`, then `exit` once it is answered (status 0).
--- With opts.wait (for VimLeavePre, when Neovim will not run callbacks any more) it
--- blocks until the process has ended, at most opts.timeout_ms; else it returns at once.
--- A daemon that does not answer is terminated after the timeout.
function Connection:stop(opts)
  opts = opts or {}
  local timeout = opts.timeout_ms or 2000
  if self.stopping or self.exited or not self.rpc then
    self.stopping = true
    return
  end
  self.stopping = true
  local function kill()
    if not self.exited and self.rpc.handle and not self.rpc.handle:is_closing() then
      self.rpc.handle:kill(15)
    end
  end
  if opts.wait then
    local answered = false
    self:request('shutdown', nil, function()
      answered = true
    end)
    vim.wait(timeout, function()
      return answered or self.exited
    end, 5)
    self:notify('exit')
    if not vim.wait(timeout, function()
      return self.exited
    end, 5) then
      kill()
    end
  else
    self:request('shutdown', nil, function()
      self:notify('exit')
    end)
    vim.defer_fn(kill, timeout)
  end
end

return Connection
