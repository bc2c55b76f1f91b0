-- Headless tests of the list buffers against the real daemon and the fixture API
-- (Clients/fixtures.json). Run by tests/run.sh; exits non-zero on any failure.

local daemon = assert(os.getenv('DATASOURCED'), 'set $DATASOURCED to the daemon executable')
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local fixtures = vim.fn.fnamemodify(here .. '/../../fixtures.json', ':p')
local TIMEOUT = 5000

local passed, failed = 0, 0
local notes = {} -- every vim.notify, as {message, level}
vim.notify = function(message, level)
  table.insert(notes, { message = message, level = level })
end

local function fail(message)
  error({ test_failure = message }, 0)
end

local function expect_equal(expected, got, what)
  if not vim.deep_equal(expected, got) then
    fail(string.format('%s:\n    expected %s\n    got      %s', what, vim.inspect(expected), vim.inspect(got)))
  end
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Waits until the buffer shows exactly `expected` (a bound for failure, not a pause).
local function expect_lines(buf, expected, what)
  vim.wait(TIMEOUT, function()
    return vim.deep_equal(lines(buf), expected)
  end, 10)
  expect_equal(expected, lines(buf), what)
end

local function test(name, body)
  local ok, problem = xpcall(body, function(e)
    return type(e) == 'table' and e.test_failure or (tostring(e) .. '\n' .. debug.traceback())
  end)
  if ok then
    passed = passed + 1
    io.stdout:write('PASS ' .. name .. '\n')
  else
    failed = failed + 1
    io.stdout:write('FAIL ' .. name .. '\n  ' .. problem .. '\n')
  end
end

-- The fixture API: `datasourced fixtures FILE` prints its base URL once listening.
local base_url
local fixture_job = vim.fn.jobstart({ daemon, 'fixtures', fixtures }, {
  on_stdout = function(_, data)
    for _, line in ipairs(data) do
      if line:match('baseURL') then
        base_url = vim.fn.json_decode(line).baseURL
      end
    end
  end,
})
vim.wait(TIMEOUT, function()
  return base_url ~= nil
end, 10)
assert(base_url, 'the fixture server did not start')

local ds = require('datasourced')
ds.setup({ cmd = { daemon } })

local function book_line(book)
  return book.id .. ' ' .. book.title
end

local function paginated(name, path, extra)
  return vim.tbl_extend('force', {
    name = name, kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
    remoteConfiguration = { baseURL = base_url }, apiPath = path,
  }, extra or {})
end

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

--- Moves the cursor to the last line as a user would (G in normal mode).
local function go_to_last_line()
  vim.api.nvim_feedkeys('G', 'x', false)
  vim.cmd('doautocmd <nomodeline> CursorMoved') -- headless: no main loop redraw fires it for us
end

local books_buf
test('a paginated list shows page one and a trailing loading row', function()
  books_buf = ds.open({ sources = { paginated('books', '/v1/books') }, format = book_line })
  expect_lines(books_buf, concat(PAGE1, { LOADING }), 'page one')
  expect_equal('loaded 4', vim.b[books_buf].datasourced_status, 'status')
end)

test('moving to the last line loads page two, editing only the lines that changed', function()
  local first_changed = math.huge
  vim.api.nvim_buf_attach(books_buf, false, {
    on_lines = function(_, _, _, first)
      first_changed = math.min(first_changed, first)
    end,
  })
  go_to_last_line()
  expect_lines(books_buf, concat(PAGE1, PAGE2, { LOADING }), 'pages one and two')
  if first_changed < #PAGE1 then
    fail('page two rewrote line ' .. first_changed .. ', which did not change')
  end
  -- The cursor keeps its line (now page two's first row); it is not carried to the new end.
  expect_equal(#PAGE1 + 1, vim.api.nvim_win_get_cursor(0)[1], 'cursor line')
end)

test('scrolling to the end loads the last page and the loading row goes', function()
  go_to_last_line()
  expect_lines(books_buf, concat(PAGE1, PAGE2, PAGE3), 'all pages')
  go_to_last_line() -- no more pages: nothing happens
  expect_lines(books_buf, concat(PAGE1, PAGE2, PAGE3), 'all pages, still')
end)

test(':DatasourcedRefresh reloads from page one', function()
  vim.cmd('DatasourcedRefresh')
  expect_lines(books_buf, concat(PAGE1, { LOADING }), 'page one again')
end)

test('a failing endpoint shows the error row and an error message', function()
  notes = {}
  local buf = ds.open({
    name = 'broken', kind = 'remote', apiPath = '/v1/broken', placeholderStorageOptions = { 'loading', 'noResults', 'errors' },
    remoteConfiguration = { baseURL = base_url },
  })
  vim.wait(TIMEOUT, function()
    return #lines(buf) == 1 and lines(buf)[1]:match('✗ error') ~= nil
  end, 10)
  local row = lines(buf)[1]
  if not (row:match('^  ✗ error: http: ') and row:match('500')) then
    fail('expected an http 500 error row, got ' .. vim.inspect(lines(buf)))
  end
  local said = vim.tbl_filter(function(n)
    return n.level == vim.log.levels.ERROR and n.message:match('broken') and n.message:match('500')
  end, notes)
  expect_equal(1, #said, 'error messages naming the source and the status')
end)

test('a failed next page shows the error row; :DatasourcedRetry loads it', function()
  local buf = ds.open({ sources = { paginated('flaky', '/v1/flaky', { placeholderStorageOptions = 14 }) }, format = book_line })
  expect_lines(buf, concat(PAGE1, { LOADING }), 'page one')
  go_to_last_line()
  vim.wait(TIMEOUT, function()
    return #lines(buf) == 5 and lines(buf)[5]:match('✗ error') ~= nil
  end, 10)
  if not lines(buf)[5]:match('^  ✗ error: http: .*503') then
    fail('expected a 503 error row, got ' .. vim.inspect(lines(buf)))
  end
  vim.cmd('DatasourcedRetry')
  expect_lines(buf, concat(PAGE1, PAGE2, { LOADING }), 'page two after the retry')
end)

test('a sectioned view shows section titles as header lines', function()
  local buf = ds.open({
    sources = { paginated('books', '/v1/books'), { name = 'byGenre', kind = 'sectioned', source = 'books', sectioningKey = 'genre' } },
    show = 'byGenre', format = book_line,
  })
  expect_lines(buf, {
    '## science fiction', '1 Dune', '4 Solaris', '## mystery', '2 Gaudy Night', '## poetry', '3 Ariel',
    '## null', LOADING,
  }, 'page one by genre')
  -- Opening it reloaded books from page one; the old rows looked the same meanwhile.
  vim.wait(TIMEOUT, function()
    return vim.b[buf].datasourced_status == 'loaded 4'
  end, 10)
  go_to_last_line() -- the last row of a view over a paginated source loads its next page
  expect_lines(buf, {
    '## science fiction', '1 Dune', '4 Solaris', '7 Kindred', '## mystery', '2 Gaudy Night', '5 The Big Sleep',
    '8 Rebecca', '## poetry', '3 Ariel', '6 Howl', '## null', LOADING,
  }, 'pages one and two by genre')
end)

test('a multi list follows edits of its children, section by section', function()
  local buf = ds.open({
    sources = {
      { name = 'todo', kind = 'simple', objects = { 'write tests', 'fix bug' } },
      { name = 'done', kind = 'simple', objects = {} },
      { name = 'board', kind = 'multi', sources = { 'todo', 'done' } },
    },
    show = 'board',
  })
  expect_lines(buf, { '## todo', 'write tests', 'fix bug', '## done' }, 'the board')
  local conn = ds.connection()
  conn:request('removeObjects', { source = 'todo', index = 1 })
  conn:request('insertObjects', { source = 'done', objects = { 'fix bug' } })
  conn:request('insertObjects', { source = 'todo', objects = { 'ship it' }, index = 0 })
  expect_lines(buf, { '## todo', 'ship it', 'write tests', '## done', 'fix bug' }, 'after three edits')
end)

test(':DatasourcedCancel ends a slow load with a warning', function()
  notes = {}
  local buf = ds.open({ name = 'slow', kind = 'remote', apiPath = '/v1/slow', keyPath = 'books', remoteConfiguration = { baseURL = base_url } })
  expect_lines(buf, { LOADING }, 'loading')
  vim.cmd('DatasourcedCancel')
  expect_lines(buf, { '' }, 'empty after the cancel')
  vim.wait(TIMEOUT, function()
    return #notes > 0
  end, 10)
  expect_equal(vim.log.levels.WARN, notes[1] and notes[1].level, 'level of the cancel message')
  if not notes[1].message:match('cancelled') then
    fail('expected a cancelled message, got ' .. notes[1].message)
  end
end)

test('a request the daemon refuses shows as a message, not a traceback', function()
  notes = {}
  local buf = ds.open({ name = 'bad', kind = 'remote', remoteConfiguration = { baseURL = 'ftp://example.org' } })
  vim.wait(TIMEOUT, function()
    return #notes > 0
  end, 10)
  expect_equal(vim.log.levels.ERROR, notes[1] and notes[1].level, 'level')
  if not notes[1].message:match('remoteConfiguration%.baseURL') then
    fail('expected the field to be named, got ' .. notes[1].message)
  end
  expect_equal(true, vim.b[buf].datasourced_status:match('^error') ~= nil, 'status shows the error')
end)

test(':helptags indexes the help file', function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile(vim.fn.readfile(here .. '/../doc/datasourced.txt'), dir .. '/datasourced.txt')
  vim.cmd('helptags ' .. vim.fn.fnameescape(dir))
  local tags = table.concat(vim.fn.readfile(dir .. '/tags'), '\n')
  for _, tag in ipairs({ 'datasourced', 'datasourced.open()', ':DatasourcedRetry', 'b:datasourced_status' }) do
    if not tags:find(tag .. '\t', 1, true) then
      fail('no help tag ' .. tag)
    end
  end
end)

test('commands outside a list say so', function()
  notes = {}
  vim.cmd('enew')
  vim.cmd('DatasourcedRefresh')
  expect_equal('datasourced: this buffer is not a datasourced list', notes[1] and notes[1].message, 'message')
end)

test('quitting stops the daemon cleanly', function()
  local exit_code
  local conn = ds.connection()
  local previous = conn.handlers.on_exit
  conn.handlers.on_exit = function(code, ...)
    exit_code = code
    previous(code, ...)
  end
  ds.stop()
  vim.wait(TIMEOUT, function()
    return exit_code ~= nil
  end, 10)
  expect_equal(0, exit_code, 'daemon exit status')
end)

vim.fn.chanclose(fixture_job, 'stdin') -- the fixture server serves until its stdin closes
vim.fn.jobwait({ fixture_job }, TIMEOUT)
io.stdout:write(string.format('%d passed, %d failed\n', passed, failed))
vim.cmd(failed == 0 and 'qall!' or 'cquit 1')
