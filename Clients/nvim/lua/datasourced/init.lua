-- datasourced.nvim: list buffers over the data sources of a datasourced daemon.
--
--   require('datasourced').setup({ cmd = { '/path/to/datasourced' } })
--   require('datasourced').open({
--     name = 'books', kind = 'paginated', apiPath = '/v1/books', keyPath = 'books',
--     remoteConfiguration = { baseURL = 'http://127.0.0.1:8080' }, pageSize = 20,
--     format = function(book) return book.title end,
--   })
--
-- One daemon per command line serves every list opened with it: it starts with the first
-- list, and stops (shutdown, then exit) when its last list buffer is wiped out or Neovim
-- exits. See :help datasourced.

local Connection = require('datasourced.connection')
local ListView = require('datasourced.listview')
local render = require('datasourced.render')

local M = {}

local config = {
  cmd = { 'datasourced' },
  statusline = true, -- set the list windows' 'statusline' to show b:datasourced_status
}

-- What a list window's statusline shows: the buffer name, the state, the position.
M.STATUSLINE = "%<%f  %{get(b:, 'datasourced_status', '')}%=%l/%L "

local connections = {} -- command line (joined) -> Connection
local views = {} -- buffer number -> ListView

local function notify(message, level)
  vim.notify('datasourced: ' .. message, level or vim.log.levels.ERROR)
end

local function as_cmd(cmd)
  return type(cmd) == 'string' and { cmd } or cmd
end

--- setup({cmd = {...}, statusline = bool, placeholders = {...}}): every key optional.
function M.setup(opts)
  opts = opts or {}
  if opts.cmd ~= nil then
    config.cmd = as_cmd(opts.cmd)
  end
  if opts.statusline ~= nil then
    config.statusline = opts.statusline
  end
  for name, text in pairs(opts.placeholders or {}) do
    render.texts[name] = text
  end
end

-- Connections ---------------------------------------------------------------------------

local function views_of(conn)
  local found = {}
  for _, view in pairs(views) do
    if view.conn == conn then
      table.insert(found, view)
    end
  end
  return found
end

--- Routes a notification to the lists of its source. Failures are said once per source,
--- however many lists show it.
local function on_notification(conn, method, params)
  local kind = type(method) == 'string' and method:match('^dataSource/(.+)$')
  if not kind or type(params) ~= 'table' then
    return
  end
  local shown = false
  for _, view in ipairs(views_of(conn)) do
    if view.source == params.source then
      shown = true
      Connection.guarded(method .. ' on ' .. view.source, view.on_event, view, kind, params)
    end
  end
  if shown and kind == 'failedWithError' then
    local failure = params.error or {}
    -- A cancelled load is what the user (or a newer fetchData) asked for: a warning.
    local level = failure.kind == 'cancelled' and vim.log.levels.WARN or vim.log.levels.ERROR
    notify(params.source .. ': ' .. render.error_text(failure), level)
  end
end

local function on_exit(conn, code, signal, expected)
  for id, c in pairs(connections) do
    if c == conn then
      connections[id] = nil
    end
  end
  local affected = views_of(conn)
  for _, view in ipairs(affected) do
    view:set_status('daemon exited')
  end
  if not expected then
    notify(string.format('the daemon exited (status %s, signal %s); :DatasourcedRefresh restarts it',
      tostring(code), tostring(signal)), vim.log.levels.ERROR)
  end
end

--- The connection for a command line (default: setup's cmd), started on first use.
--- Returns nil after saying why when the daemon cannot start.
function M.connection(cmd)
  cmd = as_cmd(cmd) or config.cmd
  local id = table.concat(cmd, '\0')
  local conn = connections[id]
  if conn and not conn.exited and not conn.stopping then
    return conn
  end
  local started, problem
  started, problem = Connection.start(cmd, {
    notification = function(method, params)
      on_notification(started, method, params)
    end,
    on_exit = function(code, signal, expected)
      on_exit(started, code, signal, expected)
    end,
  })
  if not started then
    notify(problem)
    return nil
  end
  connections[id] = started
  return started
end

-- Opening a list --------------------------------------------------------------------------

-- Members of a one-source spec that are the plugin's, not createSource parameters.
local SPEC_KEYS = { format = true, title = true, show = true, sources = true, cmd = true }

--- The sources to create (children first), the one to show, and the options of a spec.
local function normalize(spec)
  if type(spec) ~= 'table' then
    return nil, 'open() takes a table: createSource params, or {sources = {...}, show = NAME}'
  end
  local sources
  if spec.sources ~= nil then
    if type(spec.sources) ~= 'table' or #spec.sources == 0 then
      return nil, 'sources must be a non-empty list of createSource params'
    end
    sources = spec.sources
  elseif spec.name ~= nil or spec.kind ~= nil then
    local params = {}
    for k, v in pairs(spec) do
      if not SPEC_KEYS[k] then
        params[k] = v
      end
    end
    sources = { params }
  else
    return nil, 'open() takes createSource params ({name, kind, ...}) or {sources = {...}, show = NAME}'
  end
  for i, params in ipairs(sources) do
    if type(params) ~= 'table' or type(params.name) ~= 'string' or params.name == '' then
      return nil, string.format('sources[%d] needs a name', i)
    end
  end
  if spec.format ~= nil and type(spec.format) ~= 'function' then
    return nil, 'format must be a function(object) -> string'
  end
  local show = spec.show or sources[#sources].name
  return {
    sources = sources,
    show = show,
    format = spec.format,
    title = spec.title or show,
    cmd = as_cmd(spec.cmd),
  }
end

--- Creates the view's sources that the daemon lacks, then reads and loads the list.
--- Also used to start again after the daemon exited.
local function start_view(view)
  local conn = M.connection(view.cmd)
  if not conn then
    view:set_status('error: the daemon did not start')
    return
  end
  view:attach(conn)
  local function load()
    -- Read the list as it is, then load it: every change of the load comes as a
    -- didChange after the read, and applies to what it read.
    view:reload(function()
      view:send('fetchData')
    end)
  end
  conn:request('listSources', nil, function(err, existing)
    if err then
      view:set_status('error: ' .. Connection.describe_error(err))
      return view:report_rpc_error('listSources', err)
    end
    local have = {}
    for _, s in ipairs(existing or {}) do
      have[s.name] = true
    end
    local missing = vim.tbl_filter(function(params)
      return not have[params.name]
    end, view.create)
    if #missing == 0 then
      return load()
    end
    local answers, failed = 0, false
    for _, params in ipairs(missing) do
      conn:request('createSource', params, function(create_err)
        answers = answers + 1
        if create_err and not failed then
          -- The first refusal is the one to read (later ones usually follow from it).
          failed = true
          view.setup_failed = true
          view:set_status('error: ' .. Connection.describe_error(create_err))
          notify(string.format('createSource %q: %s', params.name, Connection.describe_error(create_err)))
        end
        if answers == #missing and not failed then
          view.setup_failed = false
          load()
        end
      end)
    end
  end)
end

--- Opens a list buffer in the current window. `spec`: createSource params (plus the
--- options below), or { sources = { params, ... } (children first), show = NAME }, with
--- options format(obj) -> string, title, cmd. opts.cmd overrides the daemon's command
--- line for this list. Sources the daemon already has are reused. Returns the buffer.
function M.open(spec, opts)
  local normalized, problem = normalize(spec)
  if not normalized then
    notify(problem)
    return nil
  end
  local view = ListView.new({ source = normalized.show, format = normalized.format, title = normalized.title })
  view.create = normalized.sources
  view.cmd = as_cmd((opts or {}).cmd) or normalized.cmd or config.cmd
  views[view.buf] = view

  local group = vim.api.nvim_create_augroup('datasourced_list_' .. view.buf, { clear = true })
  vim.api.nvim_create_autocmd('BufWinEnter', {
    group = group,
    buffer = view.buf,
    callback = function()
      if config.statusline then
        vim.opt_local.statusline = M.STATUSLINE
      end
    end,
  })
  vim.api.nvim_create_autocmd('CursorMoved', {
    group = group,
    buffer = view.buf,
    callback = function()
      -- The user reaching the last line shows its row: that is what loads the next page.
      -- Only a move onto it counts. CursorMoved also fires after our own edits (lines
      -- deleted and inserted at the cursor), and a failed page's error row must not ask
      -- for the page again by itself, over and over; view:note_cursors() records where
      -- our edits leave the cursor, so those are not moves.
      local win = vim.api.nvim_get_current_win()
      local line = vim.api.nvim_win_get_cursor(win)[1]
      local before = view.cursor_lines[win]
      view.cursor_lines[win] = line
      if line == view.line_count and line ~= before then
        view:will_display(line)
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = view.buf,
    callback = function()
      views[view.buf] = nil
      pcall(vim.api.nvim_del_augroup_by_id, group)
      -- The daemon's last list is gone: let it go too.
      if view.conn and #views_of(view.conn) == 0 then
        view.conn:stop()
      end
    end,
  })

  -- The current window, unless its buffer cannot be left (modified, 'nohidden'): a split.
  if not pcall(vim.api.nvim_set_current_buf, view.buf) then
    vim.cmd('sbuffer ' .. view.buf)
  end
  start_view(view)
  return view.buf
end

--- The spec of a file: JSON (an object), or Lua (a chunk returning the spec table, which
--- may hold a format function).
local function read_spec(path)
  path = vim.fn.expand(path)
  if path:match('%.lua$') then
    local ok, spec = pcall(dofile, path)
    if not ok then
      return nil, 'cannot load ' .. path .. ': ' .. tostring(spec)
    end
    return spec
  end
  local ok, text = pcall(vim.fn.readfile, path)
  if not ok or vim.fn.filereadable(path) ~= 1 then
    return nil, 'cannot read ' .. path
  end
  local decoded, spec = pcall(vim.fn.json_decode, table.concat(text, '\n'))
  if not decoded or type(spec) ~= 'table' then
    return nil, path .. ' is not a JSON object: ' .. tostring(spec)
  end
  return spec
end

--- Opens a list from a spec file (see read_spec). Returns the buffer, or nil.
function M.open_file(path)
  local spec, problem = read_spec(path)
  if not spec then
    notify(problem)
    return nil
  end
  return M.open(spec)
end

-- Commands ------------------------------------------------------------------------------

local function view_for(buf)
  local view = views[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
  if not view then
    notify('this buffer is not a datasourced list')
  end
  return view
end

--- Whether the view's daemon is gone (or its sources were never made): then the only
--- way forward is to start the list again.
local function needs_start(view)
  return not view.conn or view.conn.exited or view.conn.stopping or view.setup_failed
end

--- fetchData on the buffer's source: loads it again (a paginated source from page one).
--- Starts the daemon again if it exited.
function M.refresh(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  if needs_start(view) then
    return start_view(view)
  end
  view:send('fetchData')
end

--- cancelFetch on the buffer's source.
function M.cancel(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  if needs_start(view) then
    return notify(view.source .. ': the daemon is not running', vim.log.levels.WARN)
  end
  view:send('cancelFetch', nil, function(result)
    if not result.cancelled then
      notify(view.source .. ' is not loading: nothing to cancel', vim.log.levels.INFO)
    end
  end)
end

--- After a failed (or cancelled) load: when every failed source is paginated and has
--- rows, the page that failed is asked for again (fetchNextPage), keeping the rows;
--- otherwise the list loads again (fetchData).
function M.retry(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  if needs_start(view) then
    return start_view(view)
  end
  if not view.failure then
    return notify(view.source .. ': nothing failed, nothing to retry (:DatasourcedRefresh loads again)', vim.log.levels.INFO)
  end
  local targets = view.failure.sources
  local descriptions, answers = {}, 0
  for i, name in ipairs(targets) do
    view.conn:request('describeSource', { source = name }, function(err, description)
      answers = answers + 1
      descriptions[i] = not err and description or nil
      if answers < #targets then
        return
      end
      local next_page = true
      for n = 1, #targets do
        local d = descriptions[n]
        next_page = next_page and d ~= nil and d.kind == 'paginated' and (d.numberOfObjects or 0) > 0
          and d.hasMorePages == true
      end
      if not next_page then
        return M.refresh(view.buf)
      end
      for _, target in ipairs(targets) do
        view:send('fetchNextPage', { source = target }, function(result)
          if not result.started then
            notify(target .. ': ' .. tostring(result.reason or 'nothing to retry'), vim.log.levels.INFO)
          end
        end)
      end
    end)
  end
end

--- Reads every row of the buffer's list again and redraws it.
function M.reload(buf)
  local view = view_for(buf)
  if view and not needs_start(view) then
    view:reload()
  end
end

--- The list of a buffer (default: the current one), or nil. For statuslines and tests.
function M.view(buf)
  return views[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
end

--- The state of a buffer's list for a statusline: "loading", "loaded N", "error: ...",
--- "cancelled", "daemon exited"; "" outside lists.
function M.status(buf)
  local view = M.view(buf)
  return view and view.status or ''
end

--- Stops every daemon (shutdown, then exit), waiting for them: called on VimLeavePre.
function M.stop()
  for id, conn in pairs(connections) do
    connections[id] = nil
    conn:stop({ wait = true, timeout_ms = 1000 })
  end
end

return M
