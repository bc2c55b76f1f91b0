-- Issue 31 (protocol 1.5): paging backwards, load states per direction, `retry` of one
-- direction, and lists of counted placeholders with jumps. Run by tests/main.lua.

return function(H, ds, ctx)
  local test, expect_equal, expect_lines, expect_status = H.test, H.expect_equal, H.expect_lines, H.expect_status
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
end
