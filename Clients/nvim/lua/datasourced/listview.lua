-- A list buffer showing one data source: a header line per section (for sectioned and
-- multi sources), then one line per row. Change sets from dataSource/didChange edit only
-- the lines they touch; the values of new and updated rows are then read from the daemon.
--
-- The model mirrors the daemon's layout: sections = { {title, title_pending, rows} }, each
-- row an entry { value = JSON value } or { pending = true } until its value is read.
-- `version` counts the change sets applied: an answer read while another change set
-- arrived describes a layout we no longer have, so it is dropped and read again.

local render = require('datasourced.render')

local ListView = {}
ListView.__index = ListView

local function key(section, item)
  return section .. ':' .. item
end

function ListView.new(conn, opts)
  local self = setmetatable({
    conn = conn,
    source = opts.source,
    format = opts.format or render.default_format,
    show_headers = opts.show_headers,
    sections = {},
    line_count = 0,
    version = 0,
    reading = false, -- a read of pending values is in flight
    reloading = false, -- a full reload is in flight
    reload_again = false,
    status = 'new',
  }, ListView)
  local buf = vim.api.nvim_create_buf(true, true)
  self.buf = buf
  vim.api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'datasourced')
  pcall(vim.api.nvim_buf_set_name, buf, 'datasourced://' .. opts.title)
  vim.b[buf].datasourced_source = self.source
  self:set_status('new')
  return self
end

function ListView:set_status(status)
  self.status = status
  if vim.api.nvim_buf_is_valid(self.buf) then
    vim.b[self.buf].datasourced_status = status
  end
end

-- Buffer edits -----------------------------------------------------------------------

--- Replaces lines [first, last) of the list (0-based, as nvim_buf_set_lines). `line_count`
--- counts the list's lines: a buffer always has one line, so an empty list is one empty
--- line that the first insertion replaces.
function ListView:edit(first, last, lines)
  if last < 0 then
    last = self.line_count
  end
  local was_empty = self.line_count == 0
  self.line_count = self.line_count - (last - first) + #lines
  if not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  vim.api.nvim_buf_set_option(self.buf, 'modifiable', true)
  if was_empty or self.line_count == 0 then
    vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  else
    vim.api.nvim_buf_set_lines(self.buf, first, last, false, lines)
  end
  vim.api.nvim_buf_set_option(self.buf, 'modifiable', false)
end

function ListView:row_text(entry)
  if entry.pending then
    return render.pending_text()
  end
  return render.row_text(entry.value, self.format)
end

function ListView:header_text(section)
  if section.title_pending then
    return render.header_text(nil, true)
  end
  return render.header_text(section.title)
end

function ListView:header_lines()
  return self.show_headers and 1 or 0
end

--- The 0-based line of section s's header (or of its first row when headers are hidden).
function ListView:section_line(s)
  local line = 0
  for i = 1, s - 1 do
    line = line + self:header_lines() + #self.sections[i].rows
  end
  return line
end

--- The 0-based line of the row at (section s, item i), both 1-based here.
function ListView:row_line(s, i)
  return self:section_line(s) + self:header_lines() + (i - 1)
end

function ListView:all_lines()
  local lines = {}
  for _, section in ipairs(self.sections) do
    if self.show_headers then
      table.insert(lines, self:header_text(section))
    end
    for _, entry in ipairs(section.rows) do
      table.insert(lines, self:row_text(entry))
    end
  end
  return lines
end

--- The wire index path [section, item] of a 1-based buffer line, or nil for a header.
function ListView:index_path_at(line)
  local remaining = line - 1
  for s, section in ipairs(self.sections) do
    remaining = remaining - self:header_lines()
    if remaining < 0 then
      return nil
    end
    if remaining < #section.rows then
      return { s - 1, remaining }
    end
    remaining = remaining - #section.rows
  end
  return nil
end

function ListView:rows()
  local rows = {}
  for _, section in ipairs(self.sections) do
    for _, entry in ipairs(section.rows) do
      table.insert(rows, entry)
    end
  end
  return rows
end

-- Full reload ------------------------------------------------------------------------

--- Reads the whole layout and every row (describeSource, then allObjects) and redraws.
function ListView:reload()
  if self.reloading then
    self.reload_again = true
    return
  end
  self.reloading = true
  self.reload_again = false
  local version = self.version
  local description
  self.conn:request('describeSource', { source = self.source }, function(err, result)
    if err then
      self.reloading = false
      return self:report_rpc_error('describeSource', err)
    end
    description = result
  end)
  self.conn:request('allObjects', { source = self.source }, function(err, objects)
    self.reloading = false
    if err then
      return self:report_rpc_error('allObjects', err)
    end
    if not description then
      return
    end
    if self.reload_again or self.version ~= version then
      return self:reload() -- a change arrived between the two answers
    end
    local sections, next_row = {}, 1
    for s, count in ipairs(description.counts) do
      local rows = {}
      for _ = 1, count do
        table.insert(rows, { value = objects[next_row] })
        next_row = next_row + 1
      end
      sections[s] = { title = description.sectionTitles[s], rows = rows }
    end
    self.sections = sections
    self:edit(0, -1, self:all_lines())
  end)
end

-- Change sets --------------------------------------------------------------------------

local function sorted_paths(paths)
  table.sort(paths, function(a, b)
    if a[1] ~= b[1] then
      return a[1] < b[1]
    end
    return a[2] < b[2]
  end)
  return paths
end

--- Applies a change set (Protocol.md, "Notifications"): removes `deleted` and every
--- `moved.from` (old coordinates), then places `inserted` and every `moved.to` (new
--- coordinates); `updated` rows are read again. Only the affected lines are edited.
function ListView:apply(changes)
  if self.reloading then
    self.reload_again = true
    return
  end
  self.version = self.version + 1
  -- A cursor on the last line stays on that line number: rows arriving above it would
  -- otherwise carry it down with the trailing loading row, and reaching the new end
  -- could not be told from standing still. (A list view keeps its scroll position too.)
  local at_end = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local line = vim.api.nvim_win_get_cursor(win)[1]
    if line >= self.line_count then
      at_end[win] = line
    end
  end
  local ok, err = pcall(self.apply_unprotected, self, changes)
  for win, line in pairs(at_end) do
    pcall(vim.api.nvim_win_set_cursor, win, { math.max(1, math.min(line, self.line_count)), 0 })
  end
  if not ok then
    -- Our model no longer matches the daemon's: read everything again.
    vim.notify('datasourced: ' .. self.source .. ': resynchronising (' .. tostring(err) .. ')', vim.log.levels.WARN)
    self:reload()
    return
  end
  self:read_pending()
end

function ListView:apply_unprotected(changes)
  local removed = {}
  local moved_entries = {}
  for _, path in ipairs(changes.deleted or {}) do
    removed[key(path[1] + 1, path[2] + 1)] = true
  end
  for _, move in ipairs(changes.moved or {}) do
    local s, i = move.from[1] + 1, move.from[2] + 1
    local entry = assert(self.sections[s] and self.sections[s].rows[i], 'moved.from out of range')
    removed[key(s, i)] = true
    moved_entries[key(move.to[1] + 1, move.to[2] + 1)] = entry
  end
  local deleted_sections = {}
  for _, s in ipairs(changes.deletedSections or {}) do
    deleted_sections[s + 1] = true
  end

  -- 1. Remove rows and sections, bottom up, so earlier line numbers stay valid.
  for s = #self.sections, 1, -1 do
    local section = self.sections[s]
    if deleted_sections[s] then
      local first = self:section_line(s)
      self:edit(first, first + self:header_lines() + #section.rows, {})
      table.remove(self.sections, s)
    else
      for i = #section.rows, 1, -1 do
        if removed[key(s, i)] then
          local line = self:row_line(s, i)
          self:edit(line, line + 1, {})
          table.remove(section.rows, i)
        end
      end
    end
  end

  -- 2. Insert new sections (their titles are read afterwards), top down.
  for _, s0 in ipairs(vim.fn.sort(vim.deepcopy(changes.insertedSections or {}), 'n')) do
    local s = s0 + 1
    assert(s <= #self.sections + 1, 'insertedSections out of range')
    table.insert(self.sections, s, { title_pending = true, rows = {} })
    if self.show_headers then
      local line = self:section_line(s)
      self:edit(line, line, { self:header_text(self.sections[s]) })
    end
  end

  -- 3. Place inserted and moved rows, top down, in new coordinates.
  local placed = {}
  for _, path in ipairs(changes.inserted or {}) do
    table.insert(placed, { path[1], path[2] })
  end
  for _, move in ipairs(changes.moved or {}) do
    table.insert(placed, { move.to[1], move.to[2] })
  end
  for _, path in ipairs(sorted_paths(placed)) do
    local s, i = path[1] + 1, path[2] + 1
    local section = assert(self.sections[s], 'inserted section out of range')
    assert(i <= #section.rows + 1, 'inserted item out of range')
    local entry = moved_entries[key(s, i)] or { pending = true }
    table.insert(section.rows, i, entry)
    local line = self:row_line(s, i)
    self:edit(line, line, { self:row_text(entry) })
  end

  -- 4. Updated rows keep their line and are read again.
  for _, path in ipairs(changes.updated or {}) do
    local entry = assert(self.sections[path[1] + 1] and self.sections[path[1] + 1].rows[path[2] + 1], 'updated out of range')
    entry.pending = true
  end
end

--- Reads the values of pending rows (one objectsInSection per section, over the range
--- that holds them) and pending section titles, then rewrites just those lines.
function ListView:read_pending()
  if self.reading then
    return -- the answer in flight will look again
  end
  local ranges, titles_pending = {}, false
  for s, section in ipairs(self.sections) do
    titles_pending = titles_pending or section.title_pending or false
    local first, last
    for i, entry in ipairs(section.rows) do
      if entry.pending then
        first = first or i
        last = i
      end
    end
    if first then
      table.insert(ranges, { section = s, first = first, last = last })
    end
  end
  if #ranges == 0 and not titles_pending then
    return
  end
  self.reading = true
  local version = self.version
  local outstanding = #ranges + (titles_pending and 1 or 0)
  local stale = false
  local function done()
    outstanding = outstanding - 1
    if outstanding == 0 then
      self.reading = false
      if stale or self.version ~= version then
        self:read_pending()
      else
        self:update_loaded_status()
      end
    end
  end
  if titles_pending then
    self.conn:request('sectionTitles', { source = self.source }, function(err, titles)
      if err then
        self:report_rpc_error('sectionTitles', err)
      elseif self.version == version then
        for s, section in ipairs(self.sections) do
          if section.title_pending then
            section.title_pending = nil
            section.title = titles[s]
            if self.show_headers then
              local line = self:section_line(s)
              self:edit(line, line + 1, { self:header_text(section) })
            end
          end
        end
      else
        stale = true
      end
      done()
    end)
  end
  for _, range in ipairs(ranges) do
    local params = { source = self.source, section = range.section - 1, start = range.first - 1, count = range.last - range.first + 1 }
    self.conn:request('objectsInSection', params, function(err, result)
      if err then
        self:report_rpc_error('objectsInSection', err)
      elseif self.version == version then
        local section = self.sections[range.section]
        for offset, value in ipairs(result.objects) do
          local i = range.first + offset - 1
          local entry = section.rows[i]
          if entry and entry.pending then
            entry.pending = nil
            entry.value = value
            local line = self:row_line(range.section, i)
            self:edit(line, line + 1, { self:row_text(entry) })
          end
        end
      else
        stale = true
      end
      done()
    end)
  end
end

-- Events -----------------------------------------------------------------------------

function ListView:report_rpc_error(method, err)
  vim.notify(string.format('datasourced: %s on %q failed: %s', method, self.source,
    require('datasourced.connection').describe_rpc_error(err)), vim.log.levels.ERROR)
end

--- "loaded N": the objects shown (placeholders and rows still being read left out).
function ListView:update_loaded_status()
  if not self.loaded then
    return
  end
  local count = 0
  for _, entry in ipairs(self:rows()) do
    if not entry.pending and not render.is_placeholder(entry.value) then
      count = count + 1
    end
  end
  self:set_status('loaded ' .. count)
end

function ListView:on_event(kind, params)
  if kind == 'didChange' then
    self:apply(params.changes or {})
  elseif kind == 'willLoadData' then
    self.loaded = false
    self:set_status('loading')
  elseif kind == 'finishedLoading' then
    self.loaded = true
    self:update_loaded_status()
  elseif kind == 'failedWithError' then
    local failure = params.error or {}
    self.loaded = false
    self:set_status('error: ' .. (failure.message or failure.kind or 'unknown'))
    local level = failure.kind == 'cancelled' and vim.log.levels.WARN or vim.log.levels.ERROR
    vim.notify(string.format('datasourced: %s: %s', self.source, render.error_text(failure)), level)
  end
end

--- Tells the daemon the row under `line` is shown: the last row of a paginated list (or
--- of a view over one) loads the next page.
function ListView:will_display(line)
  local path = self:index_path_at(line)
  if not path then
    return
  end
  self.conn:request('willDisplayObjectAtIndexPath', { source = self.source, indexPath = path }, function(err)
    if err then
      self:report_rpc_error('willDisplayObjectAtIndexPath', err)
    end
  end)
end

return ListView
