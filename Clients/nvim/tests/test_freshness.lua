-- Protocol 1.2: lists that open from the daemon's persisted cache (marked stale in the
-- statusline until the server confirms them) and live lists (refreshes render outside
-- any load cycle). Run once by tests/main.lua, on the fixture API's /v1/held,
-- /v1/catalog and /v1/live routes (some answer a set number of times); the daemons here
-- share a private cache file.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_status, expect_note = H.expect_lines, H.expect_status, H.expect_note
  local press, concat, book_line, paginated = H.press, H.concat, H.book_line, H.paginated
  local PAGE1, PAGE2, PAGE3, LOADING, LEVELS = H.PAGE1, H.PAGE2, H.PAGE3, H.LOADING, H.LEVELS
  local ListView = require('datasourced.listview')
  local ALL = concat(PAGE1, PAGE2, PAGE3)
  local BY_GENRE = {
    '## science fiction', '1 Dune', '4 Solaris', '7 Kindred', '10 Ubik',
    '## mystery', '2 Gaudy Night', '5 The Big Sleep', '8 Rebecca',
    '## poetry', '3 Ariel', '6 Howl', '9 Leaves of Grass',
  }
  local MARKED = '%[cached %d%d:%d%d%]$' -- today's time, local

  -- A folder of its own (the daemon creates it): not Neovim's temporary folder itself,
  -- which Neovim 0.10 and later hold an flock(2) on, and the daemon locks the folder of
  -- its cache file while it creates the file.
  local cache_cmd = { ctx.daemon, '--cache-path', vim.fn.tempname() .. '/cache.sqlite' }
  local held = paginated('held', '/v1/held', { cache = { enabled = true } })
  local catalog = paginated('catalog', '/v1/catalog', { cache = { enabled = true } })

  --- Every status each list shows from now on, by buffer (set_status adds the mark).
  local function record_statuses()
    local seen, original = {}, ListView.set_status
    ListView.set_status = function(view, state)
      original(view, state)
      seen[view.buf] = seen[view.buf] or {}
      table.insert(seen[view.buf], view.status)
    end
    seen.stop = function()
      ListView.set_status = original
    end
    return seen
  end

  --- Wipes out a list and waits for its daemon (its last list's) to end.
  local function close_and_wait(buf)
    local conn = ds.view(buf).conn
    vim.cmd('bwipeout ' .. buf)
    H.wait_until(function()
      return conn.exited
    end)
    expect(conn.exited, 'the daemon ended with its last list')
  end

  --- The statusline of the current window, as drawn.
  local function statusline()
    return vim.api.nvim_eval_statusline(vim.wo.statusline, { winid = vim.api.nvim_get_current_win() }).str
  end

  --- A first daemon loads the three pages of `spec` (the cache keeps them) and stops.
  local function load_three_pages(spec)
    local buf = ds.open({ sources = { spec }, format = book_line }, { cmd = cache_cmd })
    expect_lines(buf, concat(PAGE1, { LOADING }), 'page one')
    press('G')
    expect_lines(buf, concat(PAGE1, PAGE2, { LOADING }), 'pages one and two')
    press('G')
    expect_lines(buf, ALL, 'every page')
    expect_status(buf, 'loaded 10')
    expect_equal(false, vim.b[buf].datasourced_stale, 'b:datasourced_stale after a load from the server')
    close_and_wait(buf)
  end

  test('a list loaded once opens from the cache at once, marked stale while no answer comes', function()
    load_three_pages(held)

    -- A second daemon, on a view by genre: the server's answer to page one is held (never
    -- given), yet every cached row is there, marked.
    buf = ds.open({
      sources = { held, { name = 'heldByGenre', kind = 'sectioned', source = 'held', sectioningKey = 'genre' } },
      show = 'heldByGenre', format = book_line,
    }, { cmd = cache_cmd })
    expect_lines(buf, BY_GENRE, 'the cached rows, by genre')
    H.wait_until(function()
      return vim.b[buf].datasourced_stale == true
    end)
    local status = vim.b[buf].datasourced_status
    expect(status:match('^loading ' .. MARKED), 'loading, marked as cached rows', status)
    expect_equal(true, vim.b[buf].datasourced_stale, 'b:datasourced_stale')
    expect(statusline():find(status, 1, true) ~= nil, 'the statusline shows it', statusline())
    local conn = ds.view(buf).conn
    local _, description = H.request(conn, 'describeSource', { source = 'held' })
    expect_equal(true, description.isFetching, 'the revalidation is in flight (no answer yet)')
    expect_equal(true, description.stale, 'stale, as the daemon says')
    local cached_at = require('datasourced.render').stale_marker(description.cachedAt)
    expect(status:sub(-#cached_at) == cached_at, 'the mark is the daemon\'s cachedAt', { status, description.cachedAt })

    -- Given up on, the revalidation leaves the cached rows, and the mark.
    H.request(conn, 'cancelFetch', { source = 'held' })
    H.wait_until(function()
      return vim.startswith(vim.b[buf].datasourced_status, 'cancelled')
    end)
    expect(vim.b[buf].datasourced_status:match('^cancelled ' .. MARKED), 'cancelled, still marked',
      vim.b[buf].datasourced_status)
    expect_lines(buf, BY_GENRE, 'the cached rows, still')
    close_and_wait(buf)
  end)

  test('the mark goes once the server confirms the cached rows (304), and no line changes', function()
    load_three_pages(catalog)
    local seen = record_statuses()
    local buf = ds.open({ sources = { catalog }, format = book_line }, { cmd = cache_cmd })
    expect_lines(buf, ALL, 'the cached rows')
    local edits = H.watch_edits(buf)
    expect_status(buf, 'loaded 10')
    seen.stop()
    edits.active = false
    expect_equal(0, edits.count, 'edits of the buffer after the cached rows were shown')
    expect_equal(false, vim.b[buf].datasourced_stale, 'b:datasourced_stale')
    local marked = vim.tbl_filter(function(status)
      return status:match(MARKED) ~= nil
    end, seen[buf] or {})
    expect(#marked > 0 and marked[1]:match('^loading '), 'it was marked while the server was asked', seen[buf])
    expect_equal('loaded 10', seen[buf][#seen[buf]], 'the last status')
    expect(not statusline():find('[cached', 1, true), 'the statusline has no mark', statusline())
    local _, description = H.request(ds.view(buf).conn, 'describeSource', { source = 'catalog' })
    expect_equal(false, description.stale, 'stale, as the daemon says')
    close_and_wait(buf)
  end)

  local live_buf
  test('a live list shows a refresh\'s change at once, outside any load cycle', function()
    live_buf = ds.open({
      name = 'live', kind = 'remote', identityKey = 'id', keyPath = 'books', apiPath = '/v1/live',
      remoteConfiguration = { baseURL = H.base_url }, refreshIntervalSeconds = 1, format = book_line,
    })
    expect_lines(live_buf, { '1 Dune', '2 Gaudy Night', '3 Ariel' }, 'the list')
    expect_status(live_buf, 'loaded 3')
    local view = ds.view(live_buf)
    local seen = record_statuses()
    local edits = H.watch_edits(live_buf)
    -- The first refresh is answered 304 (nothing to show); the second brings the change.
    expect_lines(live_buf, { '1 Dune', '2 Gaudy Night (2nd ed.)', '3 Ariel', '4 Solaris' }, 'the refreshed list')
    expect_status(live_buf, 'loaded 4')
    seen.stop()
    edits.active = false
    expect(edits.first >= 1, 'the unchanged first row was not edited', 'first edited line ' .. edits.first)
    expect_equal(1, view.conn.load_cycles.live, 'load cycles (a refresh is none)')
    expect_equal({ 'loaded 4' }, seen[live_buf], 'statuses during the refresh (no "loading")')
    expect_equal(0, view.resyncs, 'full re-reads')
  end)

  test(':Datasourced refresh-interval N|off sets and stops a list\'s refreshes', function()
    local conn = ds.view(live_buf).conn
    vim.cmd('Datasourced refresh-interval 30')
    expect_note(LEVELS.INFO, 'live: refreshed every 30 s')
    local _, description = H.request(conn, 'describeSource', { source = 'live' })
    expect_equal(30, description.refreshIntervalSeconds, 'refreshIntervalSeconds')
    expect_equal(30, description.refresh and description.refresh.intervalSeconds, 'refresh.intervalSeconds')
    vim.cmd('Datasourced refresh-interval off')
    expect_note(LEVELS.INFO, 'live: refreshes stopped')
    _, description = H.request(conn, 'describeSource', { source = 'live' })
    expect_equal(nil, description.refresh, 'refresh after off')
    vim.cmd('Datasourced refresh-interval soon')
    expect_note(LEVELS.ERROR, 'usage: :Datasourced', 'refresh-interval N|off', 'soon')
    vim.cmd('Datasourced refresh-interval 0.5') -- the daemon's floor is 1 s
    expect_note(LEVELS.ERROR, 'live: the refresh interval was refused: "seconds" must be')
    local completions = vim.fn.getcompletion('Datasourced refresh-interval o', 'cmdline')
    expect_equal({ 'off' }, completions, 'completion')
    vim.cmd('bwipeout ' .. live_buf)
  end)
end
