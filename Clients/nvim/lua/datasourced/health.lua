-- :checkhealth datasourced — is the daemon there, which one, does it answer?
-- Neovim 0.10 reports through vim.health.start/ok/...; 0.7 through health#report_*.

local M = {}

local function reporter()
  local health = vim.health or {}
  local function pick(new, old, vimscript)
    return health[new] or health[old] or function(...)
      return vim.fn['health#' .. vimscript](...)
    end
  end
  return {
    start = pick('start', 'report_start', 'report_start'),
    ok = pick('ok', 'report_ok', 'report_ok'),
    info = pick('info', 'report_info', 'report_info'),
    warn = pick('warn', 'report_warn', 'report_warn'),
    error = pick('error', 'report_error', 'report_error'),
  }
end

--- Starts a daemon of its own (not one serving lists), sends initialize and ping, and
--- waits (at most timeout_ms) for both. Returns what it learnt, or nil and the reason.
function M.round_trip(cmd, timeout_ms)
  local Connection = require('datasourced.connection')
  local conn, problem = Connection.start(cmd, {})
  if not conn then
    return nil, problem
  end
  local started = (vim.uv or vim.loop).hrtime()
  local pong, ping_error
  conn:request('ping', nil, function(err, result)
    pong, ping_error = result ~= nil, err
  end)
  local answered = vim.wait(timeout_ms or 5000, function()
    return pong ~= nil or ping_error ~= nil or conn.exited
  end, 5)
  local elapsed_ms = ((vim.uv or vim.loop).hrtime() - started) / 1e6
  local learnt = {
    server_info = conn.server_info,
    protocol_version = conn.protocol_version,
    capabilities = conn.capabilities,
    elapsed_ms = elapsed_ms,
  }
  local exited, code = conn.exited, conn.exit_code
  conn:stop({ wait = true, timeout_ms = 1000 })
  if not answered then
    return nil, string.format('no answer to initialize and ping within %d ms', timeout_ms or 5000)
  elseif exited then
    return nil, string.format('the daemon exited (status %s) before answering', tostring(code))
  elseif ping_error then
    return nil, 'ping failed: ' .. Connection.describe_error(ping_error)
  end
  return learnt
end

function M.check()
  local report = reporter()
  local ds = require('datasourced')
  local config = ds.config()
  local cmd = ds.command_line()

  report.start('datasourced: Neovim')
  local v = vim.version()
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    report.ok('Neovim ' .. version .. (vim.fn.has('nvim-0.10') == 1 and ' (vim.lsp.rpc.start(cmd_list, dispatchers))'
      or ' (vim.lsp.rpc.start(cmd, args, dispatchers))'))
  else
    report.error('Neovim ' .. version .. ': datasourced.nvim needs 0.7 or later')
  end

  report.start('datasourced: the daemon')
  local executable = cmd[1]
  if vim.fn.executable(executable) ~= 1 then
    report.error(string.format('%q is not an executable', tostring(executable)),
      { 'Build it (swift build) and set require("datasourced").setup({ cmd = { "/path/to/datasourced" } })' })
    return
  end
  report.ok('found, executable: ' .. vim.fn.exepath(executable))
  report.info('command line: ' .. table.concat(cmd, ' '))
  if config.record then
    report.info('recording to ' .. config.record .. ' (needs a daemon that takes --record)')
  end
  local learnt, problem = M.round_trip(cmd, 5000)
  if not learnt then
    report.error('no round trip: ' .. tostring(problem))
    return
  end
  local info = learnt.server_info or {}
  report.ok(string.format('%s %s, protocol %s', tostring(info.name or 'datasourced'), tostring(info.version or '?'),
    tostring(learnt.protocol_version or '?')))
  local protocol = tostring(learnt.protocol_version or '')
  if protocol:match('^1%.0') then
    report.warn('protocol 1.0: lists work, but read their rows again to check each change (1.1 sends revisions)')
  end
  if learnt.capabilities and learnt.capabilities.changeValues then
    report.ok('change sets carry their values (changeValues)')
  end
  report.ok(string.format('round trip (initialize, ping): %.1f ms', learnt.elapsed_ms))
end

return M
