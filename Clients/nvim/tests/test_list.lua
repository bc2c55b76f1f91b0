-- Headless tests of datasourced.nvim against the real daemon ($DATASOURCED) and the
-- fixture API of Clients/fixtures.json. Run by tests/run.sh; prints PASS/FAIL per test and
-- "N passed, M failed", and exits non-zero on any failure.
--
-- The tests run in a coroutine that yields to Neovim's main loop whenever it waits, so
-- typed keys are handled as a user's (nvim_input('G') fires the real CursorMoved
-- autocommand) and the daemon's answers arrive as they would in a session. Waits poll a
-- predicate up to a generous bound: the bound is for failure, never a pause.

local daemon = os.getenv('DATASOURCED')
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local fixtures = vim.fn.fnamemodify(here .. '/../../fixtures.json', ':p') -- shared with the Python client's tests
local TIMEOUT = 10000 -- ms
local LEVELS = vim.log.levels

local passed, failed = 0, 0

local function out(text)
  io.stdout:write(text .. '\n')
end

-- Every vim.notify, as { message, level }: what the user would have been shown.
local notes = {}
vim.notify = function(message, level)
  table.insert(notes, { message = tostring(message), level = level or LEVELS.INFO })
end

-- Coroutine plumbing --------------------------------------------------------------------

local main -- the coroutine running the tests

local function resume()
  local ok, problem = coroutine.resume(main)
  if not ok then
    out('test harness error: ' .. tostring(problem) .. '\n' .. debug.traceback(main))
    vim.cmd('cquit 1')
  end
end

--- Lets the main loop run for a moment (events, input, scheduled callbacks).
local function tick()
  vim.defer_fn(resume, 5)
  coroutine.yield()
end

--- Waits until pred() is true (errors count as false); false after timeout_ms.
local function wait_until(pred, timeout_ms)
  local deadline = vim.loop.hrtime() + (timeout_ms or TIMEOUT) * 1e6
  while true do
    local ok, value = pcall(pred)
    if ok and value then
      return true
    end
    if vim.loop.hrtime() > deadline then
      return false
    end
    tick()
  end
end

-- Assertions -----------------------------------------------------------------------------

local function fail(message)
  error({ test_failure = message }, 0)
end

local function show(value)
  return vim.inspect(value):gsub('\n', '\n             ')
end

local function expect_equal(expected, got, what)
  if not vim.deep_equal(expected, got) then
    fail(string.format('%s:\n    expected %s\n    got      %s', what, show(expected), show(got)))
  end
end

local function expect(condition, what, got)
  if not condition then
    fail(what .. (got ~= nil and ('\n    got ' .. show(got)) or ''))
  end
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Waits until the buffer shows exactly `expected`, else fails showing both.
local function expect_lines(buf, expected, what)
  wait_until(function()
    return vim.deep_equal(lines(buf), expected)
  end)
  expect_equal(expected, lines(buf), what)
end

local function expect_status(buf, expected)
  wait_until(function()
    return vim.b[buf].datasourced_status == expected
  end)
  expect_equal(expected, vim.b[buf].datasourced_status, 'b:datasourced_status')
end

--- The notes at `level` whose message contains every one of `words` (plain text).
local function notes_with(level, ...)
  local words = { ... }
  return vim.tbl_filter(function(note)
    for _, word in ipairs(words) do
      if not note.message:find(word, 1, true) then
        return false
      end
    end
    return note.level == level
  end, notes)
end

local function expect_note(level, ...)
  local words = { ... }
  wait_until(function()
    return #notes_with(level, unpack(words)) > 0
  end)
  if #notes_with(level, unpack(words)) == 0 then
    fail(string.format('a message at level %d containing %s\n    got %s', level, show(words), show(notes)))
  end
end

local function test(name, body)
  notes = {}
  vim.v.errmsg = ''
  local ok, problem = xpcall(body, function(e)
    return type(e) == 'table' and e.test_failure or (tostring(e) .. '\n' .. debug.traceback())
  end)
  -- A Lua error anywhere (a callback, an autocommand) is an error message: never allowed.
  if ok and vim.v.errmsg ~= '' then
    ok, problem = false, 'an error message was shown: ' .. vim.v.errmsg
  end
  if ok then
    passed = passed + 1
    out('PASS ' .. name)
  else
    failed = failed + 1
    out('FAIL ' .. name .. '\n  ' .. problem)
  end
end

-- Fixtures and data ----------------------------------------------------------------------

local LOADING = '  ⋯ loading…'
local PAGE1 = { '1 Dune', '2 Gaudy Night', '3 Ariel', '4 Solaris' }
local PAGE2 = { '5 The Big Sleep', '6 Howl', '7 Kindred', '8 Rebecca' }
local PAGE3 = { '9 Leaves of Grass', '10 Ubik' }

local function concat(...)
  local all = {}
  for _, list in ipairs({ ... }) do
    vim.list_extend(all, list)
  end
  return all
end

local function book_line(book)
  return book.id .. ' ' .. book.title
end

local base_url -- of the fixture API, once it listens

local function paginated(name, path, extra)
  return vim.tbl_extend('force', {
    name = name, kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
    remoteConfiguration = { baseURL = base_url }, apiPath = path,
  }, extra or {})
end

--- Moves the cursor to the last line as a user does: G typed in normal mode.
local function press(keys)
  vim.api.nvim_input(keys)
  tick() -- the main loop takes the keys (and fires CursorMoved) before we look
end

--- Records which lines of `buf` are edited from now on: first changed line (0-based).
local function watch_edits(buf)
  local seen = { first = math.huge, active = true }
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first)
      if not seen.active then
        return true -- detach
      end
      seen.first = math.min(seen.first, first)
    end,
  })
  return seen
end

local ds = require('datasourced')

-- The tests ------------------------------------------------------------------------------

local function run_tests()
  local books_buf

  test('a paginated list shows page one and a trailing loading row', function()
    books_buf = ds.open({ sources = { paginated('books', '/v1/books') }, format = book_line })
    expect_equal(books_buf, vim.api.nvim_get_current_buf(), 'the list is the current buffer')
    expect_lines(books_buf, concat(PAGE1, { LOADING }), 'page one')
    expect_status(books_buf, 'loaded 4')
    expect_equal('datasourced://books', vim.fn.bufname(books_buf), 'buffer name')
    expect_equal(false, vim.bo[books_buf].modifiable, 'modifiable')
    expect_equal('nofile', vim.bo[books_buf].buftype, 'buftype')
    expect_equal(ds.STATUSLINE, vim.wo.statusline, 'the window shows the status')
    expect_equal({ 0, 2 }, ds.view(books_buf):index_path_at(3), 'index path of line 3')
    expect_equal({ 0, 4 }, ds.view(books_buf):index_path_at(5), 'index path of the loading row')
  end)

  test('moving to the last line loads page two, editing only the new lines', function()
    local edits = watch_edits(books_buf)
    press('G')
    expect_lines(books_buf, concat(PAGE1, PAGE2, { LOADING }), 'pages one and two')
    edits.active = false
    expect(edits.first >= #PAGE1, 'lines of page one were not edited', 'first edited line ' .. edits.first)
    -- The cursor keeps its line (now page two's first row) rather than riding the loading
    -- row to the new end, which would load every page at once.
    expect_equal(#PAGE1 + 1, vim.api.nvim_win_get_cursor(0)[1], 'cursor line')
    expect_status(books_buf, 'loaded 8')
  end)

  test('scrolling on to the end loads the last page; no loading row remains', function()
    press('G')
    expect_lines(books_buf, concat(PAGE1, PAGE2, PAGE3), 'all pages')
    expect_status(books_buf, 'loaded 10')
    press('ggG') -- no more pages: nothing is loaded
    tick()
    expect_lines(books_buf, concat(PAGE1, PAGE2, PAGE3), 'all pages, still')
    expect_equal(0, ds.view(books_buf).resyncs, 'full re-reads (the change sets all applied)')
  end)

  test(':DatasourcedRefresh loads the list again from page one', function()
    vim.cmd('DatasourcedRefresh')
    expect_lines(books_buf, concat(PAGE1, { LOADING }), 'page one again')
    expect_status(books_buf, 'loaded 4')
  end)

  test('a failing endpoint shows the error row and an error message', function()
    local buf = ds.open({
      name = 'broken', kind = 'remote', apiPath = '/v1/broken', remoteConfiguration = { baseURL = base_url },
      placeholderStorageOptions = { 'loading', 'noResults', 'errors' },
    })
    expect_lines(buf, { '  ✗ error: http: HTTP status 500' }, 'the error row')
    expect_status(buf, 'error: http: HTTP status 500')
    expect_note(LEVELS.ERROR, 'broken', 'HTTP status 500')
    expect_equal(1, #notes, 'messages (one per failure)')

    vim.cmd('DatasourcedRefresh') -- loads again: fails again, says so again
    wait_until(function()
      return #notes == 2
    end)
    expect_equal(2, #notes_with(LEVELS.ERROR, 'broken', '500'), 'messages after :DatasourcedRefresh')
    expect_lines(buf, { '  ✗ error: http: HTTP status 500' }, 'the error row after :DatasourcedRefresh')

    vim.cmd('DatasourcedRetry') -- not paginated: loads again
    wait_until(function()
      return #notes == 3
    end)
    expect_equal(3, #notes_with(LEVELS.ERROR, 'broken', '500'), 'messages after :DatasourcedRetry')
  end)

  test(':DatasourcedRetry after a failed next page asks for that page again', function()
    local buf = ds.open({ sources = { paginated('flaky', '/v1/flaky', { placeholderStorageOptions = 14 }) }, format = book_line })
    expect_lines(buf, concat(PAGE1, { LOADING }), 'page one')
    press('G') -- page two answers 503 once
    expect_lines(buf, concat(PAGE1, { '  ✗ error: http: HTTP status 503' }), 'the failed page')
    expect_note(LEVELS.ERROR, 'flaky', '503')
    -- The error row replaced the row under the cursor, which fires CursorMoved; that must
    -- not count as the user showing the row (it would retry, and fail, in a loop).
    for _ = 1, 5 do
      tick()
    end
    local description
    ds.view(buf).conn:request('describeSource', { source = 'flaky' }, function(_, result)
      description = result
    end)
    wait_until(function()
      return description ~= nil
    end)
    expect_equal(false, description and description.isFetching, 'fetching after the failure, unasked')
    expect_lines(buf, concat(PAGE1, { '  ✗ error: http: HTTP status 503' }), 'the failed page, still')
    local edits = watch_edits(buf)
    vim.cmd('DatasourcedRetry')
    expect_lines(buf, concat(PAGE1, PAGE2, { LOADING }), 'page two after the retry')
    edits.active = false
    expect(edits.first >= #PAGE1, 'the retry kept page one (fetchNextPage, not fetchData)',
      'first edited line ' .. edits.first)
  end)

  test('a sectioned view shows section titles as header lines', function()
    local buf = ds.open({
      sources = { paginated('books', '/v1/books'), { name = 'byGenre', kind = 'sectioned', source = 'books', sectioningKey = 'genre' } },
      show = 'byGenre',
      format = book_line,
    })
    expect_lines(buf, {
      '## science fiction', '1 Dune', '4 Solaris', '## mystery', '2 Gaudy Night', '## poetry', '3 Ariel',
      '## null', LOADING,
    }, 'page one by genre')
    expect_status(buf, 'loaded 4')
    expect_equal(nil, ds.view(buf):index_path_at(1), 'a header has no index path')
    expect_equal({ 2, 0 }, ds.view(buf):index_path_at(7), 'index path of "3 Ariel"')
    press('G') -- the last row of a view over a paginated source loads its next page
    expect_lines(buf, {
      '## science fiction', '1 Dune', '4 Solaris', '7 Kindred', '## mystery', '2 Gaudy Night', '5 The Big Sleep',
      '8 Rebecca', '## poetry', '3 Ariel', '6 Howl', '## null', LOADING,
    }, 'pages one and two by genre')
    -- The books list, open in another buffer, followed the same load.
    expect_lines(books_buf, concat(PAGE1, PAGE2, { LOADING }), 'the books list')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads')
  end)

  test('the sectioned view follows moves and section changes to the last page', function()
    local buf = vim.api.nvim_get_current_buf() -- byGenre, from the test before
    expect_status(buf, 'loaded 8')
    press('G')
    expect_lines(buf, {
      '## science fiction', '1 Dune', '4 Solaris', '7 Kindred', '10 Ubik', '## mystery', '2 Gaudy Night',
      '5 The Big Sleep', '8 Rebecca', '## poetry', '3 Ariel', '6 Howl', '9 Leaves of Grass',
    }, 'all pages by genre')
    expect_status(buf, 'loaded 10')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads')
  end)

  test('edits with moves, updates and sections emptied apply line by line', function()
    local function person(p)
      return p.name .. ' (' .. p.team .. ')'
    end
    local buf = ds.open({
      sources = {
        { name = 'people', kind = 'simple', identityKey = 'id', objects = {
          { id = 1, name = 'Ada', team = 'red' }, { id = 2, name = 'Bob', team = 'blue' },
          { id = 3, name = 'Cy', team = 'red' }, { id = 4, name = 'Di', team = 'green' } } },
        { name = 'byTeam', kind = 'sectioned', source = 'people', sectioningKey = 'team',
          sortDescriptors = { { keyPath = 'name', ascending = false } } },
      },
      show = 'byTeam',
      format = person,
    })
    expect_lines(buf, { '## green', 'Di (green)', '## red', 'Cy (red)', 'Ada (red)', '## blue', 'Bob (blue)' }, 'by team')
    local people = ds.open({ show = 'people', sources = { { name = 'people', kind = 'simple' } }, format = person })
    expect_lines(people, { 'Ada (red)', 'Bob (blue)', 'Cy (red)', 'Di (green)' }, 'people')
    local conn = ds.view(buf).conn
    -- Di changes team (a move between sections; green is emptied), Bob is renamed
    -- (an update, and a move within blue's order), Eve arrives, Cy leaves.
    conn:request('replaceObjects', { source = 'people', objects = {
      { id = 2, name = 'Zed', team = 'blue' }, { id = 1, name = 'Ada', team = 'red' },
      { id = 4, name = 'Di', team = 'blue' }, { id = 5, name = 'Eve', team = 'red' } } })
    expect_lines(people, { 'Zed (blue)', 'Ada (red)', 'Di (blue)', 'Eve (red)' }, 'people after the edit')
    expect_lines(buf, { '## blue', 'Zed (blue)', 'Di (blue)', '## red', 'Eve (red)', 'Ada (red)' }, 'by team after the edit')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads (byTeam)')
    expect_equal(0, ds.view(people).resyncs, 'full re-reads (people)')
  end)

  test('a multi list shows JSON rows and follows edits of its children', function()
    local buf = ds.open({
      sources = {
        { name = 'todo', kind = 'simple', objects = { 'write tests', 'fix bug' } },
        { name = 'done', kind = 'simple', objects = {} },
        { name = 'board', kind = 'multi', sources = { 'todo', 'done' } },
      },
      show = 'board',
    })
    expect_lines(buf, { '## todo', '"write tests"', '"fix bug"', '## done' }, 'the board')
    local conn = ds.view(buf).conn
    conn:request('removeObjects', { source = 'todo', index = 1 })
    conn:request('insertObjects', { source = 'done', objects = { 'fix bug' } })
    conn:request('insertObjects', { source = 'todo', objects = { { task = 'ship it' } }, index = 0 })
    expect_lines(buf, { '## todo', '{"task": "ship it"}', '"write tests"', '## done', '"fix bug"' }, 'after three edits')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads')
  end)

  test('a source with no objects shows the no-results row', function()
    local buf = ds.open({ name = 'empty', kind = 'remote', apiPath = '/v1/empty', keyPath = 'books',
      remoteConfiguration = { baseURL = base_url } })
    expect_lines(buf, { '  (no results)' }, 'no results')
    expect_status(buf, 'loaded 0')
  end)

  test(':DatasourcedCancel ends a slow load with a warning', function()
    local buf = ds.open({ name = 'slow', kind = 'remote', apiPath = '/v1/slow', keyPath = 'books',
      remoteConfiguration = { baseURL = base_url } })
    expect_lines(buf, { LOADING }, 'loading')
    expect_status(buf, 'loading')
    vim.cmd('DatasourcedCancel')
    expect_lines(buf, { '' }, 'empty after the cancel')
    expect_status(buf, 'cancelled')
    expect_note(LEVELS.WARN, 'slow', 'cancelled')
    expect_equal(0, #notes_with(LEVELS.ERROR), 'error messages')
  end)

  test('a request the daemon refuses shows as a message, not a traceback', function()
    local buf = ds.open({ name = 'bad', kind = 'remote', apiPath = '/x', remoteConfiguration = { baseURL = 'ftp://example.org' } })
    expect_note(LEVELS.ERROR, 'createSource', 'remoteConfiguration.baseURL', '-32602')
    expect(vim.b[buf].datasourced_status:match('^error: ') ~= nil, 'the status shows the error', vim.b[buf].datasourced_status)
    vim.cmd('DatasourcedRefresh') -- tries again, is refused again, quietly but for the message
    wait_until(function()
      return #notes == 2
    end)
    expect_equal(2, #notes_with(LEVELS.ERROR, 'remoteConfiguration.baseURL'), 'messages')
  end)

  test('a one-source spec takes format and title (kept out of createSource)', function()
    local buf = ds.open({
      name = 'letters', kind = 'simple', objects = { 'a', 'b' }, title = 'Letters',
      format = function(letter)
        return letter:upper()
      end,
    })
    expect_lines(buf, { 'A', 'B' }, 'formatted rows')
    expect_equal('datasourced://Letters', vim.fn.bufname(buf), 'buffer name')
    expect_equal(0, #notes, 'messages')
  end)

  test('a formatter that fails shows on its row, not as a traceback', function()
    local buf = ds.open({
      name = 'numbers', kind = 'simple', objects = { 1, 'two' },
      format = function(value)
        return string.format('%03d', value)
      end,
    })
    wait_until(function()
      return #lines(buf) == 2
    end)
    expect_equal('001', lines(buf)[1], 'the row that formats')
    expect(lines(buf)[2]:match('^  <format failed: ') ~= nil, 'the row that does not says so', lines(buf)[2])
  end)

  test(':DatasourcedOpen opens a list from a JSON spec file', function()
    local path = vim.fn.tempname() .. '.json'
    vim.fn.writefile({ vim.fn.json_encode({ sources = { paginated('fromFile', '/v1/books') }, title = 'From a file' }) }, path)
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    expect_equal('datasourced://From a file', vim.fn.bufname(buf), 'buffer name')
    expect_status(buf, 'loaded 4')
    expect_equal(5, #lines(buf), 'lines')
    expect_equal(LOADING, lines(buf)[5], 'the loading row')
    expect(lines(buf)[1]:match('^{.*"title": "Dune"') ~= nil, 'rows as JSON by default', lines(buf)[1])
  end)

  test(':DatasourcedOpen takes a Lua spec file too, with its formatter', function()
    local path = vim.fn.tempname() .. '.lua'
    vim.fn.writefile({
      'return { name = "shelf", kind = "simple", objects = { { title = "Dune" }, { title = "Ubik" } },',
      '  format = function(book) return "* " .. book.title end }',
    }, path)
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    expect_lines(vim.api.nvim_get_current_buf(), { '* Dune', '* Ubik' }, 'the list')
  end)

  test('a daemon that cannot start is an error message', function()
    local buf = ds.open({ name = 'nowhere', kind = 'simple' }, { cmd = { '/nonexistent/datasourced' } })
    expect_note(LEVELS.ERROR, 'cannot start', '/nonexistent/datasourced')
    expect_status(buf, 'error: the daemon did not start')
  end)

  test('a list opens in a split when the current buffer cannot be left', function()
    vim.cmd('enew')
    local unsaved, hidden = vim.api.nvim_get_current_buf(), vim.o.hidden
    vim.o.hidden = false
    vim.api.nvim_buf_set_lines(unsaved, 0, -1, false, { 'unsaved' })
    local windows = #vim.api.nvim_list_wins()
    local buf = ds.open({ name = 'split', kind = 'simple', objects = { 1 } })
    expect_lines(buf, { '1' }, 'the list')
    expect_equal(windows + 1, #vim.api.nvim_list_wins(), 'windows')
    expect_equal(buf, vim.api.nvim_get_current_buf(), 'the list is the current buffer')
    vim.o.hidden = hidden
    vim.cmd('bwipeout! ' .. unsaved)
  end)

  test('a per-call cmd runs a daemon of its own; its exit is reported; refresh restarts it', function()
    local shared = ds.connection()
    local buf = ds.open({ name = 'books', kind = 'simple', objects = { 'own daemon' } }, { cmd = { daemon, 'serve' } })
    expect_lines(buf, { '"own daemon"' }, 'a "books" source unrelated to the other daemon\'s')
    local conn = ds.view(buf).conn
    expect(conn ~= shared and conn.pid ~= shared.pid, 'a second daemon', { conn.pid, shared.pid })

    vim.loop.kill(conn.pid, 'sigkill')
    expect_note(LEVELS.ERROR, 'daemon exited')
    expect_status(buf, 'daemon exited')
    expect(not shared.exited, 'the other daemon runs on')

    vim.cmd('DatasourcedRefresh')
    expect_status(buf, 'loaded 1')
    expect_lines(buf, { '"own daemon"' }, 'the list after the restart')
    expect(ds.view(buf).conn.pid ~= conn.pid, 'a new daemon')
  end)

  test('wiping the last list of a daemon stops it (shutdown, exit: status 0)', function()
    local buf = ds.open({ name = 'alone', kind = 'simple', objects = { 1 } }, { cmd = { daemon, 'serve', '--max-message-size', '1048576' } })
    expect_lines(buf, { '1' }, 'the list')
    local conn = ds.view(buf).conn
    vim.cmd('bwipeout ' .. buf)
    wait_until(function()
      return conn.exited
    end)
    expect_equal(0, conn.exit_code, 'exit status')
    expect_equal(0, #notes, 'messages (an exit we asked for is not news)')
  end)

  test('quitting Neovim shuts the daemon down cleanly (VimLeavePre)', function()
    -- A separate Neovim quits; the daemon runs under sh, which records its exit status.
    local status_file = vim.fn.tempname()
    local root = vim.fn.fnamemodify(here, ':h')
    local script = vim.fn.tempname() .. '.lua'
    vim.fn.writefile({
      string.format('require("datasourced").setup({ cmd = { "sh", "-c", %q, %q, %q } })',
        '"$0"; echo $? > "$1"', daemon, status_file),
      'local buf = require("datasourced").open({ name = "q", kind = "simple", objects = { 1 } })',
      'vim.wait(10000, function() return vim.b[buf].datasourced_status == "loaded 1" end, 10)',
      'vim.cmd("qall!")',
    }, script)
    local job = vim.fn.jobstart({ 'nvim', '--headless', '--clean', '-u', 'NONE', '--cmd', 'set runtimepath^=' .. root,
      '--cmd', 'runtime plugin/datasourced.lua', '-c', 'luafile ' .. script })
    expect(job > 0, 'nvim started', job)
    wait_until(function()
      return vim.fn.filereadable(status_file) == 1 and #vim.fn.readfile(status_file) > 0
    end)
    expect_equal({ '0' }, vim.fn.filereadable(status_file) == 1 and vim.fn.readfile(status_file) or nil, 'the daemon\'s exit status')
  end)

  test('open() with a bad spec says what is wrong', function()
    expect_equal(nil, ds.open({ title = 'nothing' }), 'no buffer')
    expect_note(LEVELS.ERROR, 'open() takes createSource params')
    notes = {}
    local buf = ds.open({ sources = { { name = 'shown', kind = 'simple' } }, show = 'typo' })
    expect_note(LEVELS.ERROR, 'describeSource', 'typo')
    expect(vim.b[buf].datasourced_status:match('^error: ') ~= nil, 'the status shows the error', vim.b[buf].datasourced_status)
    local ping
    ds.view(buf).conn:request('ping', nil, function()
      ping = true
    end)
    wait_until(function()
      return ping
    end)
    expect_equal(1, #notes, 'messages (one, not one per request)')
  end)

  test('commands outside a list say so', function()
    vim.cmd('enew')
    vim.cmd('DatasourcedRefresh')
    expect_note(LEVELS.ERROR, 'this buffer is not a datasourced list')
  end)

  test(':helptags indexes the help file', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, 'p')
    vim.fn.writefile(vim.fn.readfile(here .. '/../doc/datasourced.txt'), dir .. '/datasourced.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir))
    local tags = table.concat(vim.fn.readfile(dir .. '/tags'), '\n')
    for _, tag in ipairs({ 'datasourced', 'datasourced.setup()', 'datasourced.open()', ':DatasourcedOpen',
      ':DatasourcedRefresh', ':DatasourcedCancel', ':DatasourcedRetry', 'b:datasourced_status' }) do
      expect(tags:find('\n' .. tag .. '\t', 1, true) or tags:find('^' .. vim.pesc(tag) .. '\t'), 'a help tag ' .. tag)
    end
  end)

  test('quitting stops the daemon cleanly', function()
    local conn = ds.connection()
    ds.stop()
    wait_until(function()
      return conn.exited
    end)
    expect_equal(0, conn.exit_code, 'exit status')
  end)
end

-- Main ------------------------------------------------------------------------------------

main = coroutine.create(function()
  if not daemon or vim.fn.executable(daemon) ~= 1 then
    out('no daemon: set $DATASOURCED to the datasourced executable (got ' .. tostring(daemon) .. ')')
    return vim.cmd('cquit 1')
  end
  -- The fixture API: `datasourced fixtures FILE` prints its base URL once listening, and
  -- serves until its stdin closes.
  local fixture_job = vim.fn.jobstart({ daemon, 'fixtures', fixtures }, {
    on_stdout = function(_, data)
      for _, line in ipairs(data) do
        local ok, announced = pcall(vim.fn.json_decode, line)
        if ok and type(announced) == 'table' and announced.baseURL then
          base_url = announced.baseURL
        end
      end
    end,
  })
  if not wait_until(function()
    return base_url ~= nil
  end) then
    out('the fixture server did not start: ' .. daemon .. ' fixtures ' .. fixtures)
    return vim.cmd('cquit 1')
  end
  ds.setup({ cmd = { daemon } })

  run_tests()

  vim.fn.chanclose(fixture_job, 'stdin')
  vim.fn.jobwait({ fixture_job }, TIMEOUT)
  out(string.format('%d passed, %d failed', passed, failed))
  vim.cmd(failed == 0 and 'qall!' or 'cquit 1')
end)

-- A test run that hangs is a failure too.
vim.defer_fn(function()
  out(string.format('timed out: %d passed, %d failed so far', passed, failed))
  vim.cmd('cquit 1')
end, 180000)

vim.schedule(resume)
