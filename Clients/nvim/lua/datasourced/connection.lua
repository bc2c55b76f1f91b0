-- One datasourced process, spoken to through Neovim's own JSON-RPC client, vim.lsp.rpc:
-- it does the Content-Length framing, matches answers to requests, and hands us
-- responses and notifications in the order the daemon wrote them (both are
-- vim.schedule'd by the client, so they run on the main loop, in that order).
--
-- What this module adds: one way to start it on every Neovim (vim.lsp.rpc.start changed
-- its signature in 0.10), no callback of ours may raise into the RPC client (that would
-- surface as a traceback or a cryptic "connection error"), requests that cannot even be
-- encoded report an error instead of throwing, the daemon's protocol version and
-- capabilities as `initialize` told them, and a clean stop (shutdown, then exit).

local Connection = {}
Connection.__index = Connection

Connection.CLIENT_INFO = { name = 'datasourced.nvim', version = '0.4.0' }

local uv = vim.uv or vim.loop

-- Whether to use what protocol 1.1 adds (revisions, change values) when the daemon
-- offers it. Only the tests turn it off, to run the 1.0 fallback against a 1.1 daemon.
Connection.protocol_additions = true

--- A JSON-RPC error ({code, message, data}) or any other failure, as one line for people.
--- A refused request (invalid params, -32602) says what was wrong in the daemon's words,
--- without the JSON-RPC label and code; other codes keep theirs, which only a bug shows.
function Connection.describe_error(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local text = tostring(err.message or 'unknown error')
  if err.code == -32602 then
    text = text:gsub('^Invalid params:%s*', '')
  elseif err.code then
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

--- vim.lsp.rpc.start as this Neovim spells it: (cmd, args, dispatchers) up to 0.9,
--- (cmd_list, dispatchers) from 0.10 on, where the first argument must be the list.
local function rpc_start(cmd, dispatchers)
  if vim.fn.has('nvim-0.10') == 1 then
    return vim.lsp.rpc.start(cmd, dispatchers)
  end
  return vim.lsp.rpc.start(cmd[1], vim.list_slice(cmd, 2), dispatchers)
end

--- The pid of the process just spawned. The 0.7 client returns it; the 0.10 one keeps its
--- process object to itself, so we look for the child that was not there before.
local function spawned_pid(rpc, children_before)
  if rpc.pid then
    return rpc.pid
  end
  local before = {}
  for _, pid in ipairs(children_before) do
    before[pid] = true
  end
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    if not before[pid] then
      return pid
    end
  end
  return nil
end

--- Spawns `cmd` (a list: the executable, then its arguments) and sends `initialize`
--- (asking for change values, load states per direction (1.5) and runs of rows as ranges
--- in change sets (1.6): capabilities an older daemon ignores). handlers.notification(method,
--- params) receives the daemon's notifications; handlers.on_exit(code, signal, expected)
--- is told (on the main loop) when it ends; handlers.on_initialized(conn) once
--- `initialize` is answered. Returns the connection, or nil and the reason.
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
    initialized = false,
    protocol_version = nil, -- "1.0", "1.1"... once initialize is answered
    capabilities = {},
    load_cycles = {}, -- source name -> load cycles begun (willLoadData seen)
    load_outcomes = {}, -- source name -> how its last cycle ended: 'finished' or 'failed'
    log_file = nil, -- where the daemon's stderr goes (handlers.log_file)
    mutations = {}, -- "source\0mutation" -> { source, mutation, action, identity }: actions not settled
    settled = {}, -- the same keys, of mutations settled before performAction's answer was read
  }, Connection)

  -- The daemon logs to stderr, which vim.lsp.rpc would bury in the LSP log: it goes to a
  -- file of ours instead (handlers.log_file), which :Datasourced log opens. sh only
  -- redirects, then becomes the daemon (exec): its pid is the daemon's.
  local spawn = cmd
  if handlers and handlers.log_file then
    self.log_file = handlers.log_file
    spawn = vim.list_extend({ 'sh', '-c', 'exec "$@" 2>>"$0"', handlers.log_file }, cmd)
  end
  local children_before = vim.api.nvim_get_proc_children(vim.fn.getpid())
  local ok, rpc = pcall(rpc_start, spawn, {
    notification = function(method, params)
      if method == 'dataSource/willLoadData' and type(params) == 'table' and params.source then
        self.load_cycles[params.source] = (self.load_cycles[params.source] or 0) + 1
        self.load_outcomes[params.source] = nil
      elseif method == 'dataSource/finishedLoading' and type(params) == 'table' and params.source then
        self.load_outcomes[params.source] = 'finished'
      elseif method == 'dataSource/failedWithError' and type(params) == 'table' and params.source then
        self.load_outcomes[params.source] = 'failed' -- cancelled ones too
      end
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
      -- Unlike the other dispatchers, on_exit is not scheduled by the client: it runs in
      -- a libuv callback (a fast event), where buffers and vim.notify are off limits.
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
  self.pid = spawned_pid(rpc, children_before)

  self.protocol_additions = Connection.protocol_additions
  self:request('initialize', {
    clientInfo = Connection.CLIENT_INFO,
    capabilities = self.protocol_additions and { changeValues = true, loadStates = true, changeRanges = true } or nil,
  }, function(err, result)
    if err then
      vim.notify('datasourced: initialize failed: ' .. Connection.describe_error(err), vim.log.levels.ERROR)
      return
    end
    self.initialized = true
    self.server_info = result.serverInfo
    self.protocol_version = result.protocolVersion
    self.capabilities = type(result.capabilities) == 'table' and result.capabilities or {}
    if self.handlers.on_initialized then
      self.handlers.on_initialized(self)
    end
  end)
  return self
end

--- Whether the daemon speaks protocol `major`.`minor` or later, and what it adds is used
--- (not when the tests run the 1.0 fallback).
function Connection:speaks(want_major, want_minor)
  if not self.protocol_additions then
    return false
  end
  local major, minor = tostring(self.protocol_version or ''):match('^(%d+)%.(%d+)')
  major, minor = tonumber(major), tonumber(minor)
  return major ~= nil and (major > want_major or (major == want_major and minor >= want_minor))
end

--- Whether the daemon speaks protocol 1.1 or later: revisions in change sets and reads.
function Connection:has_revisions()
  return self:speaks(1, 1)
end

--- Whether change sets carry the values of their rows (asked for in initialize).
function Connection:has_change_values()
  return self.protocol_additions and self.capabilities.changeValues ~= nil and self.capabilities.changeValues ~= false
end

--- Whether the daemon serves `method` (initialize's capabilities.methods; a daemon that
--- lists none is taken to serve it).
function Connection:serves(method)
  local methods = self.capabilities.methods
  return type(methods) ~= 'table' or vim.tbl_contains(methods, method)
end

--- Notes an action's mutation (performAction's answer, or a description's
--- pendingMutations) until it settles; false when it settled already.
function Connection:track_mutation(source, mutation, fields)
  local key = source .. '\0' .. mutation
  if self.settled[key] then
    self.settled[key] = nil
    return false
  end
  local tracked = self.mutations[key] or { source = source, mutation = mutation }
  for k, v in pairs(fields or {}) do
    tracked[k] = v
  end
  self.mutations[key] = tracked
  return true
end

--- A dataSource/didSettleMutation: the mutation (tracked, or nil if its performAction
--- answer is still to come), forgotten unless it is queued (sent again later).
function Connection:settle_mutation(source, mutation, status)
  local key = source .. '\0' .. mutation
  local tracked = self.mutations[key]
  if status ~= 'queued' then
    self.mutations[key] = nil
    if not tracked then
      self.settled[key] = true
    end
  end
  return tracked
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

--- Ends the process at once (SIGTERM), whichever client this Neovim has.
function Connection:kill()
  if self.exited or not self.rpc then
    return
  end
  if self.rpc.terminate then
    pcall(self.rpc.terminate)
  elseif self.rpc.handle and not self.rpc.handle:is_closing() then
    self.rpc.handle:kill(15)
  elseif self.pid then
    uv.kill(self.pid, 'sigterm')
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
      self:kill()
    end
  else
    self:request('shutdown', nil, function()
      self:notify('exit')
    end)
    vim.defer_fn(function()
      self:kill()
    end, timeout)
  end
end

return Connection
