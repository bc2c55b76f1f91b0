-- Issue 31 (protocol 1.5): paging backwards, load states per direction, `retry` of one
-- direction, and lists of counted placeholders with jumps. Run by tests/main.lua.

return function(H, ds, ctx)
  local test, expect, expect_equal, expect_lines, expect_status = H.test, H.expect, H.expect_equal, H.expect_lines, H.expect_status
  local press, concat, book_line, paginated = H.press, H.concat, H.book_line, H.paginated
  local PAGE1, PAGE2, PAGE3 = H.PAGE1, H.PAGE2, H.PAGE3

  local function cursor_row()
    return vim.api.nvim_get_current_line()
  end

  test('a list started at page 3 loads the page before while the cursor is on its first row, up to the start', function()
    local buf = ds.open({ sources = { paginated('fromThree', '/v1/books', { initialPage = 3 }) }, format = book_line })
    local view = ds.view(buf)
    -- Page three, then page two above it: the cursor sat on the first row. It stays on
    -- its object, so page one waits until the user goes up to the first row again.
    expect_lines(buf, concat(PAGE2, PAGE3), 'page two above page three')
    expect_status(buf, 'loaded 6')
    expect_equal(PAGE3[1], cursor_row(), 'the row under the cursor')
    local conn = view.conn
    H.request(conn, 'ping')
    expect_equal(2, conn.load_cycles.fromThree, 'load cycles: page three, then page two')
    press('gg')
    expect_lines(buf, concat(PAGE1, PAGE2, PAGE3), 'the whole list')
    expect_equal(PAGE2[1], cursor_row(), 'the row under the cursor after page one came')
    expect_status(buf, 'loaded 10')
    expect_equal('endReached', view:direction_state('prepend'), 'prepend')
    -- At the start: the first row asks for nothing more.
    local counts = H.count_requests(conn)
    press('j')
    press('gg')
    H.request(conn, 'ping')
    counts.stop()
    expect_equal(nil, counts.willDisplayObjectAtIndexPath, 'willDisplay requests at the start')
    expect_equal(3, conn.load_cycles.fromThree, 'load cycles')
  end)

  test('a window of two pages: going down drops page one, going back up to the first row loads it again', function()
    local buf = ds.open({ sources = { paginated('windowed', '/v1/books', { window = { maxPages = 2 } }) }, format = book_line })
    expect_lines(buf, concat(PAGE1, { H.LOADING }), 'page one')
    press('G')
    expect_lines(buf, concat(PAGE1, PAGE2, { H.LOADING }), 'pages one and two')
    press('G')
    expect_lines(buf, concat(PAGE2, PAGE3), 'pages two and three: page one dropped')
    expect_equal('idle', ds.view(buf):direction_state('prepend'), 'prepend: page one can load again')
    press('gg')
    expect_lines(buf, concat(PAGE1, PAGE2, { H.LOADING }), 'page one again, page three dropped')
    expect_equal(PAGE2[1], cursor_row(), 'the row under the cursor')
    expect_status(buf, 'loaded 8')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('a failed page before shows in the status, and the retry key asks for that page alone', function()
    local buf = ds.open({ sources = { paginated('back', '/v1/back', { initialPage = 3 }) }, format = book_line })
    local conn = ds.view(buf).conn
    -- /v1/back answers 503 to its page two once: the cursor on the first row asked for it.
    expect_status(buf, 'loaded 2 · error above: HTTP status 503: the shelf is being dusted (R retries)')
    expect_lines(buf, PAGE3, 'page three, kept')
    H.expect_note(H.LEVELS.ERROR, 'back', '503')
    local counts = H.count_requests(conn)
    press('R')
    expect_lines(buf, concat(PAGE2, PAGE3), 'page two after the retry')
    expect_status(buf, 'loaded 6')
    counts.stop()
    expect_equal(1, counts.retry, 'retry requests')
    expect_equal(nil, counts.fetchData, 'fetchData requests (page three stays)')
    expect_equal(nil, counts.fetchPreviousPage, 'fetchPreviousPage requests')
    expect_equal(PAGE3[1], cursor_row(), 'the row under the cursor')
  end)

  test('the status says what loads or failed above and below, naming the retry key', function()
    local buf = ds.open({ sources = { paginated('states', '/v1/books') }, format = book_line })
    expect_status(buf, 'loaded 4')
    local view = ds.view(buf)
    local idle, loading = { state = 'idle' }, { state = 'loading' }
    local failed = { state = 'error', error = { kind = 'http', status = 500, message = 'HTTP status 500', url = 'http://h/x' } }
    view:on_event('willLoadData', { source = 'states' })
    view:on_event('didChangeLoadState', { source = 'states', loadStates = { refresh = idle, prepend = idle, append = loading } })
    expect_status(buf, 'loaded 4 · loading below')
    view:on_event('didChangeLoadState', { source = 'states', loadStates = { refresh = idle, prepend = failed, append = failed } })
    view:on_event('failedWithError', { source = 'states', error = failed.error })
    expect_status(buf, 'loaded 4 · error above: HTTP status 500 (R retries), error below: HTTP status 500 (R retries)')
    ds.setup({ keymaps = { R = false, ['<leader>r'] = 'retry' } })
    view:set_load_states({ refresh = idle, prepend = loading, append = idle })
    view:set_load_states({ refresh = idle, prepend = failed, append = idle })
    expect_status(buf, 'loaded 4 · error above: HTTP status 500 (<leader>r retries)')
    ds.setup({ keymaps = ds.DEFAULT_KEYMAPS })
    view:on_event('willLoadData', { source = 'states' })
    view:on_event('didChangeLoadState', { source = 'states', loadStates = { refresh = loading, prepend = idle, append = idle } })
    expect_status(buf, 'loading')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('change sets of ranges (changeRanges, protocol 1.6) apply without reading the list again', function()
    local buf = ds.open({ name = 'ranges', kind = 'simple', objects = { 'a', 'b', 'c', 'd', 'e', 'f' } })
    expect_lines(buf, { 'a', 'b', 'c', 'd', 'e', 'f' }, 'the list')
    local view = ds.view(buf)
    local conn = view.conn
    local seen = {}
    local on_change = view.on_change
    view.on_change = function(self, params)
      table.insert(seen, params.changes)
      return on_change(self, params)
    end
    local counts = H.count_requests(conn)
    H.request(conn, 'insertObjects', { source = 'ranges', objects = { 'x', 'y', 'z' }, index = 2 })
    expect_lines(buf, { 'a', 'b', 'x', 'y', 'z', 'c', 'd', 'e', 'f' }, 'three rows inserted')
    H.request(conn, 'removeObjects', { source = 'ranges', index = 5, count = 3 })
    expect_lines(buf, { 'a', 'b', 'x', 'y', 'z', 'f' }, 'three rows removed')
    H.request(conn, 'removeObjects', { source = 'ranges', index = 0, count = 6 })
    expect_lines(buf, { '' }, 'every row removed')
    counts.stop()
    view.on_change = nil -- the class's again
    expect_equal({ { 0, 2, 3 } }, seen[1] and seen[1].inserted, 'the insertion, as the daemon sent it')
    expect_equal({ { 0, 5, 3 } }, seen[2] and seen[2].deleted, 'the removal, as the daemon sent it')
    expect_equal(0, view.resyncs, 'full re-reads')
    expect_equal(nil, counts.allObjects, 'allObjects requests')
    expect_equal(nil, counts.objectsInSection, 'objectsInSection requests')
    vim.cmd('bwipeout! ' .. buf)
  end)

  -- Counted placeholders and jumps, over /v1/million: 1,000,000 rows in pages of 100, of
  -- which the fixture API serves pages 1, 2 and 10000 (any other request fails).
  local TOTAL = 1000000
  local function million(name)
    return {
      name = name, kind = 'paginated', identityKey = 'id', keyPath = 'rows', pageSize = 100,
      placeholders = 'counted', jumpThreshold = 300, apiPath = '/v1/million',
      remoteConfiguration = { baseURL = H.base_url },
      format = function(row)
        return row.title
      end,
    }
  end
  -- The text line n shows: its own, or, for an unloaded row, the text drawn over its
  -- empty line (only what is on screen is drawn: headless, nothing is).
  local function line(buf, n)
    return ds.view(buf):line_text(n)
  end
  local function buffer_line(buf, n)
    return vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
  end
  -- The lines of the buffer that hold a text (unloaded rows hold none).
  local function lines_with_text(buf)
    local count, at, last = 0, 1, vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_call(buf, function()
      while at <= last do
        at = vim.fn.nextnonblank(at)
        if at == 0 then
          break
        end
        count, at = count + 1, at + 1
      end
    end)
    return count
  end
  local function wait_line(buf, n, text, what)
    H.wait_until(function()
      return line(buf, n) == text
    end, 30000)
    if line(buf, n) ~= text then
      -- Where the list was, for a failure that does not come again.
      local view = ds.view(buf)
      what = string.format('%s (status %q, %d lines of %d, known %s)', what, tostring(view and view.status),
        vim.api.nvim_buf_line_count(buf), view and view.line_count or -1, tostring(view and view.known))
    end
    expect_equal(text, line(buf, n), what)
  end

  -- Only what is visible is read and drawn: a million rows are a million empty lines, of
  -- which the rows around the window (read_visible: a window's height above and below it)
  -- are read and get a text.
  test('a counted list of a million rows reads and writes only the rows around its window', function()
    local conn = ds.connection()
    local asked, reads, whole = 0, 0, 0
    local original = conn.request
    conn.request = function(self, method, params, ...)
      if method == 'objectsInSection' and type(params) == 'table' then
        reads, asked = reads + 1, asked + (tonumber(params.count) or TOTAL)
      elseif method == 'allObjects' then
        whole = whole + 1
      end
      return original(self, method, params, ...)
    end
    local buf = ds.open(million('millionBounded'))
    wait_line(buf, 1, 'Row 1', 'the first row')
    -- The lines past the first screens are written right after the rows on screen, before
    -- a key is read: 50% typed as soon as the rows show goes to the middle of the list.
    expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'lines once the first rows show')
    expect_status(buf, 'loaded 100 of 1000000')
    H.request(conn, 'ping')
    conn.request = original
    local bound = 3 * vim.api.nvim_win_get_height(0)
    expect_equal(0, whole, 'allObjects requests')
    expect(reads >= 1 and asked >= vim.api.nvim_win_get_height(0) and asked <= bound,
      string.format('the rows read: the window and a window\'s height around it (%d rows at most)', bound),
      string.format('%d rows in %d reads', asked, reads))
    local written = lines_with_text(buf)
    expect(written >= vim.api.nvim_win_get_height(0) and written <= bound,
      string.format('lines with a text: the rows read (%d at most)', bound), written)
    expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'lines')
    press('50%')
    expect_equal(TOTAL / 2, vim.api.nvim_win_get_cursor(0)[1], 'the cursor line after 50%')
    vim.cmd('bwipeout! ' .. buf)
  end)

  -- The rows beyond the first screens are owed until the rows on screen are drawn (held
  -- back here): a move near the top leaves them owed, G takes them at once and goes to the
  -- list's last row, not to the last line written so far.
  test('G before a million-row list has all its lines goes to its last row', function()
    local ListView = require('datasourced.listview')
    local delays = { ListView.PAY_AFTER_MS, ListView.PAY_AFTER_DRAWN_MS }
    ListView.PAY_AFTER_MS, ListView.PAY_AFTER_DRAWN_MS = 60000, 60000
    local ok, problem = pcall(function()
      local buf = ds.open(million('millionEarly'))
      local view = ds.view(buf)
      wait_line(buf, 1, 'Row 1', 'the first row')
      expect_equal(TOTAL, view.line_count, 'the rows of the list')
      local written = vim.api.nvim_buf_line_count(buf)
      expect(written < TOTAL, 'the lines written before the rest are owed', written)
      press('j')
      expect_equal(written, vim.api.nvim_buf_line_count(buf), 'the lines written after j')
      press('G')
      expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'the lines written after G')
      expect_equal(TOTAL, vim.api.nvim_win_get_cursor(0)[1], 'the cursor line after G')
      expect_equal('  … row 1000000', line(buf, TOTAL), 'the last row, before its page comes')
      wait_line(buf, TOTAL, 'Row 1000000', 'the last row, loaded')
      vim.cmd('bwipeout! ' .. buf)
    end)
    ListView.PAY_AFTER_MS, ListView.PAY_AFTER_DRAWN_MS = delays[1], delays[2]
    if not ok then
      error(problem, 0)
    end
  end)

  -- Opened again (its buffer kept) or read again, a million-row list writes over its
  -- lines: deleting a million lines and writing them again takes Neovim most of a second.
  test('a million-row list opened again or read again writes over its lines, deleting none', function()
    local buf = ds.open(million('millionAgain'))
    wait_line(buf, 1, 'Row 1', 'the first row')
    H.wait_until(function()
      return vim.api.nvim_buf_line_count(buf) == TOTAL
    end, 30000)
    local changed, attached = 0, true
    vim.api.nvim_buf_attach(buf, false, {
      on_lines = function(_, _, _, first, last_old, last_new)
        changed = changed + (last_old - first) + (last_new - first)
        return not attached
      end,
    })
    local function settled()
      local view = ds.view(buf)
      return view.known and view.owed == 0 and view.spare == 0 and line(buf, 1) == 'Row 1'
        and vim.api.nvim_buf_line_count(buf) == TOTAL
    end
    local again = ds.open(million('millionAgain'))
    expect_equal(buf, again, 'the buffer of the list opened again')
    H.wait_until(settled, 30000)
    expect_equal('Row 1', line(buf, 1), 'the first row, opened again')
    expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'lines, opened again')
    expect_status(buf, 'loaded 100 of 1000000')
    expect(changed <= 1000, 'lines deleted and written, opened again: those of the rows read at most', changed)
    changed = 0
    ds.reload(buf)
    H.wait_until(function()
      return ds.view(buf).version > 0 and settled()
    end, 30000)
    H.request(ds.view(buf).conn, 'ping')
    expect_equal('Row 1', line(buf, 1), 'the first row, read again')
    expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'lines, read again')
    expect(changed <= 1000, 'lines deleted and written, read again', changed)
    attached = false
    vim.cmd('bwipeout! ' .. buf)
  end)

  -- A filter over a counted list keeps its unloaded rows (a million lines still): the
  -- matched characters are read for the rows around the window, not for every row (a
  -- read of a million rows, with their matches).
  test('a filter over a counted list reads the matches of the rows around its window only', function()
    local conn = ds.connection()
    local buf = ds.open(million('millionFiltered'))
    wait_line(buf, 1, 'Row 1', 'the first row')
    local asked = {}
    local original = conn.request
    conn.request = function(self, method, params, ...)
      if method == 'objectsInSection' and type(params) == 'table' and params.withMatches then
        table.insert(asked, params.count or 'every row')
      end
      return original(self, method, params, ...)
    end
    ds.set_filter('Row 7', buf)
    local view = ds.view(buf)
    H.wait_until(function()
      return view.filter and view.filter.ready and view.known and line(buf, 1) == 'Row 7' and view.matches_read ~= nil
    end, 60000)
    conn.request = original
    expect_equal('Row 7', line(buf, 1), 'the first row matching')
    expect(view.matches_read ~= nil, 'the matches were read')
    local bound = 3 * vim.api.nvim_win_get_height(0)
    for _, count in ipairs(asked) do
      expect(type(count) == 'number' and count <= bound,
        string.format('each read of matches: the rows around the window (%d at most)', bound), vim.inspect(asked))
    end
    local marks = vim.api.nvim_buf_get_extmarks(buf, require('datasourced.listview').match_namespace, 0, 0, {})
    expect(#marks > 0, 'the matched characters of the first row are highlighted')
    ds.set_filter('', buf)
    vim.cmd('bwipeout! ' .. buf)
  end)

  --- The tests of a counted list on the daemon `cmd` (label: which one).
  local function counted_tests(label, cmd)
    local buf, view, counts, conn
    test(label .. 'a counted list has its full size at once; unloaded rows are dim; only the screen is read', function()
      conn = ds.connection(cmd)
      counts = H.count_requests(conn)
      buf = ds.open(million('million'), { cmd = cmd })
      view = ds.view(buf)
      wait_line(buf, 1, 'Row 1', 'the first row')
      H.wait_until(function()
        return vim.api.nvim_buf_line_count(buf) == TOTAL
      end, 30000)
      expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'lines')
      expect_equal('  … row 101', line(buf, 101), 'the first unloaded row')
      expect_equal('  … row 1000000', line(buf, TOTAL), 'the last row')
      expect_equal('', buffer_line(buf, 101), 'the first unloaded row in the buffer (its text is drawn)')
      expect_equal('', buffer_line(buf, TOTAL), 'the last row in the buffer')
      expect_status(buf, 'loaded 100 of 1000000')
      expect_equal(nil, view:line_group(1), 'the group of a loaded row')
      expect_equal('DatasourcedUnloaded', view:line_group(101), 'the group of an unloaded row')
      expect_equal('DatasourcedUnloaded', view:line_group(TOTAL), 'the group of the last row')
      expect_equal(vim.fn.hlID('Comment'), vim.fn.synIDtrans(vim.fn.hlID('DatasourcedUnloaded')), 'DatasourcedUnloaded links to')
      H.request(conn, 'ping')
      expect_equal(nil, counts.allObjects, 'allObjects requests (a million rows)')
      -- Rows are read as they show: row 60, loaded but off screen, once the cursor is there.
      expect_equal('  … row 60', line(buf, 60), 'row 60 before it shows')
      press('60G')
      wait_line(buf, 60, 'Row 60', 'row 60 once it shows')
      H.request(conn, 'ping')
      expect_equal(nil, counts.willDisplayObjectAtIndexPath, 'willDisplay requests (a loaded row)')
    end)

    test(label .. 'G jumps to the last row, loading its page alone; gg brings the first page back', function()
      local _, before = H.request(conn, 'describeSource', { source = 'million' })
      counts.willDisplayObjectAtIndexPath = nil
      press('G')
      wait_line(buf, TOTAL, 'Row 1000000', 'the last row')
      expect_equal('Row 999901', line(buf, 999901), 'the first row of the last page')
      expect_equal('  … row 999900', line(buf, 999900), 'the row before the last page')
      expect_equal('', buffer_line(buf, 999900), 'the row before the last page, in the buffer')
      wait_line(buf, 1, '  … row 1', 'the first row, unloaded again by the jump')
      expect_equal(TOTAL, vim.api.nvim_buf_line_count(buf), 'lines (index paths never shift)')
      expect_equal(TOTAL, vim.api.nvim_win_get_cursor(0)[1], 'the cursor line')
      local _, after = H.request(conn, 'describeSource', { source = 'million' })
      expect(vim.endswith(after.lastURL or '', '/v1/million?page=10000&page_size=100'),
        'the last request was for page 10000', after.lastURL)
      expect_equal(1, counts.willDisplayObjectAtIndexPath, 'willDisplay requests')
      expect_equal(before.lastURL ~= after.lastURL, true, 'a request was made')
      expect_status(buf, 'loaded 100 of 1000000')
      press('gg')
      wait_line(buf, 1, 'Row 1', 'the first row')
      wait_line(buf, TOTAL, '  … row 1000000', 'the last row, unloaded again')
      expect_equal(2, counts.willDisplayObjectAtIndexPath, 'willDisplay requests')
    end)

    test(label .. 'keys held down over unloaded rows ask once, where the cursor rests', function()
      local debounce = view.DISPLAY_DEBOUNCE_MS
      -- Long enough that the keys below, a few ticks apart, come within it.
      view.DISPLAY_DEBOUNCE_MS = 400
      press('100G')
      H.request(conn, 'ping')
      counts.willDisplayObjectAtIndexPath = nil
      for _ = 1, 5 do
        press('j') -- rows 101 to 105: unloaded, near page one
      end
      wait_line(buf, 101, 'Row 101', 'page two')
      expect_equal('Row 105', vim.api.nvim_get_current_line(), 'the row under the cursor')
      expect_equal(1, counts.willDisplayObjectAtIndexPath, 'willDisplay requests')
      expect_equal('Row 1', line(buf, 1), 'page one, kept (no jump)')
      view.DISPLAY_DEBOUNCE_MS = debounce
    end)

    test(label .. '<CR> on an unloaded row loads its page at once', function()
      view.DISPLAY_DEBOUNCE_MS = 60000 -- the cursor's rest never comes within the test
      press('999950G')
      H.request(conn, 'ping')
      counts.willDisplayObjectAtIndexPath = nil
      expect_equal(999950, vim.api.nvim_win_get_cursor(0)[1], 'the cursor line')
      expect_equal('  … row 999950', line(buf, 999950), 'the row under the cursor')
      press('<CR>')
      wait_line(buf, 999950, 'Row 999950', 'the row, loaded')
      expect_equal(1, counts.willDisplayObjectAtIndexPath, 'willDisplay requests')
      view.DISPLAY_DEBOUNCE_MS = nil -- the list's default again
    end)

    -- Bug: a list opened with its cursor on an unloaded row waited for a move.
    test(label .. 'a second list opened after a jump loads the page under its cursor', function()
      expect_equal('  … row 1', line(buf, 1), 'the first row, unloaded by the jump')
      local spec = million('million')
      spec.title = 'million, again'
      local again = ds.open(spec, { cmd = cmd })
      wait_line(again, 1, 'Row 1', 'the first row of the second list')
      wait_line(buf, 1, 'Row 1', 'the first row of the first list')
      expect_equal(TOTAL, vim.api.nvim_buf_line_count(again), 'lines')
      counts.stop()
      vim.cmd('bwipeout! ' .. again)
      vim.cmd('bwipeout! ' .. buf)
    end)
  end

  counted_tests('[daemon] ', nil)
end
