-- Lists against the real daemon: loading, paging, change sets, errors, the daemon's life.
-- Run by tests/main.lua, in order (later tests use the lists and sources of earlier ones).

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_status, expect_note = H.expect_lines, H.expect_status, H.expect_note
  local lines, press, concat, book_line, paginated = H.lines, H.press, H.concat, H.book_line, H.paginated
  local LOADING, PAGE1, PAGE2, PAGE3, LEVELS = H.LOADING, H.PAGE1, H.PAGE2, H.PAGE3, H.LEVELS
  local render = require('datasourced.render')

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
    expect_equal(false, vim.wo.wrap, 'the window wraps long rows')
    expect_equal({ 0, 2 }, ds.view(books_buf):index_path_at(3), 'index path of line 3')
    expect_equal({ 0, 4 }, ds.view(books_buf):index_path_at(5), 'index path of the loading row')
  end)

  test('moving to the last line loads page two, editing only the new lines', function()
    local edits = H.watch_edits(books_buf)
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
    H.tick()
    expect_lines(books_buf, concat(PAGE1, PAGE2, PAGE3), 'all pages, still')
    expect_equal(0, ds.view(books_buf).resyncs, 'full re-reads (the change sets all applied)')
  end)

  -- Bugs: the refresh left the cursor on the new last line, the loading row, and nothing
  -- loaded it: not the refresh, and not G (the cursor could not move onto the line it
  -- was on). Then (issue 32) the refresh loaded two pages: the cursor, left on the
  -- loading row, asked for page two at once.
  test('a refresh with the cursor on the last line loads page one only, and paging goes on', function()
    expect_equal(#PAGE1 + #PAGE2 + #PAGE3, vim.api.nvim_win_get_cursor(0)[1], 'the cursor is on the last line')
    local conn = ds.view(books_buf).conn
    local counts = H.count_requests(conn)
    local cycles = conn.load_cycles.books
    vim.cmd('DatasourcedRefresh')
    H.wait_until(function()
      return conn.load_cycles.books == cycles + 1 and ds.view(books_buf).loaded
    end)
    expect_lines(books_buf, concat(PAGE1, { LOADING }), 'page one after the refresh')
    expect_status(books_buf, 'loaded 4')
    H.request(conn, 'ping') -- whatever the refresh led to was sent before this
    counts.stop()
    expect_equal(0, counts.willDisplayObjectAtIndexPath or 0, 'next pages asked for')
    expect_equal(cycles + 1, conn.load_cycles.books, 'load cycles: the refresh\'s alone')
    expect_equal(#PAGE1, vim.api.nvim_win_get_cursor(0)[1], 'the cursor on the last book, above the loading row')
    press('G')
    expect_lines(books_buf, concat(PAGE1, PAGE2, { LOADING }), 'pages one and two')
    press('G')
    expect_lines(books_buf, concat(PAGE1, PAGE2, PAGE3), 'all pages')
    expect_status(books_buf, 'loaded 10')
  end)

  -- Bug: the second list ran fetchData, which loaded the source again from page one.
  test('a second list on the same source shows its pages without loading it again', function()
    local conn = ds.view(books_buf).conn
    local cycles = (conn.load_cycles or {}).books
    local shown = lines(books_buf)
    local again = ds.open({ sources = { paginated('books', '/v1/books') }, title = 'books, again', format = book_line })
    expect_lines(again, shown, 'the second list')
    expect_status(again, 'loaded 10')
    -- Whatever the second list asked for was sent before this, and its events with it.
    H.request(conn, 'ping')
    expect_equal(cycles, (conn.load_cycles or {}).books, 'load cycles of books')
    expect_lines(books_buf, shown, 'the first list')
    expect_equal(true, cycles ~= nil and cycles > 0, 'the first list loaded books')
    vim.cmd('bwipeout ' .. again)
    vim.api.nvim_set_current_buf(books_buf)
  end)

  test('a failing endpoint shows the URL and the server\'s own words', function()
    local buf = ds.open({
      name = 'broken', kind = 'remote', apiPath = '/v1/broken', remoteConfiguration = { baseURL = H.base_url },
      placeholderStorageOptions = { 'loading', 'noResults', 'errors' },
    })
    local prefix = '  ✗ error: ' .. H.base_url .. '/v1/broken: HTTP status 500'
    H.wait_until(function()
      return vim.startswith(lines(buf)[1], prefix)
    end)
    local _, description = H.request(ds.view(buf).conn, 'describeSource', { source = 'broken' })
    -- The fixture's body is {"error": "the database is on fire"}; a daemon that reads it
    -- (protocol 1.1) sends it as serverMessage, and then it is shown.
    local said = description.lastError and description.lastError.serverMessage
    if said ~= nil then
      expect_equal('the database is on fire', said, 'serverMessage')
    end
    local expected = prefix .. (said and ': the database is on fire' or '')
    expect_lines(buf, { expected }, 'the error row')
    expect_status(buf, 'error: HTTP status 500' .. (said and ': the database is on fire' or ''))
    -- The message: what went wrong, then the URL only if the line has room for it (the
    -- error row above has it all).
    expect_note(LEVELS.ERROR, 'broken: HTTP status 500', said)
    expect_equal(1, #H.notes, 'messages (one per failure)')
    local marks = vim.api.nvim_buf_get_extmarks(buf, ds.view(buf).namespace, 0, -1, { details = true })
    expect_equal('DatasourcedError', marks[1] and marks[1][4].hl_group, 'the error row\'s highlight')

    vim.cmd('DatasourcedRefresh') -- loads again: fails again, says so again
    H.wait_until(function()
      return #H.notes == 2
    end)
    expect_equal(2, #H.notes_with(LEVELS.ERROR, 'broken', '500'), 'messages after a refresh')
    expect_lines(buf, { expected }, 'the error row after a refresh')

    vim.cmd('DatasourcedRetry') -- not paginated: loads again
    H.wait_until(function()
      return #H.notes == 3
    end)
    expect_equal(3, #H.notes_with(LEVELS.ERROR, 'broken', '500'), 'messages after a retry')
  end)

  test('error texts name the URL, the redirect, the server\'s words and when to retry', function()
    expect_equal('http://h/a → http://h/b: HTTP status 503: down for maintenance (retry after 30 s)',
      render.error_text({ kind = 'http', status = 503, message = 'HTTP status 503', url = 'http://h/a',
        finalURL = 'http://h/b', serverMessage = 'down for maintenance', retryAfterSeconds = 30 }), 'a full error')
    expect_equal('http://h/a: HTTP status 502: Bad gateway', render.error_text({ kind = 'http',
      message = 'HTTP status 502', url = 'http://h/a', body = '  Bad\n gateway ' }), 'a short plain body')
    expect_equal('http://h/a: HTTP status 502', render.error_text({ kind = 'http', message = 'HTTP status 502',
      url = 'http://h/a', body = '<html><body>Bad gateway</body></html>' }), 'an HTML body is left out')
    expect_equal('superseded by a new load', render.error_text({ kind = 'cancelled',
      message = 'superseded by a new fetchData' }), 'no URL, and no protocol method')
    expect_equal('cancelled', render.error_text({ kind = 'cancelled', message = 'cancelled by cancelFetch' }), 'cancelled')
    -- A message naming its URL already does not get it twice.
    expect_equal('pagination stopped: 2 pages in a row brought no new object from http://h/e?page=3',
      render.error_text({ kind = 'loop', url = 'http://h/e?page=3',
        message = 'pagination stopped: 2 pages in a row brought no new object from http://h/e?page=3' }), 'a URL once')
    expect_equal('pagination stopped: 2 pages in a row brought no new object',
      render.error_text({ kind = 'loop', url = 'http://h/e?page=3',
        message = 'pagination stopped: 2 pages in a row brought no new object from http://h/e?page=3' }, { short = true }),
      'short: no URL')
    expect_equal('loop', render.error_text({ kind = 'loop' }), 'only a kind')
    expect_equal('HTTP status 503: down', render.error_text({ message = 'HTTP status 503', url = 'http://h/a',
      serverMessage = 'down' }, { short = true }), 'short, for a statusline')
  end)

  test(':DatasourcedRetry after a failed next page asks for that page again', function()
    local buf = ds.open({ sources = { paginated('flaky', '/v1/flaky', { placeholderStorageOptions = 14 }) }, format = book_line })
    expect_lines(buf, concat(PAGE1, { LOADING }), 'page one')
    press('G') -- page two answers 503 once
    local failed_row = '  ✗ error: ' .. H.base_url .. '/v1/flaky?page=2&page_size=4: HTTP status 503'
    H.wait_until(function()
      return vim.startswith(lines(buf)[5] or '', failed_row)
    end)
    expect(vim.startswith(lines(buf)[5] or '', failed_row), 'the failed page\'s row', lines(buf))
    local shown = concat(PAGE1, { lines(buf)[5] })
    expect_note(LEVELS.ERROR, 'flaky', '503')
    -- The error row replaced the row under the cursor, which fires CursorMoved; that must
    -- not count as the user showing the row (it would retry, and fail, in a loop).
    for _ = 1, 5 do
      H.tick()
    end
    local _, description = H.request(ds.view(buf).conn, 'describeSource', { source = 'flaky' })
    expect_equal(false, description and description.isFetching, 'fetching after the failure, unasked')
    expect_lines(buf, shown, 'the failed page, still')
    local edits = H.watch_edits(buf)
    vim.cmd('DatasourcedRetry')
    expect_lines(buf, concat(PAGE1, PAGE2, { LOADING }), 'page two after the retry')
    edits.active = false
    expect(edits.first >= #PAGE1, 'the retry kept page one (fetchNextPage, not fetchData)',
      'first edited line ' .. edits.first)
  end)

  test('a sectioned list over a new paginated source loads it in one cycle', function()
    local buf = ds.open({
      sources = { paginated('genres', '/v1/books'), { name = 'genresByGenre', kind = 'sectioned', source = 'genres', sectioningKey = 'genre' } },
      show = 'genresByGenre',
      format = book_line,
    })
    expect_status(buf, 'loaded 4')
    local conn = ds.view(buf).conn
    expect_equal(1, conn.load_cycles.genres, 'load cycles of genres')
    expect_equal(1, conn.load_cycles.genresByGenre, 'load cycles of genresByGenre')
  end)

  local shelf_buf
  -- Bug: the loading row of a sectioned view over a paginated source lacks the
  -- sectioning key, and sat under a "## null" header of its own.
  test('a sectioned view has header lines, but none for a section of just the loading row', function()
    shelf_buf = ds.open({ sources = { paginated('shelf', '/v1/books') }, format = book_line })
    expect_lines(shelf_buf, concat(PAGE1, { LOADING }), 'the shelf')
    local buf = ds.open({
      sources = { paginated('shelf', '/v1/books'), { name = 'shelfByGenre', kind = 'sectioned', source = 'shelf', sectioningKey = 'genre' } },
      show = 'shelfByGenre',
      format = book_line,
    })
    expect_lines(buf, {
      '## science fiction', '1 Dune', '4 Solaris', '## mystery', '2 Gaudy Night', '## poetry', '3 Ariel', LOADING,
    }, 'page one by genre')
    expect_status(buf, 'loaded 4')
    expect_equal(nil, ds.view(buf):index_path_at(1), 'a header has no index path')
    expect_equal({ 2, 0 }, ds.view(buf):index_path_at(7), 'index path of "3 Ariel"')
    expect_equal({ 3, 0 }, ds.view(buf):index_path_at(8), 'index path of the loading row')
    press('G') -- the last row of a view over a paginated source loads its next page
    expect_lines(buf, {
      '## science fiction', '1 Dune', '4 Solaris', '7 Kindred', '## mystery', '2 Gaudy Night', '5 The Big Sleep',
      '8 Rebecca', '## poetry', '3 Ariel', '6 Howl', LOADING,
    }, 'pages one and two by genre')
    -- The shelf list, open in another buffer, followed the same load.
    expect_lines(shelf_buf, concat(PAGE1, PAGE2, { LOADING }), 'the shelf list')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads')
  end)

  test('the sectioned view follows moves and section changes to the last page', function()
    local buf = vim.api.nvim_get_current_buf() -- shelfByGenre, from the test before
    expect_status(buf, 'loaded 8')
    press('G')
    expect_lines(buf, {
      '## science fiction', '1 Dune', '4 Solaris', '7 Kindred', '10 Ubik', '## mystery', '2 Gaudy Night',
      '5 The Big Sleep', '8 Rebecca', '## poetry', '3 Ariel', '6 Howl', '9 Leaves of Grass',
    }, 'all pages by genre')
    expect_status(buf, 'loaded 10')
    expect_lines(shelf_buf, concat(PAGE1, PAGE2, PAGE3), 'the shelf list')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads')
  end)

  test('a section titled null keeps its header when it holds objects', function()
    local buf = ds.open({
      sources = {
        { name = 'crew', kind = 'simple', identityKey = 'id', objects = { { id = 1, name = 'Ada', team = 'red' } } },
        { name = 'crewByTeam', kind = 'sectioned', source = 'crew', sectioningKey = 'team' },
      },
      show = 'crewByTeam',
      format = function(p)
        return p.name
      end,
    })
    expect_lines(buf, { '## red', 'Ada' }, 'by team')
    H.request(ds.view(buf).conn, 'insertObjects', { source = 'crew', objects = { { id = 2, name = 'Bob' } } })
    expect_lines(buf, { '## red', 'Ada', '## null', 'Bob' }, 'Bob has no team')
    H.request(ds.view(buf).conn, 'removeObjects', { source = 'crew', index = 1 })
    expect_lines(buf, { '## red', 'Ada' }, 'Bob left')
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

  test('a multi list shows readable rows and follows edits of its children', function()
    local buf = ds.open({
      sources = {
        { name = 'todo', kind = 'simple', objects = { 'write tests', 'fix bug' } },
        { name = 'done', kind = 'simple', objects = {} },
        { name = 'board', kind = 'multi', sources = { 'todo', 'done' } },
      },
      show = 'board',
    })
    expect_lines(buf, { '## todo', 'write tests', 'fix bug', '## done' }, 'the board')
    local conn = ds.view(buf).conn
    conn:request('removeObjects', { source = 'todo', index = 1 })
    conn:request('insertObjects', { source = 'done', objects = { 'fix bug' } })
    conn:request('insertObjects', { source = 'todo', objects = { { task = 'ship it', due = 3 } }, index = 0 })
    expect_lines(buf, { '## todo', 'due: 3  task: ship it', 'write tests', '## done', 'fix bug' }, 'after three edits')
    expect_equal(0, ds.view(buf).resyncs, 'full re-reads')
  end)

  test('change sets follow revisions (protocol 1.1), or section counts after each load (1.0)', function()
    local buf = ds.open({ name = 'revs', kind = 'simple', objects = { 'a', 'b' } })
    expect_lines(buf, { 'a', 'b' }, 'the list')
    local view = ds.view(buf)
    local conn = view.conn
    H.request(conn, 'insertObjects', { source = 'revs', objects = { 'c' } })
    expect_lines(buf, { 'a', 'b', 'c' }, 'after an insertion')
    if conn:has_revisions() then
      local _, description = H.request(conn, 'describeSource', { source = 'revs' })
      expect_equal(description.revision, view.revision, 'the revision the list shows')
      -- A change set that does not follow the list's revision: one was missed, so the
      -- list reads everything again (and shows the daemon's rows, not this change's).
      view:on_event('didChange', { source = 'revs', previousRevision = view.revision + 1,
        revision = view.revision + 2, changes = { inserted = { { 0, 0 } } } })
      expect_equal(1, view.resyncs, 'full re-reads')
      expect_lines(buf, { 'a', 'b', 'c' }, 'the list after reading it again')
      H.wait_until(function()
        return view.revision == description.revision
      end)
      expect_equal(description.revision, view.revision, 'the revision after reading it again')
    else
      expect_equal(nil, view.revision, 'a revision (none used under protocol 1.0)')
      -- A change set the list applied wrongly (as if it had missed one): the counts
      -- checked after the next load differ, and the list reads everything again.
      view:on_event('didChange', { source = 'revs', changes = { deleted = { { 0, 0 } } } })
      expect_lines(buf, { 'b', 'c' }, 'the list, wrong')
      vim.cmd('DatasourcedRefresh')
      expect_lines(buf, { 'a', 'b', 'c' }, 'the list after the load')
      expect_equal(1, view.resyncs, 'full re-reads')
    end
  end)

  test('change values apply without reading rows (changeValues), else new rows are read', function()
    local buf = ds.open({ name = 'values', kind = 'simple', objects = { 'a' } })
    expect_lines(buf, { 'a' }, 'the list')
    local conn = ds.view(buf).conn
    local counts = H.count_requests(conn)
    H.request(conn, 'insertObjects', { source = 'values', objects = { 'b', 'c' } })
    expect_lines(buf, { 'a', 'b', 'c' }, 'after an insertion')
    counts.stop()
    if conn:has_change_values() then
      expect_equal(nil, counts.objectsInSection, 'objectsInSection requests')
    else
      expect_equal(1, counts.objectsInSection, 'objectsInSection requests (no changeValues from this daemon)')
    end
  end)

  test('the cursor stays on its row when rows arrive above it; a list just opened keeps its top', function()
    local buf = ds.open({ name = 'stays', kind = 'simple', objects = { 'c', 'd' } })
    expect_lines(buf, { 'c', 'd' }, 'the list')
    local conn = ds.view(buf).conn
    H.request(conn, 'insertObjects', { source = 'stays', objects = { 'b' }, index = 0 })
    expect_lines(buf, { 'b', 'c', 'd' }, 'a row above')
    expect_equal(1, vim.api.nvim_win_get_cursor(0)[1], 'the cursor of a list nobody moved in')
    press('j') -- onto c
    H.request(conn, 'insertObjects', { source = 'stays', objects = { 'a' }, index = 0 })
    expect_lines(buf, { 'a', 'b', 'c', 'd' }, 'another row above')
    expect_equal('c', vim.api.nvim_get_current_line(), 'the row under the cursor')
  end)

  test('a source with no objects shows the no-results row', function()
    local buf = ds.open({ name = 'empty', kind = 'remote', apiPath = '/v1/empty', keyPath = 'books',
      remoteConfiguration = { baseURL = H.base_url } })
    expect_lines(buf, { '  (no results)' }, 'no results')
    expect_status(buf, 'loaded 0')
  end)

  test(':DatasourcedCancel ends a slow load with a warning', function()
    local buf = ds.open({ name = 'slow', kind = 'remote', apiPath = '/v1/slow', keyPath = 'books',
      remoteConfiguration = { baseURL = H.base_url } })
    expect_lines(buf, { LOADING }, 'loading')
    expect_status(buf, 'loading')
    vim.cmd('DatasourcedCancel')
    expect_lines(buf, { '' }, 'empty after the cancel')
    expect_status(buf, 'cancelled')
    expect_note(LEVELS.WARN, 'slow', 'cancelled')
    expect_equal(0, #H.notes_with(LEVELS.ERROR), 'error messages')
  end)

  test('a request the daemon refuses shows as a message, not a traceback', function()
    local buf = ds.open({ name = 'bad', kind = 'remote', apiPath = '/x', remoteConfiguration = { baseURL = 'ftp://example.org' } })
    expect_note(LEVELS.ERROR, 'bad: the daemon refused the source: "remoteConfiguration.baseURL" must be an http or https URL')
    expect_equal(0, #H.notes_with(LEVELS.ERROR, '32602'), 'messages with the JSON-RPC code')
    expect_equal(0, #H.notes_with(LEVELS.ERROR, 'Invalid params'), 'messages with the JSON-RPC label')
    expect(vim.b[buf].datasourced_status:match('^error: ') ~= nil, 'the status shows the error', vim.b[buf].datasourced_status)
    vim.cmd('DatasourcedRefresh') -- tries again, is refused again, quietly but for the message
    H.wait_until(function()
      return #H.notes == 2
    end)
    expect_equal(2, #H.notes_with(LEVELS.ERROR, 'remoteConfiguration.baseURL'), 'messages')
  end)

  -- Bug: the first list stayed behind, dead, and received the change sets of the second
  -- list's source without ever having read it: "listview.lua:379: inserted section out
  -- of range" was shown.
  test('reopening a spec after fixing a refused one starts the list again in its buffer', function()
    local path = vim.fn.tempname() .. '.json'
    local spec = { sources = { paginated('fixme', '/v1/books') }, title = 'Fix me' }
    spec.sources[1].remoteConfiguration = { baseURL = 'ftp://example.org' }
    vim.fn.writefile({ vim.fn.json_encode(spec) }, path)
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    local first = vim.api.nvim_get_current_buf()
    expect_note(LEVELS.ERROR, 'fixme: the daemon refused the source')
    spec.sources[1].remoteConfiguration = { baseURL = H.base_url }
    vim.fn.writefile({ vim.fn.json_encode(spec) }, path)
    H.notes = {}
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    expect_status(buf, 'loaded 4')
    expect_equal(5, #lines(buf), 'lines')
    H.request(ds.view(buf).conn, 'ping')
    expect_equal({}, H.notes, 'messages')
    expect_equal(first, buf, 'the list kept its buffer')
    expect_equal(0, vim.fn.bufexists('datasourced://Fix me (2)'), 'a second buffer')
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
    expect_equal(0, #H.notes, 'messages')
  end)

  test('a formatter that fails shows on its row, not as a traceback', function()
    local buf = ds.open({
      name = 'numbers', kind = 'simple', objects = { 1, 'two' },
      format = function(value)
        return string.format('%03d', value)
      end,
    })
    H.wait_until(function()
      return #lines(buf) == 2
    end)
    expect_equal('001', lines(buf)[1], 'the row that formats')
    expect(lines(buf)[2]:match('^  <format failed: ') ~= nil, 'the row that does not says so', lines(buf)[2])
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
    local buf = ds.open({ name = 'books', kind = 'simple', objects = { 'own daemon' } }, { cmd = { ctx.daemon, 'serve' } })
    expect_lines(buf, { 'own daemon' }, 'a "books" source unrelated to the other daemon\'s')
    local conn = ds.view(buf).conn
    expect(conn ~= shared and conn.pid ~= nil and conn.pid ~= shared.pid, 'a second daemon', { conn.pid, shared.pid })

    vim.loop.kill(conn.pid, 'sigkill')
    expect_note(LEVELS.ERROR, 'daemon exited')
    expect_status(buf, 'daemon exited')
    expect(not shared.exited, 'the other daemon runs on')

    vim.cmd('DatasourcedRefresh')
    expect_status(buf, 'loaded 1')
    expect_lines(buf, { 'own daemon' }, 'the list after the restart')
    expect(ds.view(buf).conn.pid ~= conn.pid, 'a new daemon')
  end)

  test('wiping the last list of a daemon stops it (shutdown, exit: status 0)', function()
    local buf = ds.open({ name = 'alone', kind = 'simple', objects = { 1 } }, { cmd = { ctx.daemon, 'serve', '--max-message-size', '1048576' } })
    expect_lines(buf, { '1' }, 'the list')
    local conn = ds.view(buf).conn
    vim.cmd('bwipeout ' .. buf)
    H.wait_until(function()
      return conn.exited
    end)
    expect_equal(0, conn.exit_code, 'exit status')
    expect_equal(0, #H.notes, 'messages (an exit we asked for is not news)')
  end)

  test('quitting Neovim shuts the daemon down cleanly (VimLeavePre)', function()
    -- A separate Neovim (this one's binary) quits; the daemon runs under sh, which
    -- records its exit status.
    local status_file = vim.fn.tempname()
    local script = vim.fn.tempname() .. '.lua'
    vim.fn.writefile({
      string.format('require("datasourced").setup({ cmd = { "sh", "-c", %q, %q, %q } })',
        '"$0"; echo $? > "$1"', ctx.daemon, status_file),
      'local buf = require("datasourced").open({ name = "q", kind = "simple", objects = { 1 } })',
      'vim.wait(10000, function() return vim.b[buf].datasourced_status == "loaded 1" end, 10)',
      'vim.cmd("qall!")',
    }, script)
    local job = vim.fn.jobstart({ vim.v.progpath, '--headless', '--clean', '-u', 'NONE', '--cmd', 'set runtimepath^=' .. ctx.root,
      '--cmd', 'runtime plugin/datasourced.lua', '-c', 'luafile ' .. script })
    expect(job > 0, 'nvim started', job)
    H.wait_until(function()
      return vim.fn.filereadable(status_file) == 1 and #vim.fn.readfile(status_file) > 0
    end)
    expect_equal({ '0' }, vim.fn.filereadable(status_file) == 1 and vim.fn.readfile(status_file) or nil, 'the daemon\'s exit status')
  end)

  test('open() with a bad spec says what is wrong', function()
    expect_equal(nil, ds.open({ title = 'nothing' }), 'no buffer')
    expect_note(LEVELS.ERROR, 'open() takes createSource params')
    H.notes = {}
    local buf = ds.open({ sources = { { name = 'shown', kind = 'simple' } }, show = 'typo' })
    expect_note(LEVELS.ERROR, 'typo: reading the list was refused: "source": no source named "typo"')
    expect(vim.b[buf].datasourced_status:match('^error: ') ~= nil, 'the status shows the error', vim.b[buf].datasourced_status)
    H.request(ds.view(buf).conn, 'ping')
    expect_equal(1, #H.notes, 'messages (one, not one per request)')
  end)
end
