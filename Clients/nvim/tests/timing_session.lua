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

function _G.DatasourcedTiming(kind)
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
