-- A list buffer showing one data source: a header line per section (sectioned and multi
-- sources only), then one line per row, placeholders included.
--
-- The view keeps a model of the daemon's layout, so that a line maps to an index path
-- and a change set maps to line ranges:
--   sections = { { title = T, title_pending = bool, header = bool, rows = { entry, ... } }, ... }
--   entry    = { value = JSON value }  or  { pending = true } until its value is read.
-- `header` says whether the section's header line is in the buffer: a section titled
-- null that holds nothing but placeholders (the trailing loading row of a sectioned view
-- over a paginated source) has none.
--
-- Keeping the model true to the daemon's:
-- * Protocol 1.1: every change set names the revision it applies to
--   (`previousRevision`) and the one it makes (`revision`); reads answer with the
--   revision they describe. A change set that does not follow ours means one was missed:
--   everything is read again. With `changeValues`, a change set carries the values of
--   its new and updated rows, and applies without a round trip.
-- * Protocol 1.0 (fallback): `version` counts the change sets applied; an answer is used
--   only if none arrived between its request and its answer (the daemon writes responses
--   and notifications in one ordered stream); new rows are read with objectsInSection;
--   after each load the section counts are checked against the daemon's.

local render = require('datasourced.render')
local Connection = require('datasourced.connection')

local ListView = {}
ListView.__index = ListView

local namespace = vim.api.nvim_create_namespace('datasourced')
ListView.namespace = namespace
-- The characters a filter's query matched (protocol 1.4's match positions), kept apart
-- from the rows' own highlights: they are read after the rows, and go with every filter.
local match_namespace = vim.api.nvim_create_namespace('datasourced_match')
ListView.match_namespace = match_namespace

-- Lists of counted placeholders (protocol 1.5) are read lazily: a list of 1,000,000 rows
-- has as many lines, but only the rows on screen are read from the daemon. A row not read
-- yet is this one shared entry (never changed in place: entries are replaced), shown as an
-- unloaded row until it is read.
local UNREAD = { unread = true }
ListView.UNREAD = UNREAD

-- How long the cursor rests on a row before a lazy list reads what is on screen and
-- tells the daemon that an unloaded row is shown: keys held down (j, <C-d>) ask nothing
-- on the rows they pass.
ListView.DISPLAY_DEBOUNCE_MS = 80

-- Rows read around those on screen, per window, as a share of its height.
local READ_AROUND = 1

-- Only what is visible is drawn. The line of an unloaded row (a counted placeholder, or a
-- row of a lazy list not read yet) is empty in the buffer: its text (`  … row N`, dim) is
-- drawn over it as Neovim draws the line (a decoration provider, as syntax highlighters
-- do), so a list of a million rows is a million empty lines, and only the rows on screen
-- ever get a text or a highlight. Scrolling, G, line numbers and the statusline work as
-- on any buffer; `/` finds the text of loaded rows (unloaded ones have none).
local BLANK = ''
-- Tables of n empty strings, kept: a list writes the same few lengths again and again.
local blanks = setmetatable({}, { __mode = 'v' })
local function blank_lines(n)
  local lines = blanks[n]
  if not lines then
    lines = {}
    for i = 1, n do
      lines[i] = BLANK
    end
    blanks[n] = lines
  end
  return lines
end

-- A run of at least this many empty lines is written in one piece (:read of a file of
-- empty lines: a tenth of the time of nvim_buf_set_lines, and no Lua strings).
local BULK_LINES = 2000
-- A lazy list's run of unloaded rows that ends the list is taken in two steps: the rows
-- a window can show (NEAR_LINES at least) at once, the rest (`owed`: neither in the
-- model's rows nor in the buffer yet) once the rows on screen are read and drawn, so that
-- the first screen of a million-row list comes as fast as a short list's (see pay()).
local NEAR_LINES = 300
-- The latest the owed lines wait, when no read of the rows on screen ends first; and how
-- long they wait once those rows are written (0: not at all, see pay_now). Fields: a test
-- holds them back.
ListView.PAY_AFTER_MS = 300
ListView.PAY_AFTER_DRAWN_MS = 0

local unloaded_namespace = vim.api.nvim_create_namespace('datasourced_unloaded')
local shown = setmetatable({}, { __mode = 'v' }) -- buffer -> the list it shows

-- Rows an action changed that the server has not settled yet (protocol 1.9): dimmed,
-- with a mark at the end of the line. Kept apart from the rows' own highlights, and laid
-- again after the lines change (see mark_pending).
local pending_namespace = vim.api.nvim_create_namespace('datasourced_pending')
ListView.pending_namespace = pending_namespace
ListView.PENDING_MARK = '…'
vim.api.nvim_set_decoration_provider(unloaded_namespace, {
  on_win = function(_, _, buf)
    return shown[buf] ~= nil -- a sectioned view over a counted source has unloaded rows too
  end,
  on_line = function(_, _, buf, row)
    local view = shown[buf]
    local text = view and view:unloaded_text(row + 1)
    if text then
      pcall(vim.api.nvim_buf_set_extmark, buf, unloaded_namespace, row, 0, {
        virt_text = { { text, render.groups.unloaded } }, virt_text_pos = 'overlay', hl_mode = 'combine',
        ephemeral = true,
      })
    end
  end,
})

-- A table with room for n array items (LuaJIT's table.new): a million rows are not grown
-- by doubling.
local new_table = (function()
  local ok, new = pcall(require, 'table.new')
  return ok and new or function()
    return {}
  end
end)()

local function is_null(title)
  return title == nil or title == vim.NIL
end

--- opts: source (the name shown), format(obj) -> string (nil: the default format, which
--- puts the identity key first), title (the buffer's name), buf (a buffer to reuse).
function ListView.new(opts)
  local self = setmetatable({
    source = opts.source,
    title = opts.title,
    custom_format = opts.format,
    identity_key = nil, -- from describeSource, for the default format
    show_headers = false, -- known from describeSource: sectioned and multi sources
    sections = {},
    line_count = 0, -- lines of the list (the buffer always has one, maybe empty, line)
    owed = 0, -- unloaded rows ending the list, in line_count but not yet in the rows or the buffer (see pay)
    spare = 0, -- empty lines after the list's, kept from a list started anew (see clear)
    known = false, -- the model has been read from the daemon (and not lost since)
    revision = nil, -- the daemon's revision the model shows (protocol 1.1)
    version = 0, -- model changes applied (the 1.0 fallback's check of answers)
    reading = false, -- a read of pending values is in flight
    reloading = false, -- a full read (describeSource + allObjects) is in flight
    reload_again = false,
    detached = false, -- replaced by a new list in the same buffer: writes nothing more
    loaded = false,
    failure = nil, -- the last failed cycle: { error = ..., sources = { names to retry } }
    resyncs = 0, -- full reads made because the model disagreed with the daemon
    cursor_lines = {}, -- window -> the cursor line last seen (see note_cursors)
    user_moved = {}, -- window -> true once the user moved the cursor in the list
    state = 'starting', -- what set_status was told last; `status` adds the stale mark
    stale = {}, -- source name -> cachedAt (or true): its rows are cached, not confirmed yet
    under = {}, -- names of the sources the list is made from (its own included)
    remote_sources = {}, -- the remote and paginated ones among them (for refresh-interval)
    filter = nil, -- { name, base, query, key_paths, ready }: the list shows a filtered source over `base`
    matches_read = nil, -- the revision whose match positions are highlighted
    reading_matches = false,
    load_states = nil, -- protocol 1.5: the source's {refresh, prepend, append}, when it is paginated
    lazy = false, -- a paginated source of counted placeholders: rows are read as they show
    display_timer = nil,
    actions = {}, -- action name -> { source, spec, identity_key }: what its sources declare
    marked = false, -- rows are marked pending (see mark_pending)
    marking = false, -- a mark_pending is scheduled
  }, ListView)
  self.format = function(value)
    if self.custom_format then
      return self.custom_format(value)
    end
    return render.default_format(value, self.identity_key)
  end
  local buf = opts.buf
  if not buf then
    buf = vim.api.nvim_create_buf(true, true)
    -- A second list with the same title gets a numbered name (buffer names are unique).
    local name = 'datasourced://' .. opts.title
    for n = 2, 100 do
      if pcall(vim.api.nvim_buf_set_name, buf, name) then
        break
      end
      name = 'datasourced://' .. opts.title .. ' (' .. n .. ')'
    end
  end
  self.buf = buf
  shown[buf] = self
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  -- Nothing to undo (the list is not modifiable), and deleting a million lines would
  -- keep them all for it.
  vim.bo[buf].undolevels = -1
  vim.bo[buf].filetype = 'datasourced'
  vim.b[buf].datasourced_source = self.source
  self:set_status('starting')
  return self
end

--- Starts (or restarts, after the daemon exited) showing the source through `conn`:
--- forgets the old model; the caller then reads it with reload().
function ListView:attach(conn)
  self.conn = conn
  self.sections = {}
  self.known, self.revision = false, nil
  self.version = self.version + 1
  self.reading, self.reloading, self.reload_again = false, false, false
  self.loaded, self.failure = false, nil
  self.load_states, self.lazy = nil, false
  self.stale, self.under, self.remote_sources = {}, { [self.source] = true }, {}
  self:clear()
end

-- How long the spare lines of a list started anew wait for its rows before they go.
ListView.SPARE_MS = 2000

--- Empties the list. A buffer of BULK_LINES lines or more (a list of a million rows started
--- anew: reopened, or its daemon restarted) keeps its lines, made empty (only those with a
--- text are written), as spare lines: the rows read next take them (see edit and owe), and
--- those left after SPARE_MS go. Deleting a million lines takes Neovim most of a second.
function ListView:clear()
  local lines = vim.api.nvim_buf_is_valid(self.buf) and vim.api.nvim_buf_line_count(self.buf) or 0
  if self.detached or lines < BULK_LINES then
    return self:edit(0, -1, {})
  end
  self.owed, self.line_count, self.spare = 0, 0, lines
  for _, ns in ipairs({ namespace, match_namespace, pending_namespace }) do
    vim.api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
  end
  self.marked = false
  vim.bo[self.buf].modifiable = true
  local ok, problem = pcall(self.blank_texts, self, 0, lines)
  vim.bo[self.buf].modifiable = false
  if not ok then
    error(problem, 0)
  end
  self:note_cursors()
  vim.defer_fn(function()
    self:trim()
  end, self.SPARE_MS)
end

--- Deletes the spare lines (see clear) the list did not take.
function ListView:trim()
  if self.spare == 0 or self.detached or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  self.spare = 0
  vim.bo[self.buf].modifiable = true
  -- An empty list keeps one empty line.
  local ok, problem = pcall(vim.api.nvim_buf_set_lines, self.buf, math.max(self.line_count, 1), -1, false, {})
  vim.bo[self.buf].modifiable = false
  if not ok then
    error(problem, 0)
  end
  self:note_cursors()
end

--- Empties the lines [first, last) (0-based) that hold a text, the buffer modifiable: the
--- others are left alone (nextnonblank finds them, a million in a few milliseconds; a line
--- of spaces alone counts as empty).
function ListView:blank_texts(first, last)
  local found = {}
  vim.api.nvim_buf_call(self.buf, function()
    local at = first + 1
    while at <= last do
      at = vim.fn.nextnonblank(at)
      if at == 0 or at > last then
        break
      end
      found[#found + 1] = at - 1
      at = at + 1
    end
  end)
  local k = 1
  while k <= #found do
    local from = found[k]
    local to = from + 1
    while found[k + 1] == to do
      k, to = k + 1, to + 1
    end
    vim.api.nvim_buf_set_lines(self.buf, from, to, false, blank_lines(to - from))
    k = k + 1
  end
end

--- `state` goes to b:datasourced_status (loading, loaded N, error: ..., cancelled,
--- daemon exited), which the list's statusline shows, followed by what loads or failed
--- above and below the rows (protocol 1.5's load states: "· loading above", "· error
--- below: HTTP status 503 (R retries)"), then by "[cached 16:41]" while the rows shown
--- are cached ones the server has not confirmed yet (protocol 1.2).
function ListView:set_status(state)
  if self.detached then
    return
  end
  self.state = state
  local directions = self:direction_text()
  if directions then
    state = state .. ' · ' .. directions
  end
  local marker = self:stale_marker()
  local status = marker and (state .. ' ' .. marker) or state
  self.status = status
  if vim.api.nvim_buf_is_valid(self.buf) then
    vim.b[self.buf].datasourced_status = status
    vim.b[self.buf].datasourced_stale = marker ~= nil
    -- A statusline reads the variable only when it is redrawn, which a change of a
    -- variable does not ask for.
    if #vim.fn.win_findbuf(self.buf) > 0 then
      pcall(vim.cmd, 'redrawstatus!')
    end
  end
end

-- The key that retries (init.lua sets it from the keymaps), named where a page failed.
ListView.retry_key = 'R'

local DIRECTIONS = { { 'prepend', 'above' }, { 'append', 'below' } }

--- The state ('idle', 'loading', 'error', 'endReached') of a direction of the source's
--- load states, or nil before the daemon told any (not paginated, or before 1.5).
function ListView:direction_state(direction)
  local states = self.load_states
  local state = type(states) == 'table' and states[direction]
  return type(state) == 'table' and state.state or nil
end

--- What loads or failed above and below the rows, for the status; nil when nothing does.
--- A page that loads or fails at either end leaves the rows shown: the status says
--- where, and the retry key asks for that page alone.
function ListView:direction_text()
  local parts = {}
  for _, direction in ipairs(DIRECTIONS) do
    local state = self.load_states and self.load_states[direction[1]]
    local name = self:direction_state(direction[1])
    if name == 'loading' then
      table.insert(parts, 'loading ' .. direction[2])
    elseif name == 'error' then
      local retry = ListView.retry_key and (ListView.retry_key .. ' retries') or ':DatasourcedRetry retries'
      table.insert(parts, string.format('error %s: %s (%s)', direction[2],
        render.error_text(state.error, { short = true }), retry))
    end
  end
  return #parts > 0 and table.concat(parts, ', ') or nil
end

--- Whether a load of one end (a page before or after the rows) is in flight or failed:
--- the rows stay, and the status counts them rather than saying "loading" or "error".
function ListView:end_in_play()
  if self:direction_state('refresh') == 'loading' or self:direction_state('refresh') == 'error' then
    return false
  end
  for _, direction in ipairs(DIRECTIONS) do
    local name = self:direction_state(direction[1])
    if name == 'loading' or name == 'error' then
      return true
    end
  end
  return false
end

--- A dataSource/didChangeLoadState (or a description's loadStates).
function ListView:set_load_states(states)
  self.load_states = type(states) == 'table' and states or nil
  if self:end_in_play() and (self.state == 'loading' or vim.startswith(self.state or '', 'error: ')) then
    return self:set_status(self:count_text())
  end
  self:set_status(self.state)
end

--- Whether the source has a page before its first row that nothing loads yet: the
--- cursor on the first row then asks for it.
function ListView:can_prepend()
  return self:direction_state('prepend') == 'idle' and self:direction_state('refresh') ~= 'loading'
end

--- Whether the 1-based line holds the list's first row, an object (not a placeholder).
function ListView:is_first_row(line)
  local path = self:index_path_at(line)
  if not path or path[1] ~= 0 or path[2] ~= 0 then
    return false
  end
  local value = self:object_at(line)
  return value ~= nil and not render.is_placeholder(value)
end

-- What a request was for, in a message: people did not send protocol methods.
local REQUEST_WORDS = {
  fetchData = 'loading',
  fetchNextPage = 'loading the next page',
  willDisplayObjectAtIndexPath = 'loading the next page',
  fetchPreviousPage = 'loading the page before',
  retry = 'retrying',
  cancelFetch = 'cancelling',
  setRefreshInterval = 'the refresh interval',
  describeSource = 'reading the list',
  allObjects = 'reading the list',
}

function ListView:report_rpc_error(method, err)
  vim.notify(string.format('datasourced: %s: %s was refused: %s', self.source, REQUEST_WORDS[method] or method,
    Connection.describe_error(err)), vim.log.levels.ERROR)
end

--- "[cached 16:41]" while a source of the list shows cached rows the server has not
--- confirmed yet (the oldest, if several), "[updating]" while it shows a former query's
--- rows; nil when none does.
function ListView:stale_marker()
  local any, oldest = false, nil
  for _, cached_at in pairs(self.stale) do
    any = true
    -- RFC 3339 times in UTC, to the millisecond: their text sorts as they do.
    if type(cached_at) == 'string' and (oldest == nil or cached_at < oldest) then
      oldest = cached_at
    end
  end
  if any and oldest == nil then
    -- Stale without a time: rows a query changed by updateSource left up (protocol 1.4)
    -- until the new query's rows come, not rows of the cache.
    return '[updating]'
  end
  return any and render.stale_marker(oldest) or nil
end

--- Whether `source`'s rows are unconfirmed cached ones (a dataSource/didChangeFreshness,
--- or a description's `stale` and `cachedAt`); the statusline says so.
function ListView:set_freshness(source, stale, cached_at)
  local before = self.stale[source]
  self.stale[source] = stale and (type(cached_at) == 'string' and cached_at or true) or nil
  if before ~= self.stale[source] then
    self:set_status(self.state)
  end
end

--- The sources the list is made from, as describeSource described them (name ->
--- description): their freshness concerns the list, and refresh intervals apply to the
--- remote and paginated ones.
function ListView:adopt_sources(descriptions)
  -- A filtered source the spec shows has section headers when the source under its
  -- filters is sectioned or multi.
  local below, seen = descriptions[self.source], {}
  if below and below.kind == 'filtered' and not self.filter then
    while below and below.kind == 'filtered' and not seen[below.source] do
      seen[below.source] = true
      below = descriptions[below.source]
    end
    local headers = below ~= nil and (below.kind == 'sectioned' or below.kind == 'multi')
    if headers ~= self.show_headers then
      self.show_headers = headers
      self:edit(0, -1, self:all_items())
    end
  end
  self.under, self.remote_sources, self.actions = { [self.source] = true }, {}, {}
  local names = vim.tbl_keys(descriptions)
  table.sort(names) -- an action two sources declare is the first one's, by name
  for _, name in ipairs(names) do
    local description = descriptions[name]
    self.under[name] = true
    if description.kind == 'remote' or description.kind == 'paginated' then
      table.insert(self.remote_sources, name)
      self:set_freshness(name, description.stale == true, description.cachedAt)
    end
    if type(description.actions) == 'table' then
      for action, spec in pairs(description.actions) do
        if type(spec) == 'table' and not self.actions[action] then
          self.actions[action] = { source = name, spec = spec, identity_key = description.identityKey }
        end
      end
    end
    -- Mutations made before this list opened (by another list of the source) are marked
    -- as well as this list's own.
    if type(description.pendingMutations) == 'table' and self.conn then
      for _, pending in ipairs(description.pendingMutations) do
        if type(pending) == 'table' and type(pending.mutation) == 'string' then
          self.conn:track_mutation(name, pending.mutation, {
            action = pending.action,
            identity = ListView.mutation_identity(pending.identity, pending.mutation, self.actions[pending.action]),
          })
        end
      end
    end
  end
  table.sort(self.remote_sources)
  self:schedule_marks()
end

--- The identity of the row a mutation changes: the one it was made on, else (an insert)
--- the new row's, `pending:m3` until the server gives its own (or what its values name).
function ListView.mutation_identity(identity, mutation, declared, values)
  if identity ~= nil and identity ~= vim.NIL then
    return identity
  end
  local key = declared and declared.identity_key
  local given = type(values) == 'table' and key and render.at_key_path(values, key)
  if given ~= nil and given ~= vim.NIL then
    return given
  end
  return 'pending:' .. mutation
end

--- The identity key of the rows the list's actions change (the declaring source's), else
--- the shown source's.
function ListView:row_identity_key()
  for _, declared in pairs(self.actions) do
    if declared.identity_key then
      return declared.identity_key
    end
  end
  return self.identity_key or 'id'
end

--- Marks the rows with pending mutations (on the sources the list is made from): each
--- line dimmed (DatasourcedPending) with a mark at its end. Laid anew each time: rows
--- move with every change set.
function ListView:mark_pending()
  self.marking = false
  if self.detached or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  local identities = {}
  local any = false
  for _, tracked in pairs(self.conn and self.conn.mutations or {}) do
    if self.under[tracked.source] then
      identities[tostring(tracked.identity)] = true
      any = true
    end
  end
  if not any and not self.marked then
    return
  end
  vim.api.nvim_buf_clear_namespace(self.buf, pending_namespace, 0, -1)
  self.marked = false
  if not any then
    return
  end
  local key = self:row_identity_key()
  local line = 0
  for _, section in ipairs(self.sections) do
    line = line + (section.header and 1 or 0)
    for _, entry in ipairs(section.rows) do
      local value = entry.value
      if type(value) == 'table' and not render.is_placeholder(value) then
        local identity = render.at_key_path(value, key)
        if identity ~= nil and identities[tostring(identity)] and line < self.line_count then
          local text = vim.api.nvim_buf_get_lines(self.buf, line, line + 1, false)[1] or ''
          pcall(vim.api.nvim_buf_set_extmark, self.buf, pending_namespace, line, 0, {
            end_row = line, end_col = #text, hl_group = render.groups.pending_row,
            virt_text = { { ListView.PENDING_MARK, render.groups.pending_row } }, virt_text_pos = 'eol',
            priority = 5000, -- over the row's own highlight
          })
          self.marked = true
        end
      end
      line = line + 1
    end
  end
end

--- Lays the pending marks again once the current change is written (once, however many
--- edits it makes).
function ListView:schedule_marks()
  if self.marking then
    return
  end
  self.marking = true
  vim.schedule(function()
    self:mark_pending()
  end)
end

--- The lines of the rows marked pending (1-based), with their marks' text: for tests
--- and statuslines.
function ListView:pending_lines()
  local found = {}
  if not vim.api.nvim_buf_is_valid(self.buf) then
    return found
  end
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(self.buf, pending_namespace, 0, -1, { details = true })) do
    local details = mark[4] or {}
    local virt = details.virt_text and details.virt_text[1] and details.virt_text[1][1] or ''
    table.insert(found, { line = mark[2] + 1, mark = virt, group = details.hl_group })
  end
  return found
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

--- Replaces lines [first, last) of the list (0-based, end-exclusive; last -1: the end)
--- with `items`, each { text, group }, or a text alone (an unloaded row's empty line,
--- drawn by the decoration provider above), then `blank` empty lines (default none: a run
--- of a million unloaded rows needs no million items). The only place that writes the
--- buffer: it is modifiable just for this.
function ListView:edit(first, last, items, blank)
  if self.detached then
    return -- another list took this buffer over (the spec was opened again)
  end
  blank = blank or 0
  if last < 0 then
    last = self.line_count
  end
  if self.owed > 0 and last > self.line_count - self.owed then
    if last == self.line_count and first <= self.line_count - self.owed then
      -- The edit takes every owed line away: they are never written.
      self.line_count, last, self.owed = self.line_count - self.owed, last - self.owed, 0
    else
      self:pay() -- it touches them: they are written first
    end
  end
  local was_empty, ended = self.line_count == 0, self.line_count
  self.line_count = self.line_count - (last - first) + #items + blank
  if not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  -- Spare lines (see clear) follow the list's: rows added at its end take them, and the
  -- buffer is never empty while there are any.
  local spare_taken = 0
  if self.spare > 0 then
    if first == ended and last == ended then
      spare_taken = math.min(self.spare, #items + blank)
      self.spare = self.spare - spare_taken
    end
    was_empty = false
  end
  -- Highlights are extmarks: those of the replaced lines go first, or they would slide
  -- onto the lines that follow.
  vim.api.nvim_buf_clear_namespace(self.buf, namespace, first, last)
  vim.api.nvim_buf_clear_namespace(self.buf, match_namespace, first, last)
  if self.marked then
    vim.api.nvim_buf_clear_namespace(self.buf, pending_namespace, first, last) -- laid again below
  end
  if was_empty or (self.line_count == 0 and self.spare == 0) then
    -- An empty list is one empty line: the first insertion replaces it, the last
    -- deletion leaves it.
    vim.api.nvim_buf_clear_namespace(self.buf, namespace, 0, -1)
    vim.api.nvim_buf_clear_namespace(self.buf, match_namespace, 0, -1)
    first, last = 0, -1
  end
  vim.bo[self.buf].modifiable = true
  local ok, problem
  if spare_taken > 0 then
    ok, problem = pcall(self.write_over_spare, self, first, items, blank, spare_taken)
  else
    ok, problem = pcall(self.write_lines, self, first, last, items, blank)
  end
  vim.bo[self.buf].modifiable = false
  if not ok then
    error(problem, 0)
  end
  for i, item in ipairs(items) do
    if type(item) == 'table' and item[2] and item[2] ~= render.groups.unloaded and #item[1] > 0 then
      vim.api.nvim_buf_set_extmark(self.buf, namespace, first + i - 1, 0,
        { end_row = first + i - 1, end_col = #item[1], hl_group = item[2] })
    end
  end
  self:note_cursors()
  if self.marked or (self.conn and self.conn.mutations and next(self.conn.mutations) ~= nil) then
    self:schedule_marks()
  end
end

--- Writes lines added at `at`, the end of the list, whose first `taken` go over spare
--- lines (empty already: only texts are written there); the rest are inserted after them.
function ListView:write_over_spare(at, items, blank, taken)
  local k = 1
  while k <= math.min(#items, taken) do
    local texts = {}
    local from = k
    while k <= math.min(#items, taken) do
      local item = items[k]
      local text = type(item) == 'string' and item or item[1]
      if text == BLANK then
        break
      end
      texts[#texts + 1] = text
      k = k + 1
    end
    if #texts > 0 then
      vim.api.nvim_buf_set_lines(self.buf, at + from - 1, at + k - 1, false, texts)
    end
    k = k + 1
  end
  if taken < #items + blank then
    local rest = {}
    for i = taken + 1, #items do
      rest[#rest + 1] = items[i]
    end
    local rest_blank = blank - math.max(0, taken - #items)
    self:write_lines(at + taken, at + taken, rest, rest_blank)
  end
end

--- Does edit()'s writing (the buffer modifiable): buffer lines [first, last) (last -1: the
--- end) become the texts of `items` then `blank` empty lines. A run of BULK_LINES empty
--- lines or more is read from a file (see insert_blank); BULK_LINES lines or more replaced
--- by as many or more (a list of a million rows read again) are written over, where they
--- or their new lines have a text, not deleted and written again.
function ListView:write_lines(first, last, items, blank)
  local buf = self.buf
  local old = (last < 0 and vim.api.nvim_buf_line_count(buf) or last) - first
  if old >= BULK_LINES and #items + blank >= old then
    self:blank_texts(first, first + old)
    return self:write_over_spare(first, items, blank, old)
  end
  local replaced = false -- [first, last) has been replaced (by the first piece written)
  local at = first -- where the next piece goes, once replaced
  local texts = {}
  local function put(lines)
    if not replaced then
      vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
      replaced = true
    elseif #lines > 0 then
      vim.api.nvim_buf_set_lines(buf, at, at, false, lines)
    end
    at = at + #lines
  end
  local function put_blank(n)
    if #texts > 0 then
      put(texts)
      texts = {}
    end
    if not replaced then
      put({ BLANK }) -- the replaced lines (or the empty buffer's one line) become the first
      n = n - 1
    end
    if n > 0 then
      self:insert_blank(at, n)
      at = at + n
    end
  end
  local run = 0 -- empty lines seen and not written yet
  -- A long run is written in bulk; a short one joins the texts.
  local function end_run()
    if run >= BULK_LINES then
      put_blank(run)
    else
      for _ = 1, run do
        texts[#texts + 1] = BLANK
      end
    end
    run = 0
  end
  for _, item in ipairs(items) do
    local text = type(item) == 'string' and item or item[1]
    if text == BLANK then
      run = run + 1
    else
      end_run()
      texts[#texts + 1] = text
    end
  end
  run = run + blank
  end_run()
  if #texts > 0 or not replaced then
    put(texts)
  end
end

-- A file of empty lines for insert_blank (kept for the next run of the same length).
local blank_file = { path = nil, lines = nil }

--- Inserts `n` empty lines before buffer line `at` (0-based) with :read of a file of n
--- line ends: Neovim reads a million of them in a tenth of the time nvim_buf_set_lines
--- takes to copy a million strings, and no Lua table of them is made. The windows keep
--- their cursors and views.
function ListView:insert_blank(at, n)
  if blank_file.lines ~= n then
    blank_file.path = blank_file.path or vim.fn.tempname()
    local file = assert(io.open(blank_file.path, 'wb'))
    file:write(string.rep('\n', n))
    file:close()
    blank_file.lines = n
  end
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  end
  local cpoptions = vim.o.cpoptions
  vim.o.cpoptions = cpoptions:gsub('[aAfF]', '') -- :read names no buffer and no alternate file
  local ok, problem = pcall(vim.api.nvim_buf_call, self.buf, function()
    vim.cmd(string.format('silent noautocmd keepalt keepjumps %dread ++ff=unix ++nobin %s', at,
      vim.fn.fnameescape(blank_file.path)))
  end)
  vim.o.cpoptions = cpoptions
  for win, view in pairs(views) do
    -- :read moves a cursor to the lines it read; a row below them has moved down.
    if view.lnum > at then
      view.lnum = view.lnum + n
    end
    if view.topline > at then
      view.topline = view.topline + n
    end
    pcall(vim.api.nvim_win_call, win, function()
      vim.fn.winrestview(view)
    end)
  end
  if not ok then
    error(problem, 0)
  end
end

--- How many of a run of unloaded rows that ends the list, from line `at` (0-based), to
--- take at once: those a window of the list can show (and read around), NEAR_LINES at
--- least. The others are owed.
function ListView:near_rows(at)
  local need = NEAR_LINES
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local info = vim.fn.getwininfo(win)[1]
    if info then
      need = math.max(need, info.topline + (2 + READ_AROUND) * math.max(info.height, 1) - at)
    end
  end
  return need
end

--- Adds `n` unloaded rows at the end of the list, owed: counted in its lines, but neither
--- in the last section's rows nor in the buffer until paid (see pay).
function ListView:owe(n)
  if n <= 0 then
    return
  end
  if self.spare > 0 then
    -- Spare lines (see clear) are theirs: only the rows are made.
    local taken = math.min(n, self.spare)
    self.spare, n = self.spare - taken, n - taken
    local section = self.sections[#self.sections]
    local rows = section and section.rows or {}
    local count = #rows
    for i = count + 1, count + taken do
      rows[i] = UNREAD
    end
    self.line_count = self.line_count + taken
    if n == 0 then
      return
    end
  end
  self.owed = self.owed + n
  self.line_count = self.line_count + n
  self:schedule_pay(self.PAY_AFTER_MS)
end

--- Takes the owed rows into the last section's rows and their empty lines into the
--- buffer: at once when an edit, a change set or a move needs them, else once the rows on
--- screen are drawn (schedule_pay).
function ListView:pay()
  local owed = self.owed
  if owed == 0 then
    return
  end
  self.owed = self.owed - owed
  local section = self.sections[#self.sections]
  local rows = section and section.rows or {}
  local count = #rows
  for i = count + 1, count + owed do
    rows[i] = UNREAD
  end
  if self.detached or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  vim.bo[self.buf].modifiable = true
  local ok, problem = pcall(self.insert_blank, self, vim.api.nvim_buf_line_count(self.buf), owed)
  vim.bo[self.buf].modifiable = false
  if not ok then
    error(problem, 0)
  end
  if self.marked or (self.conn and self.conn.mutations and next(self.conn.mutations) ~= nil) then
    self:schedule_marks()
  end
end

--- Draws the screen, then pays the owed lines: in one go, so that no key is read between
--- the first screen of a list and its full length.
function ListView:pay_now()
  if self.owed == 0 or self.detached or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  if #vim.fn.win_findbuf(self.buf) > 0 then
    pcall(vim.cmd, 'redraw')
  end
  self:pay()
end

--- Pays the owed lines `delay_ms` from now (0: once the main loop is free; an earlier
--- time given later wins), after a redraw: the screen shows the rows first. All at once
--- (a million empty lines are a tenth of a second or so): keys typed meanwhile wait, and
--- then find every line there (`50%`, `700000G`), which pieces with keys between them
--- would not.
function ListView:schedule_pay(delay_ms)
  if self.owed == 0 or self.detached then
    return
  end
  local uv = vim.uv or vim.loop
  delay_ms = delay_ms or 0
  local due = uv.now() + delay_ms
  if self.pay_due and self.pay_due <= due then
    return
  end
  self.pay_due = due
  self.pay_timer = self.pay_timer or uv.new_timer()
  self.pay_timer:stop()
  self.pay_timer:start(delay_ms, 0, vim.schedule_wrap(function()
    self.pay_due = nil
    self:pay_now()
  end))
end

--- A user's move in a window of the list (CursorMoved, WinScrolled) near the lines written
--- so far, while some are owed (keys typed in the moment between a counted list's first
--- lines and its first rows): they are written first. A cursor that went to the last line
--- written (G) goes on to the list's last line.
function ListView:pay_for_move(win)
  if self.owed == 0 then
    return
  end
  local written = vim.api.nvim_buf_line_count(self.buf)
  local line = vim.api.nvim_win_get_cursor(win)[1]
  if line + 2 * vim.api.nvim_win_get_height(win) < written then
    return -- far from the end: they come once the rows on screen are read
  end
  self:pay()
  if line == written then
    pcall(vim.api.nvim_win_set_cursor, win, { self.line_count, 0 })
  end
end

--- Records the cursor line of every window showing the list, after we moved it (by
--- editing lines around it): the CursorMoved that follows is not the user's move.
function ListView:note_cursors()
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    self.cursor_lines[win] = vim.api.nvim_win_get_cursor(win)[1]
  end
end

--- The item (see edit) of `entry`, the row at item `i` (from 1) of its section: an
--- unloaded row is an empty line, drawn as it shows (see unloaded_text).
function ListView:row_item(entry, i)
  if entry.unread or render.placeholder_kind(entry.value) == 'unloaded' then
    return BLANK
  elseif entry.pending then
    return { render.pending() }
  end
  return { render.row(entry.value, self.format) }
end

--- The text drawn over the empty line of an unloaded row (1-based line): `  … row N`;
--- nil for any other line.
function ListView:unloaded_text(line)
  local path = self:index_path_at(line)
  local entry = path and self.sections[path[1] + 1].rows[path[2] + 1]
  if not entry then
    return nil
  end
  if entry.unread or (self.lazy and entry.pending) then
    return render.unloaded(path[2])
  elseif render.placeholder_kind(entry.value) == 'unloaded' then
    return render.unloaded(tonumber(entry.value.index) or path[2])
  end
  return nil
end

--- The text a 1-based line shows: its own, or an unloaded row's drawn over it.
function ListView:line_text(line)
  return self:unloaded_text(line)
    or vim.api.nvim_buf_get_lines(self.buf, line - 1, line, false)[1]
end

--- The highlight group of a 1-based line's row when it is an unloaded one (a counted
--- placeholder, or a row of a lazy list not read yet); nil otherwise.
function ListView:line_group(line)
  local path = self:index_path_at(line)
  local entry = path and self.sections[path[1] + 1].rows[path[2] + 1]
  -- A lazy list's row being read still shows as unloaded, until its value comes.
  if entry and (entry.unread or (self.lazy and entry.pending) or render.placeholder_kind(entry.value) == 'unloaded') then
    return render.groups.unloaded
  end
  return nil
end

--- Whether the row on a 1-based line is one the daemon has not loaded, as far as the
--- list knows: an unloaded placeholder, or a row not read yet.
function ListView:unloaded_at(line)
  local path = self:index_path_at(line)
  local entry = path and self.sections[path[1] + 1].rows[path[2] + 1]
  return entry ~= nil and (entry.unread or entry.pending or render.placeholder_kind(entry.value) == 'unloaded')
end

function ListView:header_item(section)
  return { render.header(section.title, section.title_pending) }
end

--- Whether a section should have a header line: in sectioned and multi lists, unless it
--- is titled null (or its title is still being read) and holds only placeholders.
function ListView:header_wanted(section)
  if not self.show_headers then
    return false
  end
  if not section.title_pending and not is_null(section.title) then
    return true
  end
  for _, entry in ipairs(section.rows) do
    if entry.pending or entry.unread or not render.is_placeholder(entry.value) then
      return true
    end
  end
  return section.title_pending == true and #section.rows == 0
end

--- The 0-based line of section s's header (of its first row when it has no header).
function ListView:section_line(s)
  local line = 0
  for i = 1, s - 1 do
    local section = self.sections[i]
    line = line + (section.header and 1 or 0) + #section.rows
  end
  return line
end

--- The 0-based line of the row at section s, item i (both 1-based).
function ListView:row_line(s, i)
  return self:section_line(s) + (self.sections[s].header and 1 or 0) + (i - 1)
end

--- Adds or removes section s's header line to match header_wanted().
function ListView:sync_header(s)
  local section = self.sections[s]
  local wanted = self:header_wanted(section)
  if wanted == (section.header == true) then
    return
  end
  local line = self:section_line(s)
  if wanted then
    self:edit(line, line, { self:header_item(section) })
  else
    self:edit(line, line + 1, {})
  end
  section.header = wanted
end

--- Every line's item, for edit(): the items, then how many empty lines end the list (a
--- lazy list of a million unloaded rows makes no million items).
function ListView:all_items()
  local items, blank = {}, 0
  local function add(item)
    for _ = 1, blank do
      items[#items + 1] = BLANK
    end
    blank = 0
    items[#items + 1] = item
  end
  for _, section in ipairs(self.sections) do
    section.header = self:header_wanted(section)
    if section.header then
      add(self:header_item(section))
    end
    for i, entry in ipairs(section.rows) do
      local item = self:row_item(entry, i)
      if item == BLANK then
        blank = blank + 1
      else
        add(item)
      end
    end
  end
  return items, blank
end

--- The daemon's index path {section, item} (0-based) of a 1-based buffer line; nil for
--- a header line or past the end.
function ListView:index_path_at(line)
  local remaining = line - 1
  for s, section in ipairs(self.sections) do
    remaining = remaining - (section.header and 1 or 0)
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

--- Whether a read answered with `result` describes the model as it is now: by the
--- revision it carries (1.1), else by no change set having come since `version`.
function ListView:answer_fits(version, result)
  if self.revision ~= nil and type(result) == 'table' and result.revision ~= nil then
    return result.revision == self.revision
  end
  return self.version == version
end

-- Full read ----------------------------------------------------------------------------

--- Reads the layout and every row (describeSource, then allObjects) and redraws all.
--- Used when a list is opened and whenever the model cannot be trusted. callback gets
--- the description once the model is read.
function ListView:reload(callback)
  self.known = false -- change sets wait for the read (which includes them)
  if self.reloading then
    self.reload_again = true
    self.reload_callback = self.reload_callback or callback
    return
  end
  self.reloading, self.reload_again = true, false
  self.reload_callback = callback
  local version = self.version
  local revisions = self.conn:has_revisions()
  local description
  -- The description first: a list of counted placeholders reads its rows lazily (see
  -- UNREAD), which it tells.
  local function read_rows(err, result)
    if err then
      self.reloading = false
      self:set_status('error: ' .. Connection.describe_error(err))
      return self:report_rpc_error('describeSource', err)
    end
    description = result
    -- A filter over a counted list keeps its unloaded rows: read lazily too.
    local counted = ListView.counted(description) or (self.filter ~= nil and self.filter.lazy and self.source == self.filter.name)
    if revisions and counted then
      return self:finish_reload(version, description, nil, description.revision)
    end
    self.conn:request('allObjects', { source = self.source, withRevision = revisions or nil }, function(read_err, answer)
      if read_err then
        self.reloading = false
        return self:report_rpc_error('allObjects', read_err)
      end
      local objects, revision = answer, nil
      if revisions then
        objects, revision = answer.objects, answer.revision
      end
      self:finish_reload(version, description, objects, revision)
    end)
  end
  self.conn:request('describeSource', { source = self.source }, read_rows)
end

--- Whether a description is of a paginated source asked for counted placeholders
--- (protocol 1.5): its list may be a million rows long, of which few are loaded.
function ListView.counted(description)
  if type(description) ~= 'table' or description.kind ~= 'paginated' then
    return false
  end
  local placeholders = description.placeholders
  if type(placeholders) == 'table' then
    return placeholders.requested == 'counted' or placeholders.inForce == 'counted'
  end
  return placeholders == 'counted'
end

--- The end of reload(): the model from the description and `objects` (every row; nil for
--- a lazy list, whose rows are read as they show).
function ListView:finish_reload(version, description, objects, revision)
  self.reloading = false
  local revisions = self.conn:has_revisions()
  -- A change set between the two answers: they describe different layouts.
  local torn
  if revisions and description.revision ~= nil then
    torn = description.revision ~= revision
  else
    torn = self.reload_again or self.version ~= version
  end
  if torn then
    local pending_callback = self.reload_callback
    self.reload_callback = nil
    return self:reload(pending_callback)
  end
  self.version = self.version + 1 -- answers to reads made before are about the old model
  self.revision = revision
  self.known = true
  self.kind = description.kind
  if description.kind == 'remote' or description.kind == 'paginated' then
    self:set_freshness(self.source, description.stale == true, description.cachedAt)
  end
  -- Kept up to date only by the notifications of a client that asked for them.
  self.load_states = self.conn.protocol_additions and type(description.loadStates) == 'table'
    and description.loadStates or nil
  self.identity_key = description.identityKey
  -- A filtered source keeps its child's sections: headers if the child had them (the
  -- list showed the child before its first filter; adopt_sources looks when the spec
  -- shows a filtered source).
  if description.kind ~= 'filtered' then
    self.show_headers = description.kind == 'sectioned' or description.kind == 'multi'
  end
  self.matches_read = nil
  self.lazy = objects == nil
  self.loaded_objects = self.lazy and tonumber(description.numberOfObjects) or nil
  local sections, next_row, owed = {}, 1, 0
  for s, count in ipairs(description.counts) do
    -- The last section of a lazy list takes the rows a window can show now, the others
    -- once they are (owe).
    local taken = count
    if not objects and s == #description.counts and count > BULK_LINES then
      -- (The lines the buffer has for it are written over, not deleted: see write_lines.)
      local held = self.line_count - self.owed - (next_row - 1)
      taken = math.min(count, math.max(self:near_rows(next_row - 1), held))
      owed = count - taken
    end
    local rows = new_table(taken, 0)
    for i = 1, taken do
      rows[i] = objects and { value = objects[next_row] } or UNREAD
      next_row = next_row + 1
    end
    sections[s] = { title = description.sectionTitles[s], rows = rows }
  end
  self.sections = sections
  self:edit(0, -1, self:all_items())
  self:owe(owed)
  self:update_loaded_status()
  self:read_visible()
  if self.lazy then
    -- A cursor that starts on an unloaded row (a list opened after a jump) shows it.
    self:display_cursor_rows()
  end
  local done = self.reload_callback
  self.reload_callback = nil
  if done then
    done(description)
  end
end

--- Everything is read again because the model and the daemon disagree.
function ListView:resync(reason)
  self.resyncs = self.resyncs + 1
  self.last_resync = reason
  self.known = false
  self:reload()
end

-- Change sets --------------------------------------------------------------------------

local function path_before(a, b)
  if a[1] ~= b[1] then
    return a[1] < b[1]
  end
  return a[2] < b[2]
end

local function sorted_paths(paths)
  -- Change sets list their paths in order, as a rule: a million placeholders arriving
  -- with a counted list's first page are not sorted again.
  for n = 2, #paths do
    if path_before(paths[n], paths[n - 1]) then
      table.sort(paths, path_before)
      break
    end
  end
  return paths
end

--- A dataSource/didChange: applied if it follows the model, else the model is read again.
function ListView:on_change(params)
  if not self.known then
    -- Not read yet (or being read again): the read answers after this change set, and
    -- so includes it; but under 1.0 we cannot tell whether it came between the read's
    -- two answers.
    if self.reloading then
      self.reload_again = true
    end
    return
  end
  if self.revision ~= nil and params.revision ~= nil then
    if params.revision <= self.revision then
      return -- already in the model
    end
    if params.previousRevision ~= self.revision then
      return self:resync(string.format('change set from revision %s, the list shows %s',
        tostring(params.previousRevision), tostring(self.revision)))
    end
  end
  self:apply(params.changes or {}, params.values)
  if self.revision ~= nil and params.revision ~= nil and self.known then
    self.revision = params.revision
  end
  self:read_visible()
end

--- Applies a change set (Protocol.md, "Notifications"), editing only the lines it
--- touches. If it does not fit our model, everything is read again.
function ListView:apply(changes, values)
  self.version = self.version + 1
  -- The cursor stays on its row when rows arrive above it (Neovim moves it with its
  -- text), but for two cases, where it keeps its line number instead:
  -- * On the last line. Rows arriving above it would otherwise carry it along with the
  --   trailing loading row to the new last line, and each page would at once ask for the
  --   next: the list would load to the end by itself instead of as the user scrolls.
  --   (A list view keeps its scroll position too.)
  -- * Before the user moved it: a list just opened shows its top, whatever row the
  --   cursor happened to be on while the first rows arrived.
  -- A page before the first row (protocol 1.5) is the exception: it arrives because the
  -- first row was shown, and the cursor stays on that row's object, or it would ask for
  -- the page before that one at once, and so on to the start of the list.
  local pinned = {}
  local prepending = self:direction_state('prepend') == 'loading'
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local line = vim.api.nvim_win_get_cursor(win)[1]
    if not prepending and (line >= self.line_count or not self.user_moved[win]) then
      pinned[win] = line
    end
  end
  local ok, err = pcall(self.apply_unprotected, self, changes, type(values) == 'table' and values or nil)
  for win, line in pairs(pinned) do
    pcall(vim.api.nvim_win_set_cursor, win, { math.max(1, math.min(line, self.line_count)), 0 })
  end
  self:note_cursors()
  if not ok then
    return self:resync(tostring(err))
  end
  self:read_pending()
end

--- Calls fn(s, i, n) for every row a change set's list of paths names: s and i its
--- section and item (from 1), n its place in the list (the values' order). With the
--- changeRanges capability (protocol 1.6) an element [section, item, count] names count
--- rows: a counted list taking its million rows is one element.
local function each_row(paths, fn)
  local n = 0
  for _, path in ipairs(paths or {}) do
    local s, first = path[1] + 1, path[2] + 1
    for i = first, first + (tonumber(path[3]) or 1) - 1 do
      n = n + 1
      fn(s, i, n)
    end
  end
end

--- Sets map[s][i] = value (maps of rows by section, then item: no key strings to make).
local function put(map, s, i, value)
  local items = map[s]
  if not items then
    items = {}
    map[s] = items
  end
  items[i] = value
end

function ListView:apply_unprotected(changes, values)
  self:pay() -- the change set's paths count every row
  local removed = {} -- section -> item -> true (old coordinates)
  local moved_entries = {} -- section -> item -> entry (new coordinates)
  each_row(changes.deleted, function(s, i)
    put(removed, s, i, true)
  end)
  for _, move in ipairs(changes.moved or {}) do
    local s, i = move.from[1] + 1, move.from[2] + 1
    local entry = assert(self.sections[s] and self.sections[s].rows[i], 'moved.from out of range')
    put(removed, s, i, true)
    put(moved_entries, move.to[1] + 1, move.to[2] + 1, entry)
  end
  local deleted_sections = {}
  for _, s in ipairs(changes.deletedSections or {}) do
    assert(self.sections[s + 1], 'deletedSections out of range')
    deleted_sections[s + 1] = true
  end
  -- With change values, new rows come with their values: no round trip.
  local inserted_values = {} -- section -> item -> entry
  if values and type(values.inserted) == 'table' then
    each_row(changes.inserted, function(s, i, n)
      put(inserted_values, s, i, { value = values.inserted[n] })
    end)
  end

  -- 1. Old coordinates: remove deleted sections and rows, bottom up, so that the line
  --    numbers above stay valid; each run of adjacent removed rows is one edit. Only
  --    the sections that lose rows are looked through, and only at the rows they lose.
  for s = #self.sections, 1, -1 do
    local section = self.sections[s]
    if deleted_sections[s] then
      local first = self:section_line(s)
      self:edit(first, first + (section.header and 1 or 0) + #section.rows, {})
      table.remove(self.sections, s)
    elseif removed[s] then
      local items = vim.tbl_keys(removed[s])
      table.sort(items, function(a, b)
        return a > b
      end)
      local rows = section.rows
      local k = 1
      while k <= #items do
        local last = items[k]
        assert(rows[last], 'deleted out of range')
        local i = last
        while items[k + 1] == i - 1 do
          k, i = k + 1, i - 1
        end
        local line = self:row_line(s, i)
        self:edit(line, line + (last - i + 1), {})
        -- The rows after the run move up (table.move: a run of a million is no worse
        -- than a run of one), then the tail goes.
        local count = #rows
        table.move(rows, last + 1, count, i)
        for gone = count - (last - i), count do
          rows[gone] = nil
        end
        k = k + 1
      end
    end
  end

  -- 2. New coordinates: insert new sections top down, without header lines yet (their
  --    titles are read afterwards; step 5 adds the headers wanted).
  local inserted_sections = vim.deepcopy(changes.insertedSections or {})
  table.sort(inserted_sections)
  for _, s0 in ipairs(inserted_sections) do
    local s = s0 + 1
    assert(s <= #self.sections + 1, 'insertedSections out of range')
    table.insert(self.sections, s, { title_pending = true, header = false, rows = {} })
  end

  -- 3. Place inserted and moved rows top down; each run of adjacent new positions is
  --    one edit (a page of rows appended is one nvim_buf_set_lines). The paths are the
  --    daemon's (from 0; a range [section, item, count] is count of them): a million
  --    placeholders make no copies.
  local placed = {}
  for _, path in ipairs(changes.inserted or {}) do
    placed[#placed + 1] = path
  end
  for _, move in ipairs(changes.moved or {}) do
    placed[#placed + 1] = move.to
  end
  sorted_paths(placed)
  local r = 1
  while r <= #placed do
    local s, first = placed[r][1] + 1, placed[r][2] + 1
    local section = assert(self.sections[s], 'inserted section out of range')
    local rows = section.rows
    assert(first <= #rows + 1, 'inserted item out of range')
    local moved_here, values_here = moved_entries[s], inserted_values[s]
    -- The run: the adjacent new positions from here on.
    local total, next_r = 0, r
    repeat
      total = total + (tonumber(placed[next_r][3]) or 1)
      next_r = next_r + 1
    until next_r > #placed or placed[next_r][1] + 1 ~= s or placed[next_r][2] + 1 ~= first + total
    r = next_r
    -- Its lines: unloaded rows at its end are counted, not listed (a counted list's first
    -- page brings a million).
    local items, blank, owed = {}, 0, 0
    if self.lazy and not moved_here and not values_here then
      -- A lazy list reads a new row when it shows (a counted list's first page brings
      -- every other row as a placeholder). A run that ends the list takes the rows a
      -- window can show now, the others once they are (owe).
      local taken = total
      if s == #self.sections and first == #rows + 1 and total > BULK_LINES then
        taken = math.min(total, self:near_rows(self:row_line(s, first)))
        owed = total - taken
      end
      if first <= #rows then
        table.move(rows, first, #rows, first + taken) -- the rows after it move down once
      end
      for i = first, first + taken - 1 do
        rows[i] = UNREAD
      end
      blank = taken
    elseif first <= #rows then
      -- The rows after it move down once (table.move: a run of a million is no worse
      -- than a run of one); rows that go in at the end move nothing.
      table.move(rows, first, #rows, first + total)
    end
    for i = first + blank, first + total - owed - 1 do -- (none after the unloaded run)
      local entry = (moved_here and moved_here[i]) or (values_here and values_here[i]) or (self.lazy and UNREAD)
        or { pending = true }
      rows[i] = entry
      local item = entry == UNREAD and BLANK or self:row_item(entry, i)
      if item == BLANK then
        blank = blank + 1
      else
        for _ = 1, blank do
          items[#items + 1] = BLANK
        end
        blank = 0
        items[#items + 1] = item
      end
    end
    local line = self:row_line(s, first)
    self:edit(line, line, items, blank)
    self:owe(owed)
  end

  -- 4. Updated rows keep their line: rewritten with their new values, or read anew.
  --    Each run of adjacent rows is one edit (a jump turns a page into unloaded rows and
  --    another into objects: two edits).
  local updated_values = values and type(values.updated) == 'table' and values.updated or nil
  local run_s, run_first, run_items = nil, nil, {}
  local function flush_updates()
    if run_s then
      local line = self:row_line(run_s, run_first)
      self:edit(line, line + #run_items, run_items)
      run_s, run_first, run_items = nil, nil, {}
    end
  end
  each_row(changes.updated, function(s, i, n)
    assert(self.sections[s] and self.sections[s].rows[i], 'updated out of range')
    local entry
    if updated_values then
      entry = { value = updated_values[n] }
    elseif self.lazy then
      entry = UNREAD -- read again if it shows
    else
      self.sections[s].rows[i] = { pending = true }
      return
    end
    self.sections[s].rows[i] = entry
    if run_s ~= s or run_first + #run_items ~= i then
      flush_updates()
      run_s, run_first = s, i
    end
    run_items[#run_items + 1] = self:row_item(entry, i)
  end)
  flush_updates()

  -- 5. Header lines where wanted (a new section; a null section down to placeholders).
  for s = 1, #self.sections do
    self:sync_header(s)
  end
end

--- Reads the values of pending rows (one objectsInSection per section, over the range
--- holding them) and pending section titles, then rewrites just those lines.
function ListView:read_pending()
  if self.reading or self.reloading then
    return -- the read in flight looks again when it ends; a full read needs none
  end
  -- One read per run of pending rows; runs closer than READ_GAP rows are read as one
  -- (the rows between, already known, are read along and left as they are).
  local READ_GAP = 256
  local ranges, titles_pending = {}, false
  -- A lazy list has pending rows only where read_visible marked them, around the rows on
  -- screen: only those lines are looked at, not a million rows. (A row marked, then
  -- scrolled away before its read, is read when it shows again.)
  local spans = self.lazy and self:visible_rows() or nil
  local unread_shown = false -- rows around the windows that read_visible has yet to mark
  for s, section in ipairs(self.sections) do
    titles_pending = titles_pending or section.title_pending or false
    local first, last
    local function look(i, entry)
      if entry.pending then
        if first and i - last > READ_GAP then
          table.insert(ranges, { section = s, first = first, last = last })
          first = nil
        end
        first = first or i
        last = i
      end
    end
    if spans then
      local rows = section.rows
      for _, span in ipairs(spans[s] or {}) do
        for i = span[1], span[2] do
          look(i, rows[i])
          unread_shown = unread_shown or rows[i] == UNREAD
        end
      end
    else
      for i, entry in ipairs(section.rows) do
        look(i, entry)
      end
    end
    if first then
      table.insert(ranges, { section = s, first = first, last = last })
    end
  end
  if #ranges == 0 and not titles_pending then
    if self.owed > 0 and not unread_shown then
      -- The rows on screen are written: they are drawn, then the rest of the lines are
      -- written before any key typed meanwhile is read (see pay_now).
      if self.PAY_AFTER_DRAWN_MS > 0 then
        self:schedule_pay(self.PAY_AFTER_DRAWN_MS)
      else
        self:pay_now()
      end
    end
    if self.display_after_read then
      self:display_cursor_rows()
    end
    self:update_loaded_status()
    if self.loaded then
      self:show_cursor_rows() -- every row's value is known now
    end
    self:highlight_matches()
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
        self:resync('sectionTitles failed')
      elseif self.version == version then
        for s, section in ipairs(self.sections) do
          if section.title_pending then
            section.title_pending = nil
            section.title = titles[s]
            if section.header then
              local line = self:section_line(s)
              self:edit(line, line + 1, { self:header_item(section) })
            end
            self:sync_header(s)
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
        self:resync('objectsInSection failed')
      elseif self:answer_fits(version, result) then
        -- Rewrite each run of rows that were pending with one edit (a new page is one run).
        local section = self.sections[range.section]
        local run_first, run_items = nil, {}
        local function flush()
          if run_first then
            local line = self:row_line(range.section, run_first)
            self:edit(line, line + #run_items, run_items)
            run_first, run_items = nil, {}
          end
        end
        for offset, value in ipairs(result.objects) do
          local i = range.first + offset - 1
          local entry = section.rows[i]
          if entry and entry.pending then
            entry = { value = value }
            section.rows[i] = entry
            run_first = run_first or i
            table.insert(run_items, self:row_item(entry, i))
          else
            flush()
          end
        end
        flush()
        self:sync_header(range.section)
      end
      done()
    end)
  end
end

-- Match highlights ------------------------------------------------------------------------

--- Where the string `value` shows in `text` (a rendered line), as a 1-based byte offset,
--- and how many of its characters are there: whole, or cut by a column's width (its
--- first characters then "…"). nil when the line does not show it.
local function find_shown(text, value)
  local start = text:find(value, 1, true)
  if start then
    return start, vim.fn.strchars(value)
  end
  for n = vim.fn.strchars(value) - 1, 1, -1 do
    start = text:find(vim.fn.strcharpart(value, 0, n) .. '…', 1, true)
    if start then
      return start, n
    end
  end
end

--- Highlights the characters of `row_text` (0-based line `line`) that `match` (a match
--- position: {score, keyPath, positions}) names in `object`'s string at match.keyPath.
function ListView:highlight_row(line, row_text, object, match)
  if type(match) ~= 'table' or type(match.positions) ~= 'table' then
    return
  end
  local value = render.at_key_path(object, match.keyPath)
  if type(value) ~= 'string' or value == '' then
    return
  end
  local start, shown = find_shown(row_text, value)
  if not start then
    return -- a format that does not show the matched string as it is
  end
  for _, position in ipairs(match.positions) do
    if type(position) == 'number' and position < shown then
      -- positions count Unicode scalars; byteidxcomp counts them too (composing ones apart)
      local from, to = vim.fn.byteidxcomp(value, position), vim.fn.byteidxcomp(value, position + 1)
      if from >= 0 and to > from then
        vim.api.nvim_buf_set_extmark(self.buf, match_namespace, line, start - 1 + from,
          { end_row = line, end_col = start - 1 + to, hl_group = render.groups.match })
      end
    end
  end
end

--- Reads the match positions of every row (objectsInSection withMatches, protocol 1.4)
--- and highlights them, when the list shows a filter with a query; clears them otherwise.
--- Read once per revision; an answer about another revision is dropped (the next
--- change set reads again).
function ListView:highlight_matches()
  if self.detached or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  local filter = self.filter
  if not filter or not filter.ready or filter.query == '' or self.source ~= filter.name then
    vim.api.nvim_buf_clear_namespace(self.buf, match_namespace, 0, -1)
    self.matches_read, self.matches_spans = nil, nil
    return
  end
  -- A lazy list (a filter over counted placeholders: a million rows) reads the matches of
  -- the rows around its windows only, and again when they change.
  local reads, spans_key = {}, nil
  if self.lazy then
    local keys = {}
    for s, spans in pairs(self:visible_rows()) do
      for _, span in ipairs(spans) do
        reads[#reads + 1] = { section = s, first = span[1], count = span[2] - span[1] + 1 }
        keys[#keys + 1] = string.format('%d:%d-%d', s, span[1], span[2])
      end
    end
    table.sort(keys)
    spans_key = table.concat(keys, ',')
  else
    for s = 1, #self.sections do
      reads[s] = { section = s, first = 1 }
    end
  end
  if self.reading_matches or not self.known
    or (self.revision ~= nil and self.matches_read == self.revision and self.matches_spans == spans_key) then
    return
  end
  self.reading_matches = true
  local version, revision = self.version, self.revision
  local answers, found = 0, {}
  local function done()
    self.reading_matches = false
    if self.detached then
      return
    end
    if self.version ~= version then
      -- The rows changed meanwhile: once their values are in, read_pending asks again.
      return self:read_pending()
    end
    vim.api.nvim_buf_clear_namespace(self.buf, match_namespace, 0, -1)
    local complete = true
    for _, read in pairs(found) do
      local s, result = read.section, read.result
      for k, match in ipairs(result.matches or {}) do
        local i = read.first + k - 1
        local entry = self.sections[s] and self.sections[s].rows[i]
        if entry and entry.pending then
          complete = false -- its line is not written yet: highlighted on the next read
        elseif entry and match ~= vim.NIL then
          local line = self:row_line(s, i)
          local text = vim.api.nvim_buf_get_lines(self.buf, line, line + 1, false)[1] or ''
          self:highlight_row(line, text, result.objects[k], match)
        end
      end
    end
    self.matches_read = complete and revision or nil
    self.matches_spans = spans_key
    if self.prompting then
      pcall(vim.cmd, 'redraw') -- the list behind the prompt shows the new rows as they come
    end
  end
  if #reads == 0 then
    return done()
  end
  for n, read in ipairs(reads) do
    local params = { source = self.source, section = read.section - 1, withMatches = true }
    if read.count then
      params.start, params.count = read.first - 1, read.count
    end
    self.conn:request('objectsInSection', params, function(err, result)
      answers = answers + 1
      if not err and type(result) == 'table' and self:answer_fits(version, result) then
        found[n] = { section = read.section, first = read.first, result = result }
      end
      if answers == #reads then
        done()
      end
    end)
  end
end

--- Protocol 1.0 only: a cheap check after each load cycle, the daemon's section counts
--- must be ours. If not, something was missed or misapplied: read everything again.
--- (Under 1.1 a missed change set shows in the next one's previousRevision.)
function ListView:verify()
  if self.reloading or not self.known or self.revision ~= nil then
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
      self:resync('section counts differ from the daemon\'s')
    end
  end)
end

-- Events -------------------------------------------------------------------------------

--- "loaded N": N objects shown, placeholders and rows still being read left out.
function ListView:count_text()
  if self.lazy and self.loaded_objects then
    -- Counted placeholders: the list has its full size, of which the daemon holds this
    -- much (its description says: most rows were never read here).
    return string.format('loaded %d of %d', self.loaded_objects, self.line_count)
  end
  local count = 0
  for _, section in ipairs(self.sections) do
    for _, entry in ipairs(section.rows) do
      if not entry.pending and not entry.unread and not render.is_placeholder(entry.value) then
        count = count + 1
      end
    end
  end
  if self.lazy then
    -- Counted placeholders: the list has its full size, of which the daemon holds this
    -- much (its description says: most rows were never read here).
    return string.format('loaded %d of %d', self.loaded_objects or count, self.line_count)
  end
  return 'loaded ' .. count
end

function ListView:update_loaded_status()
  if self.loaded then
    self:set_status(self:count_text())
  end
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
  if kind == 'didChangeFreshness' then
    return self:set_freshness(params.source, params.stale == true, params.cachedAt)
  end
  if params.source ~= self.source then
    return -- a source the list is made from: only its freshness is the list's concern
  end
  if kind == 'didChange' then
    self:on_change(params)
  elseif kind == 'didChangeLoadState' then
    self:set_load_states(params.loadStates)
  elseif kind == 'willLoadData' then
    self.loaded, self.failure = false, nil
    self.refreshing, self.refresh_asked = self.refresh_asked, false
    self:set_status('loading')
  elseif kind == 'finishedLoading' then
    self.loaded = true
    if self.lazy then
      self:schedule_display() -- a cursor still on an unloaded row asks on for its page
      self:count_loaded()
    end
    self:verify()
    self:read_pending() -- with nothing (more) to read: the status, and the cursor's row
    self:announce('DatasourcedLoaded')
  elseif kind == 'failedWithError' then
    local failure = params.error or {}
    self.loaded, self.refreshing = false, false
    self.failure = { error = failure, sources = failed_sources(self.source, failure) }
    if failure.kind == 'cancelled' then
      self:set_status('cancelled')
    elseif self:end_in_play() then
      self:set_status(self:count_text()) -- the rows stay; the status says which end failed
    else
      self:set_status('error: ' .. render.error_text(failure, { short = true }))
    end
    self:verify()
    self:announce('DatasourcedFailed', { error = failure })
  end
end

--- Fires `User {event}` (DatasourcedLoaded, DatasourcedFailed) for statusline plugins and
--- users' autocommands; from Neovim 0.8 on, the autocommand's data is { buf, source,
--- title, status, error? }. Their failure is theirs, not the list's.
function ListView:announce(event, extra)
  if self.detached then
    return
  end
  local data = vim.tbl_extend('force', { buf = self.buf, source = self.source, title = self.title, status = self.status },
    extra or {})
  local ok, problem = pcall(vim.api.nvim_exec_autocmds, 'User',
    { pattern = event, modeline = false, data = vim.fn.has('nvim-0.8') == 1 and data or nil })
  if not ok then
    vim.notify('datasourced: User ' .. event .. ' autocommand failed: ' .. tostring(problem), vim.log.levels.ERROR)
  end
end

--- A lazy list's count of loaded objects, for the status, from the daemon.
function ListView:count_loaded()
  local version = self.version
  self.conn:request('describeSource', { source = self.source }, function(err, description)
    if not err and type(description) == 'table' and self.lazy and self.version == version then
      self.loaded_objects = tonumber(description.numberOfObjects)
      self:update_loaded_status()
    end
  end)
end

--- Sets the state from a description (after a read, when no load is asked for).
function ListView:adopt_state(description)
  if description.isFetching then
    self.loaded = false
    self:set_status('loading')
  else
    self.loaded = true
    self:update_loaded_status()
  end
end

--- Tells the daemon that the row on `line` (1-based) is shown: the last row of a
--- paginated source (or of a view over one) loads the next page, its first row (when
--- there is a page before it) the page before.
function ListView:will_display(line)
  local path = self:index_path_at(line)
  if not path or not self.conn then
    return
  end
  self:send('willDisplayObjectAtIndexPath', { indexPath = path })
end

--- A lazy list (see UNREAD): reads the rows not read yet that its windows show, and a
--- screen's height around them.
function ListView:read_visible()
  if not self.lazy or not self.known or self.detached or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  local marked = false
  for s, spans in pairs(self:visible_rows()) do
    local rows = self.sections[s].rows
    for _, span in ipairs(spans) do
      for i = span[1], span[2] do
        if rows[i] == UNREAD then
          -- Pending, but its line keeps showing it as unloaded until its value comes.
          rows[i] = { pending = true }
          marked = true
        end
      end
    end
  end
  if marked then
    self:read_pending()
  end
end

--- The rows on screen in the list's windows, and a screen's height around them: section
--- (from 1) -> { { first item, last item }, ... } (from 1; spans may overlap).
function ListView:visible_rows()
  local spans = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local info = vim.fn.getwininfo(win)[1]
    if info then
      local around = math.max(info.height, 1) * READ_AROUND
      local from = math.max(1, info.topline - around)
      local to = math.min(self.line_count, math.max(info.botline, info.topline + info.height) + around)
      local s, first, last
      for line = from, to do
        local path = self:index_path_at(line)
        if path and path[1] + 1 == s and path[2] + 1 == last + 1 then
          last = last + 1
        else
          if s then
            spans[s] = spans[s] or {}
            table.insert(spans[s], { first, last })
          end
          s, first, last = nil, nil, nil
          if path then
            s, first, last = path[1] + 1, path[2] + 1, path[2] + 1
          end
        end
      end
      if s then
        spans[s] = spans[s] or {}
        table.insert(spans[s], { first, last })
      end
    end
  end
  -- In order, and those that overlap (two windows on the same rows) made one.
  for s, list in pairs(spans) do
    table.sort(list, function(a, b)
      return a[1] < b[1]
    end)
    local merged = { list[1] }
    for k = 2, #list do
      local top = merged[#merged]
      if list[k][1] <= top[2] + 1 then
        top[2] = math.max(top[2], list[k][2])
      else
        merged[#merged + 1] = list[k]
      end
    end
    spans[s] = merged
  end
  return spans
end

--- The cursor moved (or the window scrolled) in a lazy list: once it rests, the rows on
--- screen are read, and an unloaded row under the cursor is shown to the daemon
--- (willDisplay), which loads its page: the one beside the loaded rows, or, farther
--- than the source's jumpThreshold, that page alone (a jump).
function ListView:schedule_display()
  local uv = vim.uv or vim.loop
  if not self.display_timer then
    self.display_timer = uv.new_timer()
  end
  self.display_timer:stop()
  self.display_timer:start(self.DISPLAY_DEBOUNCE_MS, 0, vim.schedule_wrap(function()
    if self.detached or not self.conn or not vim.api.nvim_buf_is_valid(self.buf) then
      return
    end
    self:read_visible()
    self:display_cursor_rows()
    if self.filter then
      self:highlight_matches() -- the matches of the rows scrolled into view
    end
  end))
end

--- Sends willDisplay for the unloaded rows under the cursors of a lazy list; a row not
--- read yet is looked at once read_pending has its value.
function ListView:display_cursor_rows()
  self.display_after_read = false
  local asked = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local line = vim.api.nvim_win_get_cursor(win)[1]
    local path = self:index_path_at(line)
    local entry = path and self.sections[path[1] + 1].rows[path[2] + 1]
    if entry and (entry.unread or entry.pending) then
      self.display_after_read = true
    elseif entry and not asked[line] and render.placeholder_kind(entry.value) == 'unloaded' then
      asked[line] = true
      self:will_display(line)
    end
  end
end

--- Stops the list's timer (its buffer is gone).
function ListView:close()
  for _, timer in ipairs({ 'display_timer', 'pay_timer' }) do
    if self[timer] then
      self[timer]:stop()
      self[timer]:close()
      self[timer] = nil
    end
  end
end

--- After a load, a window whose cursor sits on a trailing loading row is showing it:
--- that row asks for the next page, as when the user moves onto it. (A refresh that
--- shortens the list leaves the cursor there; without this, the row would wait for a
--- move that cannot come, since the cursor is already on the last line.) Error rows
--- are left alone: retrying is the user's call.
---
--- After a refresh, though, page one is all that was asked for: a cursor the shorter list
--- left on its loading row goes up to the last object, from where moving down (j, G)
--- loads the next page as usual.
---
--- A cursor on the first row of a list with a page before it (a run that started in the
--- middle, or whose first pages a window dropped) shows that row: the page before loads,
--- and the cursor stays on its object (see apply), so one page comes, not all of them.
function ListView:show_cursor_rows()
  local refreshed = self.refreshing
  self.refreshing = false
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local line = vim.api.nvim_win_get_cursor(win)[1]
    if self:can_prepend() and self:is_first_row(line) then
      return self:will_display(line)
    end
    if line == self.line_count and render.placeholder_kind(self:object_at(line)) == 'loading' then
      if not refreshed then
        return self:will_display(line)
      elseif line > 1 then
        vim.api.nvim_win_set_cursor(win, { line - 1, 0 })
        self:note_cursors()
      end
    end
  end
end

return ListView
