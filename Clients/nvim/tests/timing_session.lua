-- The session of tests/timing.sh (a real Neovim in tmux), on the fixture API whose base
-- URL comes in $DATASOURCED_BASE_URL. It starts the daemon and waits for its answer (so
-- that the daemon's start is not timed), writes Neovim's process id to
-- $DATASOURCED_TIMING_PID (for its memory), then says "timing: ready" on the command
-- line. The script then types `:lua DatasourcedTiming('million')` (or 'hundred'):
--   million  /v1/million, 1,000,000 rows of counted placeholders, pages of 100;
--   hundred  the same API's first page alone: 100 rows (paginated, no counted
--            placeholders: a trailing loading row, the next page loads when it shows).
-- Both show the columns id and title, so the screens differ only by what is counted.
local ds = require('datasourced')
ds.setup({ cmd = { os.getenv('DATASOURCED') } })
local base_url = os.getenv('DATASOURCED_BASE_URL')

local pid_file = os.getenv('DATASOURCED_TIMING_PID')
if pid_file then
  vim.fn.writefile({ tostring(vim.fn.getpid()) }, pid_file)
end

-- The daemon's share of an open, written to $DATASOURCED_TIMING_MARKS as "KIND
-- MILLISECONDS": from the open to the change set that brings the rows (the first to
-- insert more than one row), and, when that change set has no values (a million rows:
-- the list reads those on screen), the first read's wait for its answer.
local uv = vim.uv or vim.loop
local marks_file = os.getenv('DATASOURCED_TIMING_MARKS')
local opened = {} -- source name -> hrtime of its open
local waited = {} -- source name -> ms waited so far, while its first read is awaited
local function mark(source, ms)
  if marks_file then
    vim.fn.writefile({ string.format('%s %d', source, ms) }, marks_file, 'a')
  end
end
local ListView = require('datasourced.listview')
local on_change = ListView.on_change
ListView.on_change = function(view, params)
  local inserted = 0
  for _, path in ipairs(type(params.changes) == 'table' and params.changes.inserted or {}) do
    inserted = inserted + (tonumber(path[3]) or 1)
  end
  local started = inserted > 1 and opened[view.source]
  if started then
    opened[view.source] = nil
    local ms = (uv.hrtime() - started) / 1e6
    if params.values then
      mark(view.source, ms)
    else
      waited[view.source] = ms
    end
  end
  return on_change(view, params)
end
local Connection = require('datasourced.connection')
local request = Connection.request
Connection.request = function(conn, method, params, callback, ...)
  local source = type(params) == 'table' and params.source
  if method == 'objectsInSection' and waited[source] and callback then
    local asked = uv.hrtime()
    local on_answer = callback
    callback = function(...)
      if waited[source] then
        mark(source, waited[source] + (uv.hrtime() - asked) / 1e6)
        waited[source] = nil
      end
      return on_answer(...)
    end
  end
  return request(conn, method, params, callback, ...)
end

function _G.DatasourcedTiming(kind)
  opened[kind] = uv.hrtime()
  local spec = {
    name = kind, kind = 'paginated', identityKey = 'id', keyPath = 'rows', pageSize = 100,
    remoteConfiguration = { baseURL = base_url }, apiPath = '/v1/million',
    title = kind, columns = { { key = 'id', width = 8 }, 'title' },
  }
  if kind == 'million' then
    spec.placeholders, spec.jumpThreshold = 'counted', 300
  end
  ds.open(spec)
end

local conn = ds.connection()
conn:request('ping', nil, function()
  vim.schedule(function()
    vim.api.nvim_echo({ { 'timing: ready' } }, false, {})
  end)
end)
