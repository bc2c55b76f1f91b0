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

local islist = vim.islist or vim.tbl_islist

-- What each action does, for keymaps, :Datasourced and the g? help.
M.ACTIONS = {
  select = 'the row: on_select(object); an error row retries, a loading or unloaded row loads',
  refresh = 'load again (a paginated source from page one; a server that answers 304 keeps the rows)',
  retry = 'after an error: the failed page again (above or below the rows), or the whole load',
  cancel = 'cancel the load in flight',
  reload = 'read every row again and redraw',
  close = 'close the list',
  filter = 'filter the rows as you type (<CR> keeps the filter, <Esc> clears it)',
  action = 'one of the source\'s actions on the row (edit, delete...): its values are asked for',
  ['cancel-action'] = 'cancel the row\'s actions the server has not taken yet (queued or waiting): each is undone',
  help = 'show these keys',
}

M.DEFAULT_KEYMAPS = {
  ['<CR>'] = 'select',
  r = 'refresh',
  R = 'retry',
  ['<C-c>'] = 'cancel',
  q = 'close',
  ['/'] = 'filter',
  ['g?'] = 'help',
}

local config = {
  cmd = { 'datasourced' },
  record = nil, -- a file: the daemon records its session there (--record FILE)
  statusline = true, -- set the list windows' 'statusline' to show b:datasourced_status
  keymaps = vim.deepcopy(M.DEFAULT_KEYMAPS),
  on_select = nil, -- function(object, ctx); nil: M.preview
  variables = {}, -- NAME -> value, for ${NAME} in list specs
}

-- What a list window's statusline shows: the buffer name, the state, the position. A
-- status too long for the window (a long error) is cut, never the list's name.
M.STATUSLINE = "%f  %<%{get(b:, 'datasourced_status', '')}%= %l/%L "

local connections = {} -- command line (joined) -> Connection
local drop_filter -- defined with the filters, used when a list goes
local views = {} -- buffer number -> ListView

local function notify(message, level)
  vim.notify('datasourced: ' .. message, level or vim.log.levels.ERROR)
end

--- How long a message after "datasourced: " may be without a Press-ENTER prompt.
function M.message_room()
  local space = tonumber(vim.v.echospace) or (vim.o.columns - 12)
  return math.max(space - #'datasourced: ' - 1, 20)
end

--- `text` cut to `width` characters (an ellipsis marks the cut).
function M.fit(text, width)
  if vim.fn.strchars(text) <= width then
    return text
  end
  return vim.fn.strcharpart(text, 0, width - 1) .. '…'
end

local function as_cmd(cmd)
  return type(cmd) == 'string' and { cmd } or cmd
end

--- The key of the retry action, which the status names where a page failed (the first
--- in sorted order if several; nil if none).
local function note_retry_key()
  local keys = {}
  for lhs, action in pairs(config.keymaps) do
    if action == 'retry' then
      table.insert(keys, lhs)
    end
  end
  table.sort(keys)
  ListView.retry_key = keys[1]
end
note_retry_key()

--- setup({cmd, record, statusline, keymaps, on_select, placeholders}): every key optional.
--- keymaps: { lhs = action name | function(buf) | false } merged over the defaults;
--- keymaps = false turns the defaults off.
function M.setup(opts)
  opts = opts or {}
  if opts.cmd ~= nil then
    config.cmd = as_cmd(opts.cmd)
  end
  if opts.record ~= nil then
    config.record = opts.record ~= false and opts.record ~= '' and vim.fn.expand(opts.record) or nil
  end
  if opts.statusline ~= nil then
    config.statusline = opts.statusline
  end
  if opts.keymaps == false then
    config.keymaps = {}
  elseif type(opts.keymaps) == 'table' then
    config.keymaps = vim.tbl_extend('force', vim.deepcopy(M.DEFAULT_KEYMAPS), opts.keymaps)
  end
  note_retry_key()
  if opts.on_select ~= nil then
    config.on_select = opts.on_select
  end
  for name, text in pairs(opts.placeholders or {}) do
    render.texts[name] = text
  end
  if opts.variables ~= nil then
    config.variables = vim.deepcopy(opts.variables)
  end
end

--- The daemon's whole command line: `cmd`, plus `--record FILE` when `record` is set.
function M.command_line(cmd)
  local line = vim.list_extend({}, as_cmd(cmd) or config.cmd)
  if config.record then
    vim.list_extend(line, { '--record', config.record })
  end
  return line
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

-- Credentials ------------------------------------------------------------------------------
-- A header value the daemon reads from its environment or a file ({"env": "GITHUB_TOKEN"},
-- {"file": "~/.config/x/token"}) goes only to the origins the user allowed it for. A shown
-- list whose load failed for want of that (kind credentialNotAllowed) asks the person,
-- once however many lists wait on the same credential and origin; a yes is recorded by
-- the daemon (allowCredential) and the lists waiting load again (fetchData).

--- The credentials a failure lacked, its children's included (a multi source's
--- failures), each once: { kind = 'env' | 'file', name, origin, key }.
function M.credential_requests(failure)
  local found, seen = {}, {}
  local function visit(f)
    if type(f) ~= 'table' then
      return
    end
    if f.kind == 'credentialNotAllowed' and type(f.credential) == 'table' and type(f.origin) == 'string' then
      local kind = (type(f.credential.env) == 'string' and 'env') or (type(f.credential.file) == 'string' and 'file')
      if kind then
        local key = kind .. '\0' .. f.credential[kind] .. '\0' .. f.origin
        if not seen[key] then
          seen[key] = true
          table.insert(found, { kind = kind, name = f.credential[kind], origin = f.origin, key = key })
        end
      end
    end
    if type(f.failures) == 'table' then
      for _, child in ipairs(f.failures) do
        visit(type(child) == 'table' and child.error or nil)
      end
    end
  end
  visit(failure)
  return found
end

--- "the environment variable GITHUB_TOKEN" or "the file ~/.config/x/token".
local function credential_what(request)
  return (request.kind == 'env' and 'the environment variable ' or 'the file ') .. request.name
end

--- The question: "Allow the daemon to send the environment variable GITHUB_TOKEN to
--- https://api.github.com?"
function M.credential_question(request)
  return string.format('Allow the daemon to send %s to %s?', credential_what(request), request.origin)
end

--- The key that loads a list again (what asks again after a no).
local function refresh_key()
  local keys = {}
  for lhs, action in pairs(config.keymaps) do
    if action == 'refresh' then
      table.insert(keys, lhs)
    end
  end
  table.sort(keys)
  return keys[1] or ':Datasourced refresh'
end

--- Asks about one credential (scheduled: not inside the notification's dispatch); a yes
--- is sent to the daemon, then every source waiting on it loads again.
local function ask_credential(conn, entry)
  vim.schedule(function()
    if conn.exited or conn.stopping then
      return
    end
    local request = entry.request
    -- confirm() on both Neovims: a yes/no question on the command line, No by default (and
    -- the answer, 2, without a UI to ask on).
    local answer = vim.fn.confirm(M.credential_question(request), '&Yes\n&No', 2, 'Question')
    if answer ~= 1 then
      entry.state, entry.sources = 'declined', {}
      return notify(M.fit(string.format('%s not sent to %s: not allowed (%s asks again)',
        credential_what(request), request.origin, refresh_key()), M.message_room()), vim.log.levels.WARN)
    end
    entry.state = 'allowing'
    conn:request('allowCredential', { [request.kind] = request.name, origin = request.origin }, function(err, result)
      if err then
        conn.credentials[request.key] = nil
        return notify('allowCredential: ' .. Connection.describe_error(err))
      end
      entry.state = 'allowed'
      result = type(result) == 'table' and result or {}
      notify(M.fit(string.format('allowed %s to be sent to %s (recorded in %s)', credential_what(request),
        tostring(result.origin or request.origin), tostring(result.path)), M.message_room()), vim.log.levels.INFO)
      local waiting = vim.tbl_keys(entry.sources)
      table.sort(waiting)
      entry.sources = {}
      for _, source in ipairs(waiting) do
        conn:request('fetchData', { source = source }, function(fetch_err)
          if fetch_err then
            notify(source .. ': ' .. Connection.describe_error(fetch_err))
          end
        end)
      end
    end)
  end)
end

--- For a shown list's failure: asks about each credential it lacked that nobody was asked
--- about yet, and has `source` load again after a yes. True while a question is open or
--- a yes is being recorded for all of them (the failure is then not said); false when the
--- person said no (until a refresh), or the credential was allowed and the load still
--- failed: the failure is said as any other.
local function ask_credentials(conn, source, failure)
  local requests = M.credential_requests(failure)
  if #requests == 0 then
    return false
  end
  conn.credentials = conn.credentials or {}
  local waiting = true
  for _, request in ipairs(requests) do
    local entry = conn.credentials[request.key]
    if entry == nil then
      entry = { state = 'asking', request = request, sources = {} }
      conn.credentials[request.key] = entry
      ask_credential(conn, entry)
    end
    if entry.state == 'asking' or entry.state == 'allowing' then
      entry.sources[source] = true
    else
      waiting = false
      if entry.state == 'allowed' then
        -- Allowed, and still refused: said, not asked again at once (no loop); the next
        -- failure asks again.
        conn.credentials[request.key] = nil
      end
    end
  end
  return waiting
end

--- Forgets the noes said on this connection: the next failure for want of a credential
--- asks again (refresh and retry, which the person asks for).
local function forget_declined(conn)
  for key, entry in pairs(conn and conn.credentials or {}) do
    if entry.state == 'declined' then
      conn.credentials[key] = nil
    end
  end
end

local settle_mutation -- defined with the actions

--- Routes a notification to the lists of its source; the freshness of a source also to
--- the lists made from it (a sectioned view over a cached paginated source). Failures are
--- said once per source, however many lists show it; an action's settling, once per
--- mutation (settle_mutation).
local function on_notification(conn, method, params)
  local kind = type(method) == 'string' and method:match('^dataSource/(.+)$')
  if not kind or type(params) ~= 'table' then
    return
  end
  if kind == 'didSettleMutation' then
    return settle_mutation(conn, params)
  end
  local shown = false
  for _, view in ipairs(views_of(conn)) do
    if view.source == params.source or (kind == 'didChangeFreshness' and view.under[params.source]) then
      shown = shown or view.source == params.source
      Connection.guarded(method .. ' on ' .. view.source, view.on_event, view, kind, params)
    end
  end
  if shown and kind == 'failedWithError' and ask_credentials(conn, params.source, params.error) then
    return -- the person is asked; their no says the failure
  end
  if shown and kind == 'failedWithError' then
    local failure = params.error or {}
    -- A cancelled load is what the user (or a newer fetchData) asked for: a warning.
    local level = failure.kind == 'cancelled' and vim.log.levels.WARN or vim.log.levels.ERROR
    -- One line that fits the command line (a longer one stops at a Press-ENTER prompt):
    -- what went wrong first, then the URL if there is room. The list's error row and
    -- status keep the whole text.
    local text = params.source .. ': ' .. render.error_text(failure, { short = true })
    local url = failure.finalURL or failure.url
    local room = M.message_room()
    if type(url) == 'string' and #text + #url + 3 <= room then
      text = text .. ' (' .. url .. ')'
    end
    notify(M.fit(text, room), level)
  end
end

local function on_exit(conn, code, signal, expected)
  for id, c in pairs(connections) do
    if c == conn then
      connections[id] = nil
    end
  end
  for _, view in ipairs(views_of(conn)) do
    view:set_status('daemon exited')
  end
  if expected then
    return
  end
  if code == 64 then
    -- EX_USAGE: the daemon's argument parser refused the command line (its words went
    -- to its log).
    notify(string.format('the daemon refused its command line (status 64): %s; check cmd and record in setup(), '
      .. 'and :Datasourced log', table.concat(conn.cmd, ' ')), vim.log.levels.ERROR)
  else
    notify(string.format('the daemon exited (status %s, signal %s); :Datasourced log shows why, '
      .. ':Datasourced refresh restarts it', tostring(code), tostring(signal)), vim.log.levels.ERROR)
  end
end

--- The connection for a command line (default: setup's cmd), started on first use.
--- Returns nil and why, after saying it, when the daemon cannot start.
function M.connection(cmd)
  local line = M.command_line(cmd)
  local id = table.concat(line, '\0')
  local conn = connections[id]
  if conn and not conn.exited and not conn.stopping then
    return conn
  end
  local started, problem
  started, problem = Connection.start(line, {
    log_file = vim.fn.tempname() .. '-datasourced.log',
    notification = function(method, params)
      on_notification(started, method, params)
    end,
    on_exit = function(code, signal, expected)
      on_exit(started, code, signal, expected)
    end,
  })
  if not started then
    notify(problem)
    return nil, problem
  end
  started.created = {} -- source name -> the createSource params we created it with
  started.credentials = {} -- credential key -> { state, request, sources }: what the person is asked
  connections[id] = started
  return started
end

-- Opening a list --------------------------------------------------------------------------

-- Members of a one-source spec that are the plugin's, not createSource parameters.
local SPEC_KEYS = { format = true, columns = true, title = true, show = true, sources = true, cmd = true, search = true }

--- `value` with `${NAME}` replaced in every string inside it (Clients/specs: the list spec
--- shared by every client); `$$` is not special. An unknown NAME is an error naming it and
--- `origin` (the file). Functions (a Lua spec's format) are kept as they are.
function M.substitute(value, variables, origin, where)
  if type(value) == 'string' then
    local missing
    local text = value:gsub('%${([%a_][%w_]*)}', function(name)
      local found = variables[name]
      if found == nil then
        missing = missing or name
        return nil
      end
      return tostring(found)
    end)
    if missing then
      error({ spec_error = string.format('%s: %s uses ${%s}, which has no value: set it with setup{ variables = { %s = ... } } or open()\'s variables',
        origin, where or 'a value', missing, missing) }, 0)
    end
    return text
  elseif type(value) == 'table' then
    local result = {}
    for k, v in pairs(value) do
      local inner = type(k) == 'number' and string.format('%s[%d]', where or '', k - 1)
        or (where and (where .. '.' .. tostring(k)) or tostring(k))
      result[k] = M.substitute(v, variables, origin, inner)
    end
    -- An empty JSON object (a GraphQL source's "variables": {}) stays one: its mark is
    -- vim.empty_dict()'s metatable, else it would be sent as [].
    return setmetatable(result, getmetatable(value))
  end
  return value
end

local function check_columns(columns)
  if type(columns) ~= 'table' or #columns == 0 then
    return 'columns must be a non-empty list of keys or {key = PATH, width = N, title = TEXT}'
  end
  for i, column in ipairs(columns) do
    if type(column) == 'table' then
      local key, width = column.key or column[1], column.width or column[2]
      if type(key) ~= 'string' or key == '' then
        return string.format('columns[%d] needs a key (a key path)', i - 1)
      end
      if width ~= nil and (type(width) ~= 'number' or width < 1 or width % 1 ~= 0) then
        return string.format('columns[%d].width must be a whole number of at least 1, got %s', i - 1, vim.inspect(width))
      end
    elseif type(column) ~= 'string' or column == '' then
      return string.format('columns[%d] must be a key or {key = PATH, width = N}, got %s', i - 1, vim.inspect(column))
    end
  end
end

local function check_search(search)
  if type(search) ~= 'table' or islist(search) and next(search) ~= nil then
    return 'search must be an object: {parameter, variable, source, debounceMilliseconds, keyPaths}, got ' .. vim.inspect(search)
  end
  for k in pairs(search) do
    if not ({ parameter = true, variable = true, source = true, debounceMilliseconds = true, keyPaths = true })[k] then
      return string.format('search.%s is not a member of search (parameter, variable, source, debounceMilliseconds, keyPaths)', tostring(k))
    end
  end
  for _, k in ipairs({ 'parameter', 'variable', 'source' }) do
    if search[k] ~= nil and (type(search[k]) ~= 'string' or search[k] == '') then
      return string.format('search.%s must be a non-empty string, got %s', k, vim.inspect(search[k]))
    end
  end
  if search.parameter ~= nil and search.variable ~= nil then
    return 'search has both parameter and variable: a search sets a query parameter, or a GraphQL source\'s variable'
  end
  local ms = search.debounceMilliseconds
  if ms ~= nil and (type(ms) ~= 'number' or ms % 1 ~= 0 or ms < 0 or ms > 10000) then
    return 'search.debounceMilliseconds must be a whole number in 0...10000, got ' .. vim.inspect(ms)
  end
  if search.keyPaths ~= nil then
    if type(search.keyPaths) ~= 'table' or #search.keyPaths == 0 then
      return 'search.keyPaths must be a non-empty list of key paths, got ' .. vim.inspect(search.keyPaths)
    end
    for i, path in ipairs(search.keyPaths) do
      if type(path) ~= 'string' or path == '' then
        return string.format('search.keyPaths[%d] must be a key path, got %s', i - 1, vim.inspect(path))
      end
    end
  end
end

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
      return nil, string.format('sources[%d] needs a name', i - 1)
    end
  end
  if spec.format ~= nil and type(spec.format) ~= 'function' then
    return nil, 'format must be a function(object) -> string'
  end
  if spec.columns ~= nil then
    local problem = check_columns(spec.columns)
    if problem then
      return nil, problem
    end
  end
  if spec.search ~= nil then
    local problem = check_search(spec.search)
    if problem then
      return nil, problem
    end
  end
  -- show: one source name, or a list of them of which a list buffer shows the first (the
  -- CLI prints each); a string is a name, never its characters.
  local show = spec.show
  if type(show) == 'table' then
    show = show[1]
  end
  if show ~= nil and (type(show) ~= 'string' or show == '') then
    return nil, 'show must be a source name or a non-empty list of them, got ' .. vim.inspect(spec.show)
  end
  show = show or sources[#sources].name
  if spec.title ~= nil and (type(spec.title) ~= 'string' or spec.title == '') then
    return nil, 'title must be a non-empty string, got ' .. vim.inspect(spec.title)
  end
  return {
    sources = sources,
    show = show,
    format = spec.format or (spec.columns and render.columns_format(spec.columns)) or nil,
    title = spec.title or show,
    cmd = as_cmd(spec.cmd),
    columns = spec.columns,
    search = spec.search,
  }
end

--- Which sources under `name` need a load: remote and paginated sources that never began
--- one on this daemon, or whose last load failed or was cancelled and none is under way
--- (a list opened on a source already loaded shows what it has, pages included; one
--- that failed loads again, to show its error or its rows). Walks the tree with describeSource; done(unloaded, remote, descriptions)
--- gets the names of the sources that need a load, the number of remote and paginated
--- ones, and every source's description by name.
local function sources_to_load(conn, name, done)
  local seen, unloaded, remote, outstanding, descriptions = {}, {}, 0, 0, {}
  local function visit(source)
    if seen[source] then
      return
    end
    seen[source] = true
    outstanding = outstanding + 1
    conn:request('describeSource', { source = source }, function(err, description)
      if not err and type(description) == 'table' then
        descriptions[source] = description
        if description.kind == 'remote' or description.kind == 'paginated' then
          remote = remote + 1
          local settled = conn.load_cycles[source]
            and (conn.load_outcomes[source] == 'finished' or description.isFetching)
          if not settled then
            table.insert(unloaded, source)
          end
        end
        local children = description.children or description.sources
          or (description.source and { description.source }) or {}
        for _, child in ipairs(children) do
          visit(child)
        end
      end
      outstanding = outstanding - 1
      if outstanding == 0 then
        done(unloaded, remote, descriptions)
      end
    end)
  end
  visit(name)
end

--- Reads the list, then loads what was never loaded: the whole list when nothing under
--- it ever was (one cycle), else just the sources that were not (the others keep their
--- rows and pages).
local function read_and_load(view)
  local conn = view.conn
  view:reload(function(description)
    sources_to_load(conn, view.source, function(unloaded, remote, descriptions)
      if view.detached or view.conn ~= conn then
        return
      end
      view:adopt_sources(descriptions)
      if #unloaded == 0 then
        return view:adopt_state(description)
      end
      if #unloaded == remote then
        return view:send('fetchData')
      end
      for _, name in ipairs(unloaded) do
        view:send('fetchData', { source = name })
      end
    end)
  end)
end

--- Creates the view's sources that the daemon lacks, then reads and loads the list.
--- Also used to start again after the daemon exited.
local function start_view(view)
  local conn, problem = M.connection(view.cmd)
  if not conn then
    view:set_status('error: the daemon did not start')
    -- In the list too: the status line has no room for the way out (setup's cmd), and a
    -- message scrolls away.
    view:edit(0, -1, { { '  ✗ ' .. problem, 'DatasourcedError' } })
    return
  end
  if view.filter then
    -- A new daemon has no filtered source: the list shows its own source again.
    view.source, view.filter = view.filter.base, nil
  end
  view:attach(conn)
  conn:request('listSources', nil, function(err, existing)
    if view.detached or view.conn ~= conn then
      return
    end
    if err then
      view:set_status('error: ' .. Connection.describe_error(err))
      return view:report_rpc_error('listSources', err)
    end
    local have = {}
    for _, s in ipairs(existing or {}) do
      have[s.name] = true
    end
    local missing = {}
    for _, params in ipairs(view.create) do
      if not have[params.name] then
        table.insert(missing, params)
      elseif conn.created[params.name] and not vim.deep_equal(conn.created[params.name], params) then
        notify(string.format('%s: the daemon already has this source, made with other parameters; '
          .. 'the list shows that one (close its lists and restart the daemon to change it)', params.name),
          vim.log.levels.WARN)
      end
    end
    if #missing == 0 then
      view.setup_failed = false
      return read_and_load(view)
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
          notify(string.format('%s: the daemon refused the source: %s', params.name, Connection.describe_error(create_err)))
        elseif not create_err then
          conn.created[params.name] = params
        end
        if answers == #missing and not failed then
          view.setup_failed = false
          read_and_load(view)
        end
      end)
    end
  end)
end

-- Filters and searches ---------------------------------------------------------------------

--- Destroys the filtered source a list made (its `/`), if its daemon still runs.
drop_filter = function(view)
  local filter = view.filter
  if filter and filter.ready and view.conn and not view.conn.exited and not view.conn.stopping then
    view.conn:request('destroySource', { name = filter.name }, function() end)
  end
end

local function set_keymaps(buf)
  for lhs, action in pairs(config.keymaps) do
    if action then
      local rhs, desc = action, 'datasourced: ' .. tostring(action)
      if type(action) == 'string' then
        if not M.ACTIONS[action] then
          notify(string.format('keymaps[%q]: no action %q (one of %s)', lhs, action,
            table.concat(vim.tbl_keys(M.ACTIONS), ', ')))
          rhs = nil
        else
          desc = 'datasourced: ' .. M.ACTIONS[action]
          rhs = function()
            M.action(action, buf)
          end
        end
      elseif type(action) == 'function' then
        rhs = function()
          action(buf)
        end
      end
      if rhs then
        vim.keymap.set('n', lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
      end
    end
  end
end

--- The autocommands of a list buffer; they find its view through `views`, so a view
--- started anew in the same buffer needs none of its own.
local function watch_buffer(buf)
  local group = vim.api.nvim_create_augroup('datasourced_list_' .. buf, { clear = true })
  vim.api.nvim_create_autocmd('BufWinEnter', {
    group = group,
    buffer = buf,
    callback = function()
      -- One line per row: a long row is cut at the window's edge, not folded onto
      -- screen lines that look like rows of their own.
      vim.opt_local.wrap = false
      if config.statusline then
        vim.opt_local.statusline = M.STATUSLINE
      end
    end,
  })
  vim.api.nvim_create_autocmd('CursorMoved', {
    group = group,
    buffer = buf,
    callback = function()
      local view = views[buf]
      if not view then
        return
      end
      -- The user reaching the last line shows its row: that is what loads the next page.
      -- Only a move onto it counts. CursorMoved also fires after our own edits (lines
      -- deleted and inserted at the cursor), and a failed page's error row must not ask
      -- for the page again by itself, over and over; view:note_cursors() records where
      -- our edits leave the cursor, so those are not moves.
      local win = vim.api.nvim_get_current_win()
      view:pay_for_move(win) -- the lines of a long list not written yet, before the move counts
      local line = vim.api.nvim_win_get_cursor(win)[1]
      local before = view.cursor_lines[win]
      view.cursor_lines[win] = line
      if before == nil or line == before then
        return -- the list's first showing in this window, or not a move
      end
      view.user_moved[win] = true
      if view.lazy then
        -- Counted placeholders: any row may be unloaded, and the rows on screen are read
        -- as they show; both wait until the cursor rests.
        return view:schedule_display()
      end
      if line == view.line_count then
        view:will_display(line)
      elseif view:can_prepend() and view:is_first_row(line) then
        view:will_display(line) -- the page before (protocol 1.5)
      end
    end,
  })
  vim.api.nvim_create_autocmd('WinScrolled', {
    group = group,
    buffer = buf,
    callback = function()
      local view = views[buf]
      if view then
        view:pay_for_move(vim.api.nvim_get_current_win())
      end
      if view and view.lazy then
        view:schedule_display() -- rows scrolled into view are read
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = buf,
    callback = function()
      local view = views[buf]
      views[buf] = nil
      if view then
        view:close()
      end
      pcall(vim.api.nvim_del_augroup_by_id, group)
      if view then
        drop_filter(view)
      end
      -- The daemon's last list is gone: let it go too.
      if view and view.conn and #views_of(view.conn) == 0 then
        view.conn:stop()
      end
    end,
  })
end

--- The list buffer named `datasourced://{title}`, if one is open.
local function list_named(title)
  local buf = vim.fn.bufnr('^' .. vim.fn.escape('datasourced://' .. title, '\\[]*~.?{}') .. '$')
  return buf > 0 and views[buf] and buf or nil
end

--- Opens a list buffer in the current window. `spec`: createSource params (plus the
--- options below), or { sources = { params, ... } (children first), show = NAME }, with
--- options format(obj) -> string, columns, title, cmd: the list spec of Clients/specs
--- (Protocol/listspec.schema.json), whose `show` may be a list (the first is shown).
--- `${NAME}` in its strings is replaced from setup's variables and opts.variables.
--- opts.cmd overrides the daemon's command line for this list. Sources the daemon already has are reused. Opening a spec
--- whose title names an open list starts that list anew in its own buffer. Returns the
--- buffer.
function M.open(spec, opts)
  opts = opts or {}
  local variables = vim.tbl_extend('force', config.variables, opts.variables or {})
  local substituted, thrown = pcall(M.substitute, spec, variables, opts.origin or 'open()')
  if not substituted then
    notify(type(thrown) == 'table' and thrown.spec_error or tostring(thrown))
    return nil
  end
  local normalized, problem = normalize(thrown)
  if problem and opts.origin then
    problem = opts.origin .. ': ' .. problem
  end
  if not normalized then
    notify(problem)
    return nil
  end
  local reused = list_named(normalized.title)
  if reused then
    -- Reopening (say, after fixing a spec the daemon refused) replaces the old list.
    views[reused].detached = true
    views[reused]:close()
    drop_filter(views[reused])
  end
  local view = ListView.new({ source = normalized.show, format = normalized.format, title = normalized.title, buf = reused })
  view.create = normalized.sources
  view.columns, view.search = normalized.columns, normalized.search
  view.cmd = as_cmd(opts.cmd) or normalized.cmd or config.cmd
  views[view.buf] = view
  if not reused then
    watch_buffer(view.buf)
    set_keymaps(view.buf)
  end

  -- The current window, unless its buffer cannot be left (modified, 'nohidden'): a split.
  if vim.api.nvim_get_current_buf() ~= view.buf and not pcall(vim.api.nvim_set_current_buf, view.buf) then
    vim.cmd('sbuffer ' .. view.buf)
  end
  start_view(view)
  return view.buf
end

--- The spec of a file: JSON (an object: the list spec every client reads, Clients/specs),
--- or Lua (a chunk returning the spec table, which may hold a format function).
local function read_spec(path)
  path = vim.fn.expand(path)
  if path:match('%.toml$') then
    return nil, path .. ': the Neovim plugin reads no TOML; write the same list spec as JSON (Clients/specs/*.json)'
  end
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

--- Opens a list from a spec file (see read_spec); opts as open()'s. Returns the buffer,
--- or nil.
function M.open_file(path, opts)
  if path == nil or path == '' then
    notify('open needs a spec file (JSON or Lua)')
    return nil
  end
  local spec, problem = read_spec(path)
  if not spec then
    notify(problem)
    return nil
  end
  return M.open(spec, vim.tbl_extend('force', opts or {}, { origin = vim.fn.expand(path) }))
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

--- The buffer's view when its daemon is running; otherwise nil, after saying so when the
--- buffer has a list (for commands that only talk to a running daemon).
local function running_view(buf)
  local view = view_for(buf)
  if view and needs_start(view) then
    notify(view.source .. ': the daemon is not running', vim.log.levels.WARN)
    return nil
  end
  return view
end

--- The key paths a list's `/` matches over: the spec's search.keyPaths, else its
--- columns' keys, else the members the default format shows of the first object (its
--- string members).
function M.match_key_paths(view)
  if view.search and view.search.keyPaths then
    return vim.deepcopy(view.search.keyPaths)
  end
  local paths = {}
  for _, column in ipairs(view.columns or {}) do
    table.insert(paths, type(column) == 'table' and (column.key or column[1]) or column)
  end
  if #paths > 0 then
    return paths
  end
  for _, section in ipairs(view.sections) do
    for _, entry in ipairs(section.rows) do
      local value = entry.value
      if type(value) == 'table' and not render.is_placeholder(value) and not islist(value) then
        for k, v in pairs(value) do
          if type(v) == 'string' then
            table.insert(paths, k)
          end
        end
        table.sort(paths)
        if #paths > 0 then
          return paths
        end
      end
    end
  end
  return { view.identity_key or 'id' }
end

--- The rows a list's filter is to fill (protocol 1.10's `fill`): the height of the
--- tallest window showing the list (the current window's when none does), 1...10000.
--- While fewer rows match and the source has pages to come, the daemon loads them: a
--- query whose matches start on a later page shows a window of them, the cursor where
--- it was. nil for a daemon before 1.10, which takes no fill.
function M.filter_fill(view)
  if not (view.conn and view.conn:speaks(1, 10)) then
    return nil
  end
  local height = 0
  for _, win in ipairs(vim.fn.win_findbuf(view.buf)) do
    height = math.max(height, vim.api.nvim_win_get_height(win))
  end
  if height == 0 then
    height = vim.api.nvim_win_get_height(0)
  end
  return math.min(math.max(height, 1), 10000)
end

--- Sends the filter's query (setFilter with a match over its key paths, or none for an
--- empty query, and the window's height to fill), once the filtered source exists. The
--- daemon answers in order and sends the rows' change set before the answer, so the last
--- query sent is the one shown.
local function send_query(view)
  local filter = view.filter
  if not filter or not filter.ready or filter.sent == filter.query then
    return
  end
  filter.sent = filter.query
  local match = filter.query ~= '' and { query = filter.query, keyPaths = filter.key_paths } or vim.NIL
  view:send('setFilter', { source = filter.name, match = match, fill = M.filter_fill(view) }, function()
    view.matches_read = nil
    view:highlight_matches()
  end)
end

--- Makes the list show a filtered source over the source it shows (once per list): the
--- filter's rows are the list's from then on, paging included (the filtered source's
--- last row asks its child's). The filtered source is named after the list's buffer, so
--- two lists of one source filter apart.
local function ensure_filter(view)
  if view.filter then
    return view.filter
  end
  local filter = {
    name = string.format('%s/filter#%d', view.source, view.buf),
    base = view.source,
    query = '',
    sent = '',
    key_paths = M.match_key_paths(view),
    lazy = view.lazy, -- over counted placeholders: the filtered rows are read as they show
    ready = false,
  }
  view.filter = filter
  local conn = view.conn
  local params = { name = filter.name, kind = 'filtered', source = filter.base, fill = M.filter_fill(view) }
  conn:request('createSource', params, function(err)
    if view.filter ~= filter or view.conn ~= conn then
      return
    end
    if err then
      view.filter = nil
      return notify(string.format('%s: the daemon refused the filter: %s', filter.base, Connection.describe_error(err)))
    end
    filter.ready = true
    view.source = filter.name
    view.under[filter.name] = true
    view:reload(function()
      send_query(view)
    end)
  end)
  return filter
end

--- Filters the buffer's list by `query` (a fuzzy match over the list's shown key paths,
--- ranked by score, matched characters highlighted); '' shows every row again.
function M.set_filter(query, buf)
  local view = running_view(buf)
  if not view then
    return
  end
  local filter = view.filter
  if not filter then
    if query == '' then
      return -- nothing filtered, nothing to clear
    end
    filter = ensure_filter(view)
  end
  filter.query = query
  send_query(view)
end

--- A prompt at the command line whose text goes to `on_change` at each keystroke
--- (CmdlineChanged); returns the text entered, or nil for <Esc>.
-- No NUL in it: Neovim 0.7 passes such a string to input() as a Blob.
local CANCELLED = '\1datasourced-cancelled'
local function live_prompt(prompt, default, on_change)
  local group = vim.api.nvim_create_augroup('datasourced_prompt', { clear = true })
  vim.api.nvim_create_autocmd('CmdlineChanged', {
    group = group,
    pattern = '@', -- input()'s command line
    callback = function()
      Connection.guarded('the prompt', on_change, vim.fn.getcmdline())
    end,
  })
  local ok, text = pcall(vim.fn.input, { prompt = prompt, default = default, cancelreturn = CANCELLED })
  pcall(vim.api.nvim_del_augroup_by_id, group)
  if not ok or text == CANCELLED then
    return nil
  end
  return text
end

--- `/` in a list: a prompt that filters the rows as you type (each keystroke a setFilter);
--- <CR> keeps the filter, <Esc> shows every row again.
function M.filter(buf)
  local view = running_view(buf)
  if not view then
    return
  end
  view.prompting = true
  local text = live_prompt('/', view.filter and view.filter.query or '', function(query)
    M.set_filter(query, view.buf)
  end)
  view.prompting = false
  M.set_filter(text or '', view.buf)
end

--- The remote or paginated source a list's search changes: the spec's search.source,
--- else the only one the list is made from. nil and why otherwise.
local function search_target(view)
  if not view.search or not (view.search.parameter or view.search.variable) then
    return nil, view.source .. ': the list spec names no search parameter (add "search": {"parameter": "q"}, '
      .. 'or {"variable": "search"} for a GraphQL source)'
  end
  if view.search.source then
    return view.search.source
  end
  if #view.remote_sources == 1 then
    return view.remote_sources[1]
  end
  return nil, string.format('%s: %s remote sources; name the one to search in the spec\'s search.source',
    view.source, #view.remote_sources == 0 and 'no' or 'several')
end

--- Searches the server: updateSource sets the spec's search parameter of the list's
--- remote source to `text` ('' removes it), keeping the other query parameters; or, when
--- the spec names a search variable, that variable of its GraphQL query, keeping the
--- other variables. The rows stay (marked stale) until the new query's answer replaces
--- them in one change set.
function M.search(text, buf)
  local view = running_view(buf)
  if not view then
    return
  end
  local target, problem = search_target(view)
  if not target then
    return notify(problem)
  end
  view.searched = text
  view:send('describeSource', { source = target }, function(description)
    if view.searched ~= text then
      return -- a newer search was asked for meanwhile: it sends its own update
    end
    local params = { source = target, debounceMilliseconds = view.search.debounceMilliseconds }
    if view.search.variable then
      local graphql = type(description.graphql) == 'table' and description.graphql or {}
      local variables = type(graphql.variables) == 'table' and vim.deepcopy(graphql.variables) or {}
      variables[view.search.variable] = text ~= '' and text or nil
      params.graphql = { variables = next(variables) == nil and vim.empty_dict() or variables }
    else
      local query = type(description.queryParameters) == 'table' and vim.deepcopy(description.queryParameters) or {}
      query[view.search.parameter] = text ~= '' and text or nil
      params.queryParameters = next(query) == nil and vim.empty_dict() or query
    end
    view:send('updateSource', params)
  end)
end

--- `:Datasourced search` without words: a prompt that searches the server as you type
--- (the spec's debounceMilliseconds merges a burst of keystrokes into one request);
--- <Esc> goes back to the search shown before.
function M.search_prompt(buf)
  local view = running_view(buf)
  if not view then
    return
  end
  local _, problem = search_target(view)
  if problem then
    return notify(problem)
  end
  local before = view.searched or ''
  view.prompting = true
  local text = live_prompt('search: ', before, function(query)
    M.search(query, view.buf)
  end)
  view.prompting = false
  -- The last key's search went out already; <Esc> goes back to the one before.
  if (text or before) ~= view.searched then
    M.search(text or before, view.buf)
  end
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
  forget_declined(view.conn)
  view.refresh_asked = true
  view:send('fetchData')
end

--- cancelFetch on the buffer's source.
function M.cancel(buf)
  local view = running_view(buf)
  if not view then
    return
  end
  view:send('cancelFetch', nil, function(result)
    if not result.cancelled then
      notify(view.source .. ' is not loading: nothing to cancel', vim.log.levels.INFO)
    end
  end)
end

--- After a failed (or cancelled) load: when every failed source is paginated, `retry`
--- (protocol 1.5) asks again for the direction that failed and only it: the page before
--- the rows, the page after them, or the first page; with an older daemon, the page that
--- failed (fetchNextPage) when the source has rows. Otherwise the list loads again
--- (fetchData).
function M.retry(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  if needs_start(view) then
    return start_view(view)
  end
  forget_declined(view.conn)
  local failure = view.failure
  if not failure then
    -- A page that failed in another list of the same source: the load states say so.
    for _, direction in ipairs({ 'refresh', 'prepend', 'append' }) do
      if view:direction_state(direction) == 'error' then
        failure = { sources = { view.source } }
      end
    end
  end
  if not failure then
    return notify(view.source .. ': nothing failed, nothing to retry (refresh loads again)', vim.log.levels.INFO)
  end
  local targets = failure.sources
  local descriptions, answers = {}, 0
  for i, name in ipairs(targets) do
    view.conn:request('describeSource', { source = name }, function(err, description)
      answers = answers + 1
      descriptions[i] = not err and description or nil
      if answers < #targets then
        return
      end
      -- `retry` asks again for a direction in error; a cancelled load left none.
      local failed_direction = true
      for n = 1, #targets do
        local d = descriptions[n]
        local states = d and d.kind == 'paginated' and type(d.loadStates) == 'table' and d.loadStates or {}
        local any = false
        for _, state in pairs(states) do
          any = any or (type(state) == 'table' and state.state == 'error')
        end
        failed_direction = failed_direction and any
      end
      if failed_direction and view.conn:serves('retry') then
        for _, target in ipairs(targets) do
          view:send('retry', { source = target }, function(result)
            if not result.started then
              notify(target .. ': ' .. tostring(result.reason or 'nothing to retry'), vim.log.levels.INFO)
            end
          end)
        end
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

--- Makes the buffer's list live: its remote and paginated sources are revalidated every
--- `seconds` (setRefreshInterval, protocol 1.2), their changes shown as they come; nil
--- stops the refreshes.
function M.refresh_interval(seconds, buf)
  local view = running_view(buf)
  if not view then
    return
  end
  if #view.remote_sources == 0 then
    return notify(view.source .. ': no remote or paginated source to refresh', vim.log.levels.WARN)
  end
  for _, name in ipairs(view.remote_sources) do
    view:send('setRefreshInterval', { source = name, seconds = seconds or vim.NIL }, function(description)
      local every = type(description) == 'table' and description.refreshIntervalSeconds
      notify(every and string.format('%s: refreshed every %s s', name, tostring(every)) or (name .. ': refreshes stopped'),
        vim.log.levels.INFO)
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

--- Closes the list: its windows go back to the buffer shown before (or close, when
--- another window remains), and the buffer is wiped out (its daemon stops with its
--- last list).
function M.close(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  buf = view.buf
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local alternate = vim.api.nvim_win_call(win, function()
      return vim.fn.bufnr('#')
    end)
    if alternate > 0 and alternate ~= buf and vim.fn.buflisted(alternate) == 1 then
      vim.api.nvim_win_set_buf(win, alternate)
    elseif #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  pcall(vim.api.nvim_buf_delete, buf, { force = true })
end

--- The object of a row, as pretty JSON in a floating window (closed when the cursor
--- moves): what <CR> does unless setup's on_select says otherwise.
function M.preview(object)
  vim.lsp.util.open_floating_preview(render.pretty(object), 'json', { border = 'rounded', focus_id = 'datasourced' })
end

--- What <CR> does on a line: an object goes to on_select(object, ctx), with ctx =
--- { buf, line, index_path, source, view }; an error row retries, a loading row (or an
--- unloaded row of counted placeholders) loads.
function M.select(buf, line)
  local view = view_for(buf)
  if not view then
    return
  end
  line = line or vim.api.nvim_win_get_cursor(0)[1]
  local path = view:index_path_at(line)
  local object = view:object_at(line)
  if path and view.lazy and view:unloaded_at(line) then
    return view:will_display(line) -- its page loads (counted placeholders)
  end
  if not path or object == nil then
    return -- a header, or a row still being read
  end
  local kind = render.placeholder_kind(object)
  if kind == 'error' then
    return M.retry(view.buf)
  elseif kind == 'loading' then
    return view:will_display(line)
  elseif kind then
    return
  end
  local ctx = { buf = view.buf, line = line, index_path = path, source = view.source, view = view }
  Connection.guarded('on_select', config.on_select or M.preview, object, ctx)
end

-- Actions ---------------------------------------------------------------------------------
-- A source may declare actions on its rows (protocol 1.9: edit, delete, add...). The row
-- under the cursor is acted on through the source that declares the action, whichever
-- source the list shows (a sectioned view over it); its change shows at once, dimmed and
-- marked until the server settles it. A rollback says why.

--- The views showing rows of `source` (the one shown or one the list is made from).
local function views_under(conn, source)
  return vim.tbl_filter(function(view)
    return view.under[source] == true
  end, views_of(conn))
end

--- A dataSource/didSettleMutation: the mark goes (unless queued); a rollback is said with
--- the server's words, a queued mutation once.
settle_mutation = function(conn, params)
  if type(params.source) ~= 'string' or type(params.mutation) ~= 'string' then
    return
  end
  local tracked = conn:settle_mutation(params.source, params.mutation, params.status)
  local action = tostring(params.action or (tracked and tracked.action) or 'an action')
  local failure = type(params.error) == 'table' and params.error or {}
  local words = failure.serverMessage or failure.message or render.error_text(failure, { short = true })
  if params.status == 'rolledBack' and failure.kind == 'cancelled' then
    -- The person asked for it (:Datasourced cancel-action): no warning, and no protocol words.
    notify(string.format('%s: %s cancelled, its change undone', params.source, action), vim.log.levels.INFO)
  elseif params.status == 'rolledBack' then
    notify(string.format('%s: %s rolled back: %s', params.source, action, tostring(words)), vim.log.levels.WARN)
  elseif params.status == 'queued' and tracked and not tracked.queued_said then
    tracked.queued_said = true
    notify(string.format('%s: %s queued, sent again later: %s', params.source, action,
      render.error_text(failure, { short = true })), vim.log.levels.INFO)
  end
  for _, view in ipairs(views_under(conn, params.source)) do
    view:schedule_marks()
  end
end

--- The declared values of an action in the order they are asked for: required ones
--- first, then by name. Each { name, type, required }.
function M.action_values(spec)
  local list = {}
  for name, declared in pairs(type(spec) == 'table' and type(spec.values) == 'table' and spec.values or {}) do
    declared = type(declared) == 'table' and declared or {}
    table.insert(list, { name = name, type = declared.type or 'string', required = declared.required == true })
  end
  table.sort(list, function(a, b)
    if a.required ~= b.required then
      return a.required
    end
    return a.name < b.name
  end)
  return list
end

--- A typed answer as the value `declared` ({name, type, required}) asks for: the value;
--- nil for an optional value left empty; or nil and what is wrong. A required string may
--- be empty (the server judges it); any other type needs a value.
function M.parse_value(text, declared)
  local name, kind = declared.name, declared.type
  if kind == 'string' then
    if text == '' and not declared.required then
      return nil
    end
    return text
  end
  local trimmed = vim.trim(text)
  if trimmed == '' then
    if declared.required then
      return nil, string.format('%s is required (%s)', name, kind)
    end
    return nil
  end
  if kind == 'integer' then
    local value = trimmed:match('^[-+]?%d+$') and tonumber(trimmed)
    if value and math.abs(value) <= 2 ^ 53 then
      return value
    end
    return nil, string.format('%s must be a whole number, got %q', name, text)
  elseif kind == 'number' then
    local value = tonumber(trimmed)
    if value and value == value and math.abs(value) ~= math.huge and not trimmed:match('^0[xX]') then
      return value
    end
    return nil, string.format('%s must be a number, got %q', name, text)
  elseif kind == 'boolean' then
    local lower = trimmed:lower()
    if lower == 'true' or lower == 'yes' then
      return true
    elseif lower == 'false' or lower == 'no' then
      return false
    end
    return nil, string.format('%s must be true or false, got %q', name, text)
  elseif kind == 'object' or kind == 'array' then
    -- JSON of that kind: an object's text starts with {, an array's with [ (an empty
    -- Lua table cannot tell them apart).
    local ok, value = pcall(vim.fn.json_decode, trimmed)
    if ok and type(value) == 'table' and trimmed:sub(1, 1) == (kind == 'object' and '{' or '[') then
      if kind == 'object' and next(value) == nil then
        return vim.empty_dict()
      end
      return value
    end
    return nil, string.format('%s must be a JSON %s, got %q', name, kind, text)
  end
  return text
end

--- Asks for each value with vim.ui.input, in order; done(values) with those given, or
--- nothing when the person cancels or an answer is not of its type (said).
local function ask_values(label, declared_values, defaults, done)
  local values, i = {}, 0
  local function ask_next()
    i = i + 1
    local declared = declared_values[i]
    if not declared then
      return done(values)
    end
    local prompt = string.format('%s %s (%s%s): ', label, declared.name, declared.type,
      declared.required and '' or ', optional')
    local default = defaults and defaults[declared.name]
    default = (type(default) == 'string' or type(default) == 'number' or type(default) == 'boolean')
      and tostring(default) or nil
    vim.ui.input({ prompt = prompt, default = default }, function(text)
      if text == nil then
        return -- cancelled: nothing is sent
      end
      local value, problem = M.parse_value(text, declared)
      if problem then
        return notify(label .. ': ' .. problem .. '; nothing was sent')
      end
      values[declared.name] = value
      ask_next()
    end)
  end
  ask_next()
end

--- The cursor's line in the buffer (its window's, when it is not the current buffer).
local function cursor_line(buf)
  if vim.api.nvim_get_current_buf() == buf then
    return vim.api.nvim_win_get_cursor(0)[1]
  end
  local win = vim.fn.win_findbuf(buf)[1]
  return win and vim.api.nvim_win_get_cursor(win)[1] or 1
end

--- The names of the actions a buffer's list offers (sorted), for completion and the
--- choice without a name.
function M.action_names(buf)
  local view = M.view(buf)
  local names = view and vim.tbl_keys(view.actions or {}) or {}
  table.sort(names)
  return names
end

--- Performs the action `name` of the list's sources on the row under the cursor (`line`
--- if given): asks for its declared values (vim.ui.input), then sends performAction to
--- the source that declares it, with the row's identity. Without a name, the actions are
--- offered with vim.ui.select.
function M.perform(name, buf, line)
  local view = running_view(buf)
  if not view then
    return
  end
  line = line or cursor_line(view.buf)
  local names = M.action_names(view.buf)
  if name == nil or name == '' then
    if #names == 0 then
      return notify(view.source .. ': its sources declare no actions', vim.log.levels.WARN)
    end
    return vim.ui.select(names, {
      prompt = 'datasourced action: ',
      format_item = function(item)
        local spec = view.actions[item].spec
        return string.format('%s (%s %s)', item, tostring(spec.method or ''), tostring(spec.path or ''))
      end,
    }, function(choice)
      if choice then
        M.perform(choice, view.buf, line)
      end
    end)
  end
  local declared = view.actions[name]
  if not declared then
    return notify(string.format('%s: no action %q (%s)', view.source, name,
      #names > 0 and ('the sources declare ' .. table.concat(names, ', ')) or 'the sources declare none'))
  end
  local spec = declared.spec
  local object = view:object_at(line)
  local is_row = type(object) == 'table' and not render.is_placeholder(object)
  local identity
  if spec.optimistic ~= 'insert' and is_row then
    identity = render.at_key_path(object, declared.identity_key or view:row_identity_key())
  end
  if identity == nil and (spec.optimistic == 'update' or spec.optimistic == 'remove') then
    return notify(string.format('%s: %s acts on a row: put the cursor on one', declared.source, name),
      vim.log.levels.WARN)
  end
  local label = declared.source .. ': ' .. name
  local defaults = spec.optimistic == 'update' and is_row and object or nil
  ask_values(label, M.action_values(spec), defaults, function(values)
    local conn = view.conn
    if not conn or conn.exited or conn.stopping then
      return notify(view.source .. ': the daemon is not running', vim.log.levels.WARN)
    end
    local params = { source = declared.source, action = name, identity = identity }
    if next(values) ~= nil then
      params.values = values
    end
    conn:request('performAction', params, function(err, result)
      if err then
        return notify(string.format('%s was refused: %s', label, Connection.describe_error(err)))
      end
      local mutation = type(result) == 'table' and result.mutation
      if type(mutation) ~= 'string' then
        return
      end
      conn:track_mutation(declared.source, mutation, {
        action = name, identity = ListView.mutation_identity(identity, mutation, declared, values),
      })
      for _, shown in ipairs(views_under(conn, declared.source)) do
        shown:schedule_marks()
      end
    end)
  end)
end

--- The mutation IDs' order of making: m2 after m1, m10 after m9.
local function mutation_number(tracked)
  return tonumber(tostring(tracked.mutation):match('(%d+)$')) or 0
end

--- Cancels the actions of the row under the cursor (`line` if given) that the server has
--- not settled: cancelMutation for each, the newest first. A source sends its mutations
--- one at a time, so cancelling the oldest first would send the next on its way, and one
--- on its way cannot be cancelled (its answer settles it). Each then settles as rolled
--- back, which settle_mutation says.
function M.cancel_action(buf, line)
  local view = running_view(buf)
  if not view then
    return
  end
  line = line or cursor_line(view.buf)
  local object = view:object_at(line)
  if type(object) ~= 'table' or render.is_placeholder(object) then
    return notify(view.source .. ': put the cursor on a row with a pending action to cancel it', vim.log.levels.WARN)
  end
  local identity = render.at_key_path(object, view:row_identity_key())
  local conn = view.conn
  local pending = {}
  for _, tracked in pairs(conn and conn.mutations or {}) do
    if view.under[tracked.source] and identity ~= nil and tostring(tracked.identity) == tostring(identity) then
      table.insert(pending, tracked)
    end
  end
  if #pending == 0 then
    return notify(string.format('%s: no pending action on this row: nothing to cancel', view.source),
      vim.log.levels.WARN)
  end
  table.sort(pending, function(a, b)
    return mutation_number(a) > mutation_number(b)
  end)
  for _, tracked in ipairs(pending) do
    local label = string.format('%s: %s', tracked.source, tostring(tracked.action or tracked.mutation))
    conn:request('cancelMutation', { source = tracked.source, mutation = tracked.mutation }, function(err)
      if not err then
        return
      end
      local reason = Connection.describe_error(err)
      if reason:find('in flight', 1, true) then
        reason = 'it is on its way to the server, whose answer settles it'
      end
      notify(string.format('%s cannot be cancelled: %s', label, reason), vim.log.levels.WARN)
    end)
  end
end

--- The keys of a list, in a floating window.
function M.help()
  local lines, keys = {}, vim.tbl_keys(config.keymaps)
  table.sort(keys)
  for _, lhs in ipairs(keys) do
    local action = config.keymaps[lhs]
    if action then
      local what = type(action) == 'string' and (action .. ': ' .. (M.ACTIONS[action] or '?')) or 'your function'
      table.insert(lines, string.format('%-7s %s', lhs, what))
    end
  end
  table.insert(lines, '')
  table.insert(lines, ':help datasourced')
  vim.lsp.util.open_floating_preview(lines, '', { border = 'rounded', focus_id = 'datasourced_help' })
  return lines
end

--- Runs an action (see M.ACTIONS) on a list buffer (default: the current one).
function M.action(name, buf)
  if name == 'select' then
    return M.select(buf)
  elseif name == 'help' then
    return M.help()
  elseif name == 'action' then
    return M.perform(nil, buf)
  elseif name == 'cancel-action' then
    return M.cancel_action(buf)
  end
  return M[name](buf)
end

--- The open lists, one line each: the buffer, the title, the source shown, the sources
--- it is made from, the status. Shown by :Datasourced sources; returned for tests.
function M.sources()
  local bufs = vim.tbl_keys(views)
  table.sort(bufs)
  local lines = {}
  for _, buf in ipairs(bufs) do
    local view = views[buf]
    local under = {}
    for name in pairs(view.under or {}) do
      if name ~= view.source then
        table.insert(under, name)
      end
    end
    table.sort(under)
    table.insert(lines, string.format('%d  %s: %s%s  [%s]', buf, view.title or view.source, view.source,
      #under > 0 and (' (from ' .. table.concat(under, ', ') .. ')') or '', view.status or ''))
  end
  if #lines == 0 then
    lines = { 'no datasourced list is open' }
  end
  vim.api.nvim_echo({ { table.concat(lines, '\n') } }, false, {})
  return lines
end

--- Opens the log (stderr) of the daemon of the current list, or of the last one started,
--- in a split window. Returns the file, or nil.
function M.log(buf)
  local view = views[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
  local conn = view and view.conn
  if not conn then
    for _, c in pairs(connections) do
      conn = c
    end
  end
  local file = conn and conn.log_file
  if not file then
    notify('no daemon has started yet: its log appears once a list is open', vim.log.levels.WARN)
    return nil
  end
  vim.cmd('split ' .. vim.fn.fnameescape(file))
  vim.bo.readonly, vim.bo.autoread = true, true
  return file
end

--- :Datasourced {open FILE|refresh|cancel|retry|reload|close|refresh-interval N|off|filter [TEXT]|search [TEXT]|action [NAME]|cancel-action|sources|log}
M.SUBCOMMANDS = { 'open', 'refresh', 'cancel', 'retry', 'reload', 'close', 'refresh-interval', 'filter', 'search',
  'action', 'cancel-action', 'sources', 'log' }

local function usage(args)
  notify(string.format('usage: :Datasourced {open FILE|refresh|cancel|retry|reload|close|refresh-interval N|off|filter [TEXT]|search [TEXT]|action [NAME]|cancel-action|sources|log} (got %q)',
    args or ''))
end

function M.command(args)
  local sub, rest = vim.trim(args or ''):match('^(%S*)%s*(.-)$')
  if sub == 'open' then
    return M.open_file(rest)
  end
  if sub == 'refresh-interval' then
    local seconds = tonumber(rest)
    if rest == 'off' or (seconds and seconds > 0) then
      return M.refresh_interval(seconds)
    end
    return usage(args)
  end
  if sub == 'filter' then
    if rest == '' then
      return M.filter()
    end
    return M.set_filter(rest)
  end
  if sub == 'search' then
    if rest == '' then
      return M.search_prompt()
    end
    return M.search(rest)
  end
  if sub == 'action' then
    return M.perform(rest ~= '' and rest or nil)
  end
  if sub == 'cancel-action' and rest == '' then
    return M.cancel_action()
  end
  if vim.tbl_contains(M.SUBCOMMANDS, sub) and rest == '' then
    return M[sub]()
  end
  usage(args)
end

--- Completion of :Datasourced: the subcommands, then open's spec file, a refresh
--- interval, or the current list's actions.
function M.complete(arglead, cmdline)
  local words = vim.split(cmdline, '%s+', { trimempty = false })
  local function starting(candidates)
    return vim.tbl_filter(function(candidate)
      return candidate:sub(1, #arglead) == arglead
    end, candidates)
  end
  if #words <= 2 then
    return starting(M.SUBCOMMANDS)
  end
  if words[2] == 'open' and #words == 3 then
    return vim.fn.getcompletion(arglead, 'file')
  end
  if words[2] == 'refresh-interval' and #words == 3 then
    return starting({ 'off', '30', '60', '300' })
  end
  if words[2] == 'action' and #words == 3 then
    return starting(M.action_names())
  end
  return {}
end

--- The list of a buffer (default: the current one), or nil. For statuslines and tests.
function M.view(buf)
  return views[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
end

--- The state of a buffer's list for a statusline: "loading", "loaded N", "error: ...",
--- "cancelled", "daemon exited", followed by "[cached 16:41]" while the rows shown are
--- cached ones the server has not confirmed yet; "" outside lists.
function M.status(buf)
  local view = M.view(buf)
  return view and view.status or ''
end

--- The settings in force (for :checkhealth and tests).
function M.config()
  return vim.deepcopy(config)
end

--- Stops every daemon (shutdown, then exit), waiting for them: called on VimLeavePre.
function M.stop()
  for id, conn in pairs(connections) do
    connections[id] = nil
    conn:stop({ wait = true, timeout_ms = 1000 })
  end
end

return M
