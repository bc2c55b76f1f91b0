-- How rows, placeholders and section titles look: each line is a text and a highlight
-- group. The placeholder texts can be changed with
-- require('datasourced').setup({ placeholders = {...} }).

local M = {}

M.texts = {
  loading = '  ⋯ loading…',
  noResults = '  (no results)',
  error = '  ✗ error: %s', -- %s: what failed (see error_text)
  pending = '  …', -- a row whose value is being read (for a moment)
  unloaded = '  … row %d', -- %d: the row's number (from 1, as lines): a counted placeholder
  header = '## %s', -- %s: the section title
}

-- The groups of each kind of line; each is linked by default to a standard group
-- (see highlights()), so colour schemes style them and users may relink them.
M.groups = {
  header = 'DatasourcedHeader',
  loading = 'DatasourcedLoading',
  noResults = 'DatasourcedNoResults',
  error = 'DatasourcedError',
  pending = 'DatasourcedLoading',
  unloaded = 'DatasourcedUnloaded', -- rows of a counted list whose page is not loaded
  match = 'DatasourcedMatch', -- the characters a filter's query matched
  pending_row = 'DatasourcedPending', -- a row an action changed, until the server settles it
}

M.default_links = {
  DatasourcedHeader = 'Title',
  DatasourcedLoading = 'Comment',
  DatasourcedNoResults = 'Comment',
  DatasourcedUnloaded = 'Comment',
  DatasourcedError = 'ErrorMsg',
  DatasourcedMatch = 'Search',
  DatasourcedPending = 'Comment',
}

--- Links the groups to their defaults unless the user (or colour scheme) set them.
function M.highlights()
  for group, link in pairs(M.default_links) do
    vim.cmd(string.format('highlight default link %s %s', group, link))
  end
end

local islist = vim.islist or vim.tbl_islist

function M.is_placeholder(value)
  return type(value) == 'table' and value['$placeholder'] ~= nil
end

--- The placeholder's kind ("loading", "noResults", "error", "unloaded"), or nil for an
--- object.
function M.placeholder_kind(value)
  return M.is_placeholder(value) and value['$placeholder'] or nil
end

-- A buffer line cannot hold a line break (nvim_buf_set_lines refuses it).
local function one_line(text)
  return (tostring(text):gsub('[\r\n]+', ' '))
end

local function is_object(value)
  return type(value) == 'table' and (getmetatable(value) == getmetatable(vim.empty_dict()) or not islist(value))
end

local function sorted_keys(object, first)
  local keys = {}
  for k in pairs(object) do
    if k ~= first then
      table.insert(keys, tostring(k))
    end
  end
  table.sort(keys)
  if first ~= nil and object[first] ~= nil then
    table.insert(keys, 1, first)
  end
  return keys
end

--- Compact JSON with object members in sorted order: the same value always reads the
--- same (Lua tables have no order of their own).
function M.encode(value)
  if value == nil or value == vim.NIL then
    return 'null'
  elseif type(value) ~= 'table' then
    local ok, encoded = pcall(vim.json.encode, value)
    return ok and encoded or tostring(value)
  elseif is_object(value) then
    local members = {}
    for _, k in ipairs(sorted_keys(value)) do
      table.insert(members, vim.json.encode(k) .. ': ' .. M.encode(value[k]))
    end
    return '{' .. table.concat(members, ', ') .. '}'
  end
  local items = {}
  for _, item in ipairs(value) do
    table.insert(items, M.encode(item))
  end
  return '[' .. table.concat(items, ', ') .. ']'
end

--- JSON over several lines, indented by two spaces, members in sorted order: the
--- object of a row as <CR> shows it by default. Returns a list of lines.
function M.pretty(value)
  local lines = {}
  local function emit(v, indent, prefix, suffix)
    if type(v) == 'table' and v ~= vim.NIL and next(v) ~= nil then
      local object = is_object(v)
      table.insert(lines, indent .. prefix .. (object and '{' or '['))
      local keys = object and sorted_keys(v) or nil
      local count = object and #keys or #v
      for i = 1, count do
        local member = object and (vim.json.encode(keys[i]) .. ': ') or ''
        emit(object and v[keys[i]] or v[i], indent .. '  ', member, i < count and ',' or '')
      end
      table.insert(lines, indent .. (object and '}' or ']') .. suffix)
    else
      table.insert(lines, indent .. prefix .. M.encode(v) .. suffix)
    end
  end
  emit(value, '', '', '')
  return lines
end

--- A value as people read it: a string as itself, other scalars as JSON.
local function scalar_text(value)
  if type(value) == 'string' then
    return value
  end
  return M.encode(value)
end

--- The default formatter: a string as itself; an object as `key: value` pairs, the
--- identity key first, then the others in sorted order; anything else as JSON.
function M.default_format(value, identity_key)
  if is_object(value) then
    local pairs_text = {}
    for _, k in ipairs(sorted_keys(value, identity_key)) do
      table.insert(pairs_text, k .. ': ' .. scalar_text(value[k]))
    end
    return table.concat(pairs_text, '  ')
  end
  return scalar_text(value)
end

--- The value at a dot key path ("author.name"), or nil.
function M.at_key_path(value, path)
  for part in tostring(path):gmatch('[^.]+') do
    if type(value) ~= 'table' then
      return nil
    end
    value = value[part]
  end
  return value
end

--- Pads (or cuts, with "…") `text` to `width` display cells.
local function fit(text, width)
  local cells = vim.fn.strdisplaywidth(text)
  if cells > width then
    local cut = text
    while vim.fn.strdisplaywidth(cut) > width - 1 do
      cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
    end
    return cut .. '…' .. string.rep(' ', width - 1 - vim.fn.strdisplaywidth(cut))
  end
  return text .. string.rep(' ', width - cells)
end

--- A formatter showing columns: `columns` lists key paths, or { key = PATH, width = N }
--- for a column padded (or cut) to N cells. Columns are separated by two spaces.
function M.columns_format(columns)
  return function(value)
    if not is_object(value) then
      return scalar_text(value)
    end
    local cells = {}
    for i, column in ipairs(columns) do
      local path, width = column, nil
      if type(column) == 'table' then
        path, width = column.key or column[1], column.width or column[2]
      end
      local found = M.at_key_path(value, path)
      local text = found == nil and '' or one_line(scalar_text(found))
      if width and i < #columns then
        text = fit(text, width)
      end
      table.insert(cells, text)
    end
    return (table.concat(cells, '  '):gsub('%s+$', ''))
  end
end

--- What failed, for people: where (the URL, and where it was redirected), what happened,
--- and what the server itself said (Protocol.md, "Fetch errors"), e.g.
---   http://127.0.0.1:8080/v1/books?page=2: HTTP status 500: the database is on fire
--- With opts.short, the URL is left out (for a statusline).
-- The daemon's words for a cancelled load name protocol methods; people asked for a
-- cancel or a reload.
local CANCELLED = {
  ['cancelled by cancelFetch'] = 'cancelled',
  ['superseded by a new fetchData'] = 'superseded by a new load',
}

function M.error_text(failure, opts)
  failure = type(failure) == 'table' and failure or {}
  local text = tostring(failure.message or failure.kind or 'unknown error')
  if failure.kind == 'cancelled' then
    text = CANCELLED[text] or text
  end
  local url = failure.url
  if type(failure.finalURL) == 'string' and failure.finalURL ~= url then
    url = url and (url .. ' → ' .. failure.finalURL) or failure.finalURL
  end
  if type(url) == 'string' and url ~= '' then
    -- Some messages name the URL already (a loop guard's "... from URL"): once is enough.
    local named = text:find(url, 1, true) or (failure.url and text:find(failure.url, 1, true))
    if opts and opts.short then
      if named then
        text = vim.trim((text:gsub(' from ' .. vim.pesc(failure.url or url), ''):gsub(vim.pesc(url), '')))
      end
    elseif not named then
      text = url .. ': ' .. text
    end
  end
  local said = failure.serverMessage
  if type(said) ~= 'string' or said == '' then
    -- Without a message in a JSON body, a short plain-text body is the server's words;
    -- an HTML page is not worth a line.
    local body = type(failure.body) == 'string' and vim.trim(failure.body:gsub('%s+', ' ')) or ''
    said = (body ~= '' and #body <= 200 and not body:match('^<')) and body or nil
  end
  if said and not tostring(text):find(said, 1, true) then
    text = text .. ': ' .. said
  end
  if tonumber(failure.retryAfterSeconds) then
    text = text .. string.format(' (retry after %d s)', tonumber(failure.retryAfterSeconds))
  end
  return one_line(text)
end

--- Seconds since 1970 of a protocol time (RFC 3339 in UTC: 2026-11-23T16:41:37.123Z),
--- or nil.
function M.parse_time(text)
  local year, month, day, hour, min, sec = tostring(text):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not year then
    return nil
  end
  -- os.time reads a date as local time: add this zone's offset from UTC.
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date('!*t', now)))
  return os.time({ year = tonumber(year), month = tonumber(month), day = tonumber(day), hour = tonumber(hour),
    min = tonumber(min), sec = tonumber(sec), isdst = false }) + offset
end

--- The statusline's mark of rows shown from the persisted cache that the server has not
--- confirmed yet: "[cached 16:41]" (local time; with the date when not today), or
--- "[cached]" without a time.
function M.stale_marker(cached_at)
  local seconds = M.parse_time(cached_at)
  if not seconds then
    return '[cached]'
  end
  local same_day = os.date('%Y-%m-%d', seconds) == os.date('%Y-%m-%d')
  return '[cached ' .. os.date(same_day and '%H:%M' or '%Y-%m-%d %H:%M', seconds) .. ']'
end

--- The line of a row: a placeholder's text, else the formatter's (a formatter that
--- fails shows why on its row rather than raising). Returns the text and its group.
function M.row(value, format)
  local kind = M.placeholder_kind(value)
  if kind == 'error' then
    return string.format(M.texts.error, M.error_text(value.error)), M.groups.error
  elseif kind == 'unloaded' then
    return M.unloaded(tonumber(value.index) or 0), M.groups.unloaded
  elseif kind then
    return M.texts[kind] or ('  <' .. tostring(kind) .. '>'), M.groups[kind]
  end
  local ok, text = pcall(format, value)
  if not ok then
    return '  <format failed: ' .. one_line(text) .. '>', M.groups.error
  end
  return one_line(text), nil
end

--- The line of an unloaded row (protocol 1.5's counted placeholders) at item `index`
--- (from 0).
local unloaded_parts = { template = nil } -- the text around its %d, for the template in force
function M.unloaded(index)
  -- Concatenation, not string.format: a million of them open a counted list, and
  -- LuaJIT compiles the one, not the other (a third of the time).
  local template = M.texts.unloaded
  if unloaded_parts.template ~= template then
    local before, after = template:match('^(.-)%%d(.*)$')
    unloaded_parts = { template = template, before = before, after = after }
  end
  if not unloaded_parts.before then
    return template -- no %d in a text of the user's: shown as it is
  end
  return unloaded_parts.before .. (index + 1) .. unloaded_parts.after
end

function M.pending()
  return M.texts.pending, M.groups.pending
end

--- A section's header line. Titles are JSON values: null (objects lacking the
--- sectioning key) shows as "null", other non-strings as JSON.
function M.header(title, pending)
  if pending then
    return string.format(M.texts.header, '…'), M.groups.header
  end
  return string.format(M.texts.header, one_line(scalar_text(title))), M.groups.header
end

return M
