-- The test harness of the headless tests (tests/main.lua runs them): tests run in a
-- coroutine that yields to Neovim's main loop whenever it waits, so typed keys are
-- handled as a user's (nvim_input('G') fires the real CursorMoved autocommand) and the
-- daemon's answers arrive as they would in a session. Waits poll a predicate up to a
-- generous bound: the bound is for failure, never a pause.

local H = {}

H.TIMEOUT = 10000 -- ms
H.LEVELS = vim.log.levels
H.passed, H.failed = 0, 0

function H.out(text)
  io.stdout:write(text .. '\n')
end

-- Every vim.notify, as { message, level }: what the user would have been shown.
H.notes = {}
vim.notify = function(message, level)
  table.insert(H.notes, { message = tostring(message), level = level or H.LEVELS.INFO })
end

-- Coroutine plumbing --------------------------------------------------------------------

local main -- the coroutine running the tests

local function resume()
  local ok, problem = coroutine.resume(main)
  if not ok then
    H.out('test harness error: ' .. tostring(problem) .. '\n' .. debug.traceback(main))
    vim.cmd('cquit 1')
  end
end

--- Lets the main loop run for a moment (events, input, scheduled callbacks).
function H.tick()
  vim.defer_fn(resume, 5)
  coroutine.yield()
end

--- Waits until pred() is true (errors count as false); false after timeout_ms.
function H.wait_until(pred, timeout_ms)
  local uv = vim.uv or vim.loop
  local deadline = uv.hrtime() + (timeout_ms or H.TIMEOUT) * 1e6
  while true do
    local ok, value = pcall(pred)
    if ok and value then
      return true
    end
    if uv.hrtime() > deadline then
      return false
    end
    H.tick()
  end
end

--- Runs `body` in the test coroutine; `finish` after it, then ends Neovim (status 1 if
--- any test failed). A run that hangs is a failure too.
function H.run(body, timeout_ms)
  main = coroutine.create(function()
    body()
    H.out(string.format('tests: %d passed, %d failed', H.passed, H.failed))
    vim.cmd(H.failed == 0 and 'qall!' or 'cquit 1')
  end)
  vim.defer_fn(function()
    H.out(string.format('timed out: %d passed, %d failed so far', H.passed, H.failed))
    vim.cmd('cquit 1')
  end, timeout_ms or 150000)
  vim.schedule(resume)
end

-- Assertions -----------------------------------------------------------------------------

function H.fail(message)
  error({ test_failure = message }, 0)
end

local function show(value)
  return vim.inspect(value):gsub('\n', '\n             ')
end

function H.expect_equal(expected, got, what)
  if not vim.deep_equal(expected, got) then
    H.fail(string.format('%s:\n    expected %s\n    got      %s', what, show(expected), show(got)))
  end
end

function H.expect(condition, what, got)
  if not condition then
    H.fail(what .. (got ~= nil and ('\n    got ' .. show(got)) or ''))
  end
end

function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Waits until the buffer shows exactly `expected`, else fails showing both.
function H.expect_lines(buf, expected, what)
  H.wait_until(function()
    return vim.deep_equal(H.lines(buf), expected)
  end)
  H.expect_equal(expected, H.lines(buf), what)
end

function H.expect_status(buf, expected)
  H.wait_until(function()
    return vim.b[buf].datasourced_status == expected
  end)
  H.expect_equal(expected, vim.b[buf].datasourced_status, 'b:datasourced_status')
end

--- The notes at `level` (any level if nil) whose message contains every one of `words`.
function H.notes_with(level, ...)
  local words = { ... }
  return vim.tbl_filter(function(note)
    for _, word in ipairs(words) do
      if not note.message:find(word, 1, true) then
        return false
      end
    end
    return level == nil or note.level == level
  end, H.notes)
end

function H.expect_note(level, ...)
  local words = { ... }
  H.wait_until(function()
    return #H.notes_with(level, unpack(words)) > 0
  end)
  if #H.notes_with(level, unpack(words)) == 0 then
    H.fail(string.format('a message at level %s containing %s\n    got %s', tostring(level), show(words), show(H.notes)))
  end
end

-- $DATASOURCED_TEST_FILTER (plain text) runs only the tests whose names contain it: for
-- a developer running one test, never set by run.sh.
local filter = os.getenv('DATASOURCED_TEST_FILTER')

H.prefix = '' -- put before every test's name (a second run of the same tests)

function H.test(name, body)
  name = H.prefix .. name
  if filter and filter ~= '' and not name:find(filter, 1, true) then
    return
  end
  H.notes = {}
  vim.v.errmsg = ''
  local ok, problem = xpcall(body, function(e)
    return type(e) == 'table' and e.test_failure or (tostring(e) .. '\n' .. debug.traceback())
  end)
  -- A Lua error anywhere (a callback, an autocommand) is an error message: never allowed.
  if ok and vim.v.errmsg ~= '' then
    ok, problem = false, 'an error message was shown: ' .. vim.v.errmsg
  end
  if ok then
    H.passed = H.passed + 1
    H.out('PASS ' .. name)
  else
    H.failed = H.failed + 1
    H.out('FAIL ' .. name .. '\n  ' .. problem)
  end
end

-- Keys, edits, requests -------------------------------------------------------------------

--- Types keys as a user does (G in normal mode), and lets the main loop take them (and
--- fire CursorMoved) before we look.
function H.press(keys)
  vim.api.nvim_input(keys)
  H.tick()
end

--- Records which lines of `buf` are edited from now on: first changed line (0-based).
function H.watch_edits(buf)
  local seen = { first = math.huge, count = 0, active = true }
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first)
      if not seen.active then
        return true -- detach
      end
      seen.first = math.min(seen.first, first)
      seen.count = seen.count + 1
    end,
  })
  return seen
end

--- Sends a request on `conn` and waits for its answer: returns err, result.
function H.request(conn, method, params)
  local answered, err, result = false, nil, nil
  conn:request(method, params, function(e, r)
    answered, err, result = true, e, r
  end)
  H.wait_until(function()
    return answered
  end)
  H.expect(answered, 'an answer to ' .. method)
  return err, result
end

--- Counts the requests a connection sends, by method, from now on.
function H.count_requests(conn)
  local counts = {}
  local original = conn.request
  conn.request = function(self, method, ...)
    counts[method] = (counts[method] or 0) + 1
    return original(self, method, ...)
  end
  counts.stop = function()
    conn.request = original
  end
  return counts
end

-- Fixtures and data ----------------------------------------------------------------------

H.LOADING = '  ⋯ loading…'
H.PAGE1 = { '1 Dune', '2 Gaudy Night', '3 Ariel', '4 Solaris' }
H.PAGE2 = { '5 The Big Sleep', '6 Howl', '7 Kindred', '8 Rebecca' }
H.PAGE3 = { '9 Leaves of Grass', '10 Ubik' }

function H.concat(...)
  local all = {}
  for _, list in ipairs({ ... }) do
    vim.list_extend(all, list)
  end
  return all
end

function H.book_line(book)
  return book.id .. ' ' .. book.title
end

--- createSource params of a paginated source over the fixture API's books.
function H.paginated(name, path, extra)
  return vim.tbl_extend('force', {
    name = name, kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
    remoteConfiguration = { baseURL = H.base_url }, apiPath = path,
  }, extra or {})
end

--- Starts a server that prints `{"baseURL": ...}` once listening and serves until its stdin
--- closes (`datasourced fixtures FILE`, tests/../../tests/graphql-server.py). Returns its
--- base URL, a function that stops it and the whole announcement (other servers' URLs
--- next to baseURL), or nil.
local function start_announcing(command)
  local url, announcement
  local job = vim.fn.jobstart(command, {
    on_stdout = function(_, data)
      for _, line in ipairs(data) do
        local ok, announced = pcall(vim.fn.json_decode, line)
        if ok and type(announced) == 'table' and announced.baseURL then
          url, announcement = announced.baseURL, announced
        end
      end
    end,
  })
  if not H.wait_until(function()
    return url ~= nil
  end) then
    return nil
  end
  return url, function()
    vim.fn.chanclose(job, 'stdin')
    vim.fn.jobwait({ job }, H.TIMEOUT)
  end, announcement
end

--- Starts the fixture API (`datasourced fixtures FILE` prints its base URL once listening
--- and serves until its stdin closes); sets H.base_url. Returns a function that stops it.
function H.start_fixtures(daemon, file)
  local url, stop = start_announcing({ daemon, 'fixtures', file })
  H.base_url = url
  return stop
end

--- Starts the GraphQL API of Tests/Frameworks/graphqlapi.py (Strawberry) and the
--- Elasticsearch-shaped search of Tests/Frameworks/postapis.py (Clients/tests/graphql-server.py
--- serves both). Returns the GraphQL API's base URL, a function that stops both and the
--- search's base URL, or nil.
function H.start_graphql(repo)
  local url, stop, announced = start_announcing({ 'python3', repo .. '/Clients/tests/graphql-server.py' })
  return url, stop, announced and announced.searchURL
end

return H
