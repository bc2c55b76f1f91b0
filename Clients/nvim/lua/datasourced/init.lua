-- datasourced.nvim: list buffers over datasourced data sources.
--
--   require('datasourced').setup{ cmd = { '/path/to/datasourced' } }
--   require('datasourced').open{
--     sources = {
--       { name = 'books', kind = 'paginated', remoteConfiguration = { baseURL = 'http://127.0.0.1:8080' },
--         apiPath = '/v1/books', keyPath = 'books', pageSize = 20 },
--     },
--     format = function(book) return book.title end,
--   }
--
-- One daemon serves every list buffer; it starts with the first list and stops when
-- Neovim exits. See :help datasourced.

local Connection = require('datasourced.connection')
local ListView = require('datasourced.listview')
local render = require('datasourced.render')

local M = {}

local config = {
  cmd = { 'datasourced' },
}
local conn = nil
local views = {} -- buffer number -> ListView

function M.setup(opts)
  opts = opts or {}
  if opts.cmd then
    config.cmd = type(opts.cmd) == 'string' and { opts.cmd } or opts.cmd
  end
  for name, text in pairs(opts.placeholders or {}) do
    render.texts[name] = text
  end
end

local function err(message)
  vim.notify('datasourced: ' .. message, vim.log.levels.ERROR)
end

local function on_notification(method, params)
  local kind = method:match('^dataSource/(.+)$')
  if not kind or type(params) ~= 'table' then
    return
  end
  for _, view in pairs(views) do
    if view.source == params.source then
      view:on_event(kind, params)
    end
    if kind == 'failedWithError' and params.source ~= view.source then
      -- A child's failure: remembered so :DatasourcedRetry knows which source to retry.
      view.child_failure = params.source
    end
  end
end

local function on_exit(code, signal, expected)
  if not expected then
    err(string.format('the daemon exited (status %s, signal %s); reopen the list to restart it', tostring(code), tostring(signal)))
  end
  for _, view in pairs(views) do
    view:set_status('daemon exited')
  end
  conn = nil
end

--- The shared connection, started on first use. Returns nil (after saying why) if the
--- daemon cannot start.
function M.connection()
  if conn and not conn.exited then
    return conn
  end
  local started, problem = Connection.start(config.cmd, { notification = on_notification, on_exit = on_exit })
  if not started then
    err(problem)
    return nil
  end
  conn = started
  return conn
end

local function spec_sources(spec)
  if spec.name and spec.kind then
    return { spec }
  end
  return spec.sources or {}
end

--- Opens a list buffer for a source. `spec` is either createSource params ({name, kind, ...})
--- or { sources = { params, ... }, show = NAME }, children first; with `format(object) ->
--- string` and `title` optional. Sources that already exist in the daemon are reused.
--- Returns the buffer number, or nil.
function M.open(spec)
  spec = spec or {}
  local sources = spec_sources(spec)
  if #sources == 0 then
    err('open: give createSource params ({name, kind, ...}) or {sources = {...}}')
    return nil
  end
  local show = spec.show or sources[#sources].name
  local c = M.connection()
  if not c then
    return nil
  end

  local view = ListView.new(c, { source = show, format = spec.format, title = spec.title or show,
    show_headers = false })
  views[view.buf] = view
  vim.api.nvim_set_current_buf(view.buf)
  vim.api.nvim_win_set_option(0, 'statusline', "%f  %{get(b:, 'datasourced_status', '')}")
  vim.api.nvim_create_autocmd('CursorMoved', {
    buffer = view.buf,
    callback = function()
      local line = vim.api.nvim_win_get_cursor(0)[1]
      if line == view.line_count then
        view:will_display(line)
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = view.buf,
    callback = function()
      views[view.buf] = nil
    end,
  })

  c:request('listSources', nil, function(e, existing)
    if e then
      return view:report_rpc_error('listSources', e)
    end
    local have = {}
    for _, s in ipairs(existing or {}) do
      have[s.name] = true
    end
    local failed = false
    for _, params in ipairs(sources) do
      if not have[params.name] then
        c:request('createSource', params, function(create_err)
          if create_err and not failed then
            failed = true
            view:set_status('error: ' .. (create_err.message or 'createSource failed'))
            err(string.format('createSource %q: %s', tostring(params.name), Connection.describe_rpc_error(create_err)))
          end
        end)
      end
    end
    -- Requests are served in order: this runs after every createSource above.
    c:request('describeSource', { source = show }, function(describe_err, description)
      if describe_err then
        if not failed then
          err(string.format('cannot show %q: %s', show, Connection.describe_rpc_error(describe_err)))
        end
        return
      end
      view.kind = description.kind
      view.show_headers = description.kind == 'sectioned' or description.kind == 'multi'
      view:reload()
      M.refresh(view.buf)
    end)
  end)
  return view.buf
end

local function view_for(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local view = views[buf]
  if not view then
    err('this buffer is not a datasourced list')
  end
  return view
end

--- fetchData on the buffer's source: reloads it (a paginated source from page one).
function M.refresh(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  view.child_failure = nil
  view.conn:request('fetchData', { source = view.source }, function(e)
    if e then
      view:report_rpc_error('fetchData', e)
    end
  end)
end

--- cancelFetch on the buffer's source.
function M.cancel(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  view.conn:request('cancelFetch', { source = view.source }, function(e, result)
    if e then
      view:report_rpc_error('cancelFetch', e)
    elseif not result.cancelled then
      vim.notify('datasourced: nothing to cancel: ' .. view.source .. ' is not loading', vim.log.levels.INFO)
    end
  end)
end

--- After an error: a paginated source that has rows asks again for the page that failed
--- (fetchNextPage); anything else loads again (fetchData).
function M.retry(buf)
  local view = view_for(buf)
  if not view then
    return
  end
  local target = view.child_failure or view.source
  view.conn:request('describeSource', { source = target }, function(e, description)
    if e then
      return view:report_rpc_error('describeSource', e)
    end
    if description.kind == 'paginated' and (description.numberOfObjects or 0) > 0 and description.hasMorePages then
      view.conn:request('fetchNextPage', { source = target }, function(next_err, result)
        if next_err then
          view:report_rpc_error('fetchNextPage', next_err)
        elseif not result.started then
          vim.notify('datasourced: ' .. target .. ': ' .. (result.reason or 'nothing to retry'), vim.log.levels.INFO)
        end
      end)
    else
      M.refresh(view.buf)
    end
  end)
end

--- Reads the whole list again from the daemon and redraws it.
function M.reload(buf)
  local view = view_for(buf)
  if view then
    view:reload()
  end
end

--- Opens a list from a JSON file holding the same spec as open() (without `format`).
function M.open_file(path)
  local ok, text = pcall(vim.fn.readfile, vim.fn.expand(path))
  if not ok then
    return err('cannot read ' .. path .. ': ' .. tostring(text))
  end
  local decoded_ok, spec = pcall(vim.fn.json_decode, table.concat(text, '\n'))
  if not decoded_ok or type(spec) ~= 'table' then
    return err(path .. ' is not a JSON object: ' .. tostring(spec))
  end
  return M.open(spec)
end

--- The list view of a buffer (for statuslines and tests).
function M.view(buf)
  return views[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
end

--- Stops the daemon (shutdown, exit). Called when Neovim exits.
function M.stop()
  if conn then
    conn:stop(1000)
    conn = nil
  end
end

return M
