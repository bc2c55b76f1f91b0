-- A list buffer showing one data source: a header line per section (sectioned and multi
-- sources only), then one line per row, placeholders included.
--
-- The view keeps a model of the daemon's layout, so that a line maps to an index path
-- and a change set maps to line ranges:
--   sections = { { title = T, title_pending = bool, rows = { entry, ... } }, ... }
--   entry    = { value = JSON value }  or  { pending = true } until its value is read.
-- dataSource/didChange only carries index paths, so a change set first edits the lines
-- it touches (new rows appear as "…"), then the values of new and updated rows are read
-- with objectsInSection and just those lines are rewritten.
--
-- `version` counts the change sets applied. An answer is only used if no change set
-- arrived between its request and its answer (the daemon writes responses and
-- notifications in one ordered stream, so then the answer describes exactly our layout);
-- otherwise it is dropped and the read is made again.

local render = require('datasourced.render')
local Connection = require('datasourced.connection')

local ListView = {}
ListView.__index = ListView

local function key(section, item)
  return section .. ':' .. item
end

--- opts: source (the name shown), format(obj) -> string, title (the buffer's name).
function ListView.new(opts)
  local self = setmetatable({
    source = opts.source,
    format = opts.format or render.default_format,
    show_headers = false, -- known from describeSource: sectioned and multi sources
    sections = {},
    line_count = 0, -- lines of the list (the buffer always has one, maybe empty, line)
    version = 0,
    reading = false, -- a read of pending values is in flight
    reloading = false, -- a full read (describeSource + allObjects) is in flight
    reload_again = false,
    loaded = false,
    failure = nil, -- the last failed cycle: { error = ..., sources = { names to retry } }
    resyncs = 0, -- full reads made because the model disagreed with the daemon
    cursor_lines = {}, -- window -> the cursor line last seen (see note_cursors)
  }, ListView)
  local buf = vim.api.nvim_create_buf(true, true)
  self.buf = buf
  vim.api.nvim_buf_set_option(buf, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'datasourced')
  -- A second list with the same title gets a numbered name (buffer names are unique).
  local name = 'datasourced://' .. opts.title
  for n = 2, 100 do
    if pcall(vim.api.nvim_buf_set_name, buf, name) then
      break
    end
    name = 'datasourced://' .. opts.title .. ' (' .. n .. ')'
  end
  vim.b[buf].datasourced_source = self.source
  self:set_status('starting')
  return self
end

--- Starts (or restarts, after the daemon exited) showing the source through `conn`:
--- forgets the old model; the caller then reads it with reload().
function ListView:attach(conn)
  self.conn = conn
  self.sections = {}
  self.version = self.version + 1
  self.reading, self.reloading, self.reload_again = false, false, false
  self.loaded, self.failure = false, nil
  self:edit(0, -1, {})
end

--- `status` goes to b:datasourced_status (loading, loaded N, error: ..., cancelled,
--- daemon exited), which the list's statusline shows.
function ListView:set_status(status)
  self.status = status
  if vim.api.nvim_buf_is_valid(self.buf) then
    vim.b[self.buf].datasourced_status = status
  end
end

function ListView:report_rpc_error(method, err)
  vim.notify(string.format('datasourced: %s on %q failed: %s', method, self.source, Connection.describe_error(err)),
    vim.log.levels.ERROR)
end

--- Sends `method` about this list's source (`params.source` may name another); an error
--- answer is reported, a result goes to `on_result` if given.
function ListView:send(method, params, on_result)
  params = vim.tbl_extend('keep', params or {}, { source = self.source })
  self.conn:request(method, params, function(err, result)
    if err then
      return self:report_rpc_error(method, err)
    end
    if on_result then
      on_result(result)
    end
  end)
end

-- Lines --------------------------------------------------------------------------------

--- Replaces lines [first, last) of the list (0-based, end-exclusive; last -1: the end).
--- The only place that writes the buffer: it is modifiable just for this.
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
    -- An empty list is one empty line: the first insertion replaces it, the last
    -- deletion leaves it.
    vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  else
    vim.api.nvim_buf_set_lines(self.buf, first, last, false, lines)
  end
  vim.api.nvim_buf_set_option(self.buf, 'modifiable', false)
  self:note_cursors()
end

--- Records the cursor line of every window showing the list, after we moved it (by
--- editing lines around it): the CursorMoved that follows is not the user's move.
function ListView:note_cursors()
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    self.cursor_lines[win] = vim.api.nvim_win_get_cursor(win)[1]
  end
end

function ListView:row_text(entry)
  if entry.pending then
    return render.pending_text()
  end
  return render.row_text(entry.value, self.format)
end

function ListView:header_text(section)
  return render.header_text(section.title, section.title_pending)
end

function ListView:header_lines()
  return self.show_headers and 1 or 0
end

--- The 0-based line of section s's header (of its first row when there are no headers).
function ListView:section_line(s)
  local line = 0
  for i = 1, s - 1 do
    line = line + self:header_lines() + #self.sections[i].rows
  end
  return line
end

--- The 0-based line of the row at section s, item i (both 1-based).
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

--- The daemon's index path {section, item} (0-based) of a 1-based buffer line; nil for
--- a header line or past the end.
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

--- The 1-based buffer line of an index path {section, item}, or nil.
function ListView:line_of(path)
  local s, i = path[1] + 1, path[2] + 1
  if not self.sections[s] or not self.sections[s].rows[i] then
    return nil
  end
  return self:row_line(s, i) + 1
end

--- The value of the row on a 1-based line (nil for headers and rows still being read).
function ListView:object_at(line)
  local path = self:index_path_at(line)
  local entry = path and self.sections[path[1] + 1].rows[path[2] + 1]
  return entry and entry.value
end

-- Full read ----------------------------------------------------------------------------

--- Reads the layout and every row (describeSource, then allObjects) and redraws all.
--- Used when a list is opened and whenever the model cannot be trusted.
function ListView:reload(callback)
  if self.reloading then
    self.reload_again = true
    return
  end
  self.reloading, self.reload_again = true, false
  local version = self.version
  local description
  self.conn:request('describeSource', { source = self.source }, function(err, result)
    if err then
      self:set_status('error: ' .. Connection.describe_error(err))
      self:report_rpc_error('describeSource', err)
    end
    description = result
  end)
  self.conn:request('allObjects', { source = self.source }, function(err, objects)
    self.reloading = false
    if not description then
      return -- describeSource failed, and said so
    end
    if err then
      return self:report_rpc_error('allObjects', err)
    end
    if self.reload_again or self.version ~= version then
      return self:reload(callback) -- a change set arrived between the two answers
    end
    self.version = self.version + 1 -- answers to reads made before are about the old model
    self.kind = description.kind
    self.show_headers = description.kind == 'sectioned' or description.kind == 'multi'
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
    self:update_loaded_status()
    if callback then
      callback()
    end
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

--- Applies a change set (Protocol.md, "Notifications"), editing only the lines it
--- touches. If it does not fit our model, everything is read again.
function ListView:apply(changes)
  if self.reloading then
    -- The full read in flight may predate this change: it will be made again.
    self.reload_again = true
    return
  end
  self.version = self.version + 1
  -- A cursor on the last line keeps its line number. Rows arriving above it would
  -- otherwise carry it along with the trailing loading row to the new last line, and
  -- each page would at once ask for the next: the list would load to the end by itself
  -- instead of as the user scrolls. (A list view keeps its scroll position too.)
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
  self:note_cursors()
  if not ok then
    self.resyncs = self.resyncs + 1
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
    assert(self.sections[s + 1], 'deletedSections out of range')
    deleted_sections[s + 1] = true
  end

  -- 1. Old coordinates: remove deleted sections and rows, bottom up, so that the line
  --    numbers above stay valid; each run of adjacent removed rows is one edit.
  for s = #self.sections, 1, -1 do
    local section = self.sections[s]
    if deleted_sections[s] then
      local first = self:section_line(s)
      self:edit(first, first + self:header_lines() + #section.rows, {})
      table.remove(self.sections, s)
    else
      local i = #section.rows
      while i >= 1 do
        if removed[key(s, i)] then
          local last = i
          while i > 1 and removed[key(s, i - 1)] do
            i = i - 1
          end
          local line = self:row_line(s, i)
          self:edit(line, line + (last - i + 1), {})
          for _ = i, last do
            table.remove(section.rows, i)
          end
        end
        i = i - 1
      end
    end
  end

  -- 2. New coordinates: insert new sections top down (titles are read afterwards).
  local inserted_sections = vim.deepcopy(changes.insertedSections or {})
  table.sort(inserted_sections)
  for _, s0 in ipairs(inserted_sections) do
    local s = s0 + 1
    assert(s <= #self.sections + 1, 'insertedSections out of range')
    table.insert(self.sections, s, { title_pending = true, rows = {} })
    if self.show_headers then
      local line = self:section_line(s)
      self:edit(line, line, { self:header_text(self.sections[s]) })
    end
  end

  -- 3. Place inserted and moved rows top down; each run of adjacent new positions is
  --    one edit (a page of rows appended is one nvim_buf_set_lines).
  local placed = {}
  for _, path in ipairs(changes.inserted or {}) do
    table.insert(placed, { path[1] + 1, path[2] + 1 })
  end
  for _, move in ipairs(changes.moved or {}) do
    table.insert(placed, { move.to[1] + 1, move.to[2] + 1 })
  end
  sorted_paths(placed)
  local n = 1
  while n <= #placed do
    local s, first = placed[n][1], placed[n][2]
    local section = assert(self.sections[s], 'inserted section out of range')
    assert(first <= #section.rows + 1, 'inserted item out of range')
    local lines = {}
    local i = first
    repeat
      local entry = moved_entries[key(s, i)] or { pending = true }
      table.insert(section.rows, i, entry)
      table.insert(lines, self:row_text(entry))
      n, i = n + 1, i + 1
    until n > #placed or placed[n][1] ~= s or placed[n][2] ~= i
    local line = self:row_line(s, first)
    self:edit(line, line, lines)
  end

  -- 4. Updated rows keep their line; their new values are read.
  for _, path in ipairs(changes.updated or {}) do
    local section = self.sections[path[1] + 1]
    local entry = assert(section and section.rows[path[2] + 1], 'updated out of range')
    entry.pending = true
  end
end

--- Reads the values of pending rows (one objectsInSection per section, over the range
--- holding them) and pending section titles, then rewrites just those lines.
function ListView:read_pending()
  if self.reading or self.reloading then
    return -- the read in flight looks again when it ends; a full read needs none
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
    self:update_loaded_status()
    return
  end
  self.reading = true
  local version = self.version
  local outstanding = #ranges + (titles_pending and 1 or 0)
  local function done()
    outstanding = outstanding - 1
    if outstanding == 0 then
      self.reading = false
      self:read_pending() -- more may be pending (a change set came meanwhile)
    end
  end
  if titles_pending then
    self.conn:request('sectionTitles', { source = self.source }, function(err, titles)
      if err then
        self:report_rpc_error('sectionTitles', err)
        self.version = self.version + 1 -- no retry loop on a persistent error
        self:reload()
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
      end
      done()
    end)
  end
  for _, range in ipairs(ranges) do
    local params = {
      source = self.source,
      section = range.section - 1,
      start = range.first - 1,
      count = range.last - range.first + 1,
    }
    self.conn:request('objectsInSection', params, function(err, result)
      if err then
        self:report_rpc_error('objectsInSection', err)
        self.version = self.version + 1
        self:reload()
      elseif self.version == version then
        -- Rewrite each run of rows that were pending with one edit (a new page is one run).
        local section = self.sections[range.section]
        local run_first, run_lines = nil, {}
        local function flush()
          if run_first then
            local line = self:row_line(range.section, run_first)
            self:edit(line, line + #run_lines, run_lines)
            run_first, run_lines = nil, {}
          end
        end
        for offset, value in ipairs(result.objects) do
          local i = range.first + offset - 1
          local entry = section.rows[i]
          if entry and entry.pending then
            entry.pending, entry.value = nil, value
            run_first = run_first or i
            table.insert(run_lines, self:row_text(entry))
          else
            flush()
          end
        end
        flush()
      end
      done()
    end)
  end
end

--- A cheap check after each load cycle: the daemon's section counts must be ours.
--- If not, something was missed or misapplied: read everything again.
function ListView:verify()
  if self.reloading then
    return
  end
  local version = self.version
  self.conn:request('describeSource', { source = self.source }, function(err, description)
    if err or self.reloading or self.version ~= version then
      return -- a later change set (or reload) will be checked by its own cycle
    end
    local same = #description.counts == #self.sections
    for s, count in ipairs(description.counts) do
      same = same and #self.sections[s].rows == count
    end
    if not same then
      self.resyncs = self.resyncs + 1
      self:reload()
    end
  end)
end

-- Events -------------------------------------------------------------------------------

--- "loaded N": N objects shown, placeholders and rows still being read left out.
function ListView:update_loaded_status()
  if not self.loaded then
    return
  end
  local count = 0
  for _, section in ipairs(self.sections) do
    for _, entry in ipairs(section.rows) do
      if not entry.pending and not render.is_placeholder(entry.value) then
        count = count + 1
      end
    end
  end
  self:set_status('loaded ' .. count)
end

--- The sources to retry after a failure: a sectioned source names its failed child in
--- error.source, a multi source each failed child in error.failures.
local function failed_sources(own, failure)
  if type(failure.failures) == 'table' and #failure.failures > 0 then
    local names = {}
    for _, f in ipairs(failure.failures) do
      table.insert(names, f.source or own)
    end
    return names
  end
  return { failure.source or own }
end

--- A dataSource/* notification about this view's source (`kind` without the prefix).
function ListView:on_event(kind, params)
  if kind == 'didChange' then
    self:apply(params.changes or {})
  elseif kind == 'willLoadData' then
    self.loaded, self.failure = false, nil
    self:set_status('loading')
  elseif kind == 'finishedLoading' then
    self.loaded = true
    self:update_loaded_status()
    self:verify()
  elseif kind == 'failedWithError' then
    local failure = params.error or {}
    self.loaded = false
    self.failure = { error = failure, sources = failed_sources(self.source, failure) }
    if failure.kind == 'cancelled' then
      self:set_status('cancelled')
    else
      self:set_status('error: ' .. render.error_text(failure))
    end
    self:verify()
  end
end

--- Tells the daemon that the row on `line` (1-based) is shown: the last row of a
--- paginated source (or of a view over one) loads the next page.
function ListView:will_display(line)
  local path = self:index_path_at(line)
  if not path or not self.conn then
    return
  end
  self:send('willDisplayObjectAtIndexPath', { indexPath = path })
end

return ListView
