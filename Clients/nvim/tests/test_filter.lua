-- Issue 30: `/` filters a list as you type (a filtered source over the list's, setFilter at
-- each keystroke, matched characters highlighted), and :Datasourced search changes a
-- remote source's query in place (updateSource).

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_status, expect_note = H.expect_lines, H.expect_status, H.expect_note
  local press, concat, book_line, paginated = H.press, H.concat, H.book_line, H.paginated
  local LOADING, PAGE1, PAGE2, LEVELS = H.LOADING, H.PAGE1, H.PAGE2, H.LEVELS
  local ListView = require('datasourced.listview')

  --- The highlighted spans of a filter's matches: { line (1-based), first col, last col } (0-based
  --- byte columns, end exclusive), in order.
  local function match_spans(buf)
    local spans = {}
    for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ListView.match_namespace, 0, -1, { details = true })) do
      table.insert(spans, { mark[2] + 1, mark[3], mark[4].end_col })
    end
    table.sort(spans, function(a, b)
      return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2])
    end)
    return spans
  end

  local function expect_spans(buf, expected, what)
    H.wait_until(function()
      return vim.deep_equal(match_spans(buf), expected)
    end)
    expect_equal(expected, match_spans(buf), what)
  end

  --- Types `keys` and waits for the command line to be (or not be) a prompt's: Neovim
  --- 0.7 may take the keys a moment later than the main loop's next turn.
  local function press_until_prompt(keys, open)
    press(keys)
    H.wait_until(function()
      return (vim.fn.getcmdtype() == '@') == open
    end)
    expect_equal(open and '@' or '', vim.fn.getcmdtype(), open and 'a prompt is open' or 'the prompt is closed')
  end

  local buf

  test('/ filters the list as you type; matches are ranked and highlighted; <CR> keeps the filter', function()
    -- A window one line tall: the filter fills it (fill, its height) from page one's
    -- matches, so the pages after come as the cursor asks for them, as these tests check.
    -- (A window that the matches of page one do not fill: see "fills its window" below.)
    vim.cmd('1split')
    buf = ds.open({ sources = { paginated('fbooks', '/v1/books') }, title = 'filtered books', format = book_line })
    expect_lines(buf, concat(PAGE1, { LOADING }), 'page one')
    local conn = ds.view(buf).conn
    local counts = H.count_requests(conn)
    press_until_prompt('/', true)
    press('a')
    -- "a": every title with an a, best first (a word start before a letter inside one).
    expect_lines(buf, { '3 Ariel', '2 Gaudy Night', '4 Solaris', LOADING }, 'rows matching a')
    press('r')
    expect_lines(buf, { '3 Ariel', '4 Solaris', LOADING }, 'rows matching ar')
    -- "3 Ariel": A and r; "4 Solaris": the a and r of "laris" (title column 2 on).
    expect_spans(buf, { { 1, 2, 3 }, { 1, 3, 4 }, { 2, 5, 6 }, { 2, 6, 7 } }, 'highlighted characters')
    local marks = vim.api.nvim_buf_get_extmarks(buf, ListView.match_namespace, { 0, 0 }, { 0, -1 }, { details = true })
    expect_equal('DatasourcedMatch', marks[1] and marks[1][4].hl_group, 'the highlight group')
    press_until_prompt('<CR>', false)
    expect_lines(buf, { '3 Ariel', '4 Solaris', LOADING }, 'the filter is kept')
    H.request(conn, 'ping')
    counts.stop()
    expect_equal(1, counts.createSource or 0, 'filtered sources created')
    expect_equal(2, counts.setFilter or 0, 'setFilter requests: one per keystroke')
    local _, description = H.request(conn, 'describeSource', { source = ds.view(buf).source })
    expect_equal('filtered', description.kind, 'the list shows a filtered source')
    expect_equal({ query = 'ar', keyPaths = { 'genre', 'title' } }, description.match,
      'the match: the query over the string members shown')
    expect_status(buf, 'loaded 2')
  end)

  test('paging goes on through the filtered view: its loading row loads the next page', function()
    -- Page two has no title matching "ar": the loading row stays under the cursor, and asks
    -- for page three, whose "Leaves of Grass" matches (an a, then an r).
    press('G')
    expect_lines(buf, { '3 Ariel', '4 Solaris', '9 Leaves of Grass' }, 'every page loaded, filtered')
    local _, d = H.request(ds.view(buf).conn, 'describeSource', { source = 'fbooks' })
    expect_equal(3, d.currentPage, 'pages of the source')
    ds.set_filter('gaudy', buf)
    expect_lines(buf, { '2 Gaudy Night' }, 'the rows of every page, filtered anew')
  end)

  test('/ then <Esc> shows every row again; its prompt starts with the kept query', function()
    ds.set_filter('ar', buf)
    expect_lines(buf, { '3 Ariel', '4 Solaris', '9 Leaves of Grass' }, 'filtered by ar')
    press_until_prompt('/', true)
    expect_equal('ar', vim.fn.getcmdline(), 'the prompt starts with the filter\'s query')
    press('<Esc>')
    expect_lines(buf, concat(PAGE1, PAGE2, H.PAGE3), 'every row, in the source\'s order')
    expect_spans(buf, {}, 'no highlight without a filter')
  end)

  test(':Datasourced filter TEXT filters; the list keeps following its source', function()
    vim.cmd('Datasourced filter night')
    expect_lines(buf, { '2 Gaudy Night' }, 'filtered by night')
    expect_spans(buf, { { 1, 8, 9 }, { 1, 9, 10 }, { 1, 10, 11 }, { 1, 11, 12 }, { 1, 12, 13 } },
      'highlighted characters')
    vim.cmd('DatasourcedRefresh')
    expect_lines(buf, { '2 Gaudy Night', LOADING }, 'filtered after a refresh')
    press_until_prompt(':Datasourced filter<CR>', true) -- typed: the prompt waits for the test's keys
    press('<Esc>')
    expect_lines(buf, concat(PAGE1, { LOADING }), 'every row after the refresh (page one)')
    vim.cmd('bwipeout ' .. buf)
  end)

  test('a sectioned list filters in its sections, over its columns', function()
    local spec = {
      title = 'filtered by genre',
      sources = { paginated('gbooks', '/v1/books'), { name = 'gbyGenre', kind = 'sectioned', source = 'gbooks', sectioningKey = 'genre' } },
      columns = { { key = 'id', width = 3 }, { key = 'title', width = 6 }, 'year' },
    }
    local gbuf = ds.open(spec)
    H.wait_until(function()
      return ds.view(gbuf).loaded
    end)
    ds.set_filter('so', gbuf)
    -- "Solaris" is cut to its column: the matched characters shown are highlighted.
    -- Page one has one match: the filter fills the window from the pages after (page
    -- three's Leaves of Grass, an s and the o of "of"), to the last.
    expect_lines(gbuf, { '## science fiction', '4    Solar…  1959', '## mystery', '## poetry', '9    Leave…  1974' },
      'filtered')
    expect_spans(gbuf, { { 2, 5, 6 }, { 2, 6, 7 } }, 'highlighted characters in the cut title')
    vim.cmd('bwipeout ' .. gbuf)
  end)

  test('a spec that shows a filtered source over a sectioned one has its section headers', function()
    local hbuf = ds.open({
      title = 'mysteries',
      sources = { paginated('hbooks', '/v1/books'), { name = 'hbyGenre', kind = 'sectioned', source = 'hbooks', sectioningKey = 'genre' },
        { name = 'hmysteries', kind = 'filtered', source = 'hbyGenre', filter = { keyPath = 'genre', op = 'eq', value = 'mystery' } } },
      format = book_line,
    })
    expect_lines(hbuf, { '## science fiction', '## mystery', '2 Gaudy Night', '## poetry', LOADING }, 'the mysteries, in sections')
    vim.cmd('bwipeout ' .. hbuf)
  end)

  --- A fixture file of a paginated API of `pages` pages of 4 rows ({id, title}), the
  --- title of row n "Moon n" when moon(n) is true, else "Plain n".
  local function shelf_fixtures(pages, moon)
    local fixtures = {}
    for page = 1, pages do
      local rows = {}
      for n = (page - 1) * 4 + 1, page * 4 do
        table.insert(rows, { id = n, title = (moon(n) and 'Moon ' or 'Plain ') .. n })
      end
      table.insert(fixtures, { path = '/v1/shelf', query = { page = tostring(page), page_size = '4' },
        body = { books = rows, page = page, page_size = 4, number_of_pages = pages, total_count = pages * 4 } })
    end
    local path = vim.fn.tempname() .. '.json'
    vim.fn.writefile({ vim.fn.json_encode({ fixtures = fixtures }) }, path)
    return path
  end

  -- Bug: a query whose matches start on a later page showed the loading row alone, or a
  -- row and the loading row, until the cursor went to the end of the list (which then
  -- loaded every page). The filtered source is asked to fill the window (protocol 1.10's
  -- fill, the window's height): the daemon loads the pages it takes, and no more.
  test('/ over a list still paging fills its window when the matches start on a later page', function()
    -- 12 pages of 4; the first and third row of each page from page 3 on match "moon".
    local shelf = shelf_fixtures(12, function(n)
      return n > 8 and n % 2 == 1
    end)
    local base_url = H.base_url
    local stop_shelf = H.start_fixtures(ctx.daemon, shelf)
    local shelf_url = H.base_url
    H.base_url = base_url
    expect(stop_shelf ~= nil, 'the fixture server of the shelf started')
    vim.cmd('8split') -- the list's window: 8 lines
    local win = vim.api.nvim_get_current_win()
    local sbuf
    local ok, problem = pcall(function()
      local spec = { sources = { paginated('moonShelf', '/v1/shelf') }, title = 'a shelf', format = book_line }
      spec.sources[1].remoteConfiguration.baseURL = shelf_url
      sbuf = ds.open(spec)
      expect_equal(8, vim.api.nvim_win_get_height(0), 'the list window\'s height')
      expect_lines(sbuf, { '1 Plain 1', '2 Plain 2', '3 Plain 3', '4 Plain 4', LOADING }, 'page one')
      press_until_prompt('/', true)
      for _, key in ipairs({ 'm', 'o', 'o', 'n' }) do
        press(key)
      end
      press_until_prompt('<CR>', false)
      -- Eight matches (pages 3 to 6), then the loading row of the pages to come.
      local moons = {}
      for n = 9, 23, 2 do
        table.insert(moons, n .. ' Moon ' .. n)
      end
      expect_lines(sbuf, concat(moons, { LOADING }), 'a window of matches')
      local conn = ds.view(sbuf).conn
      H.request(conn, 'ping')
      local _, d = H.request(conn, 'describeSource', { source = 'moonShelf' })
      expect_equal(6, d.currentPage, 'pages loaded: those the window\'s matches took, no more')
      local _, f = H.request(conn, 'describeSource', { source = ds.view(sbuf).source })
      expect_equal(8, f.fill, 'the filtered source\'s fill: the window\'s height')
      expect_equal({ 1, 0 }, vim.api.nvim_win_get_cursor(0), 'the cursor, still on the first row')
      expect_lines(sbuf, concat(moons, { LOADING }), 'the list, once the daemon answered')
    end)
    if sbuf then
      vim.cmd('bwipeout! ' .. sbuf)
    end
    if vim.api.nvim_win_is_valid(win) and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
    if stop_shelf then
      stop_shelf()
    end
    if not ok then
      error(problem, 0)
    end
  end)

  local search_spec = {
    title = 'searched books',
    sources = { { name = 'found', kind = 'remote', identityKey = 'id', keyPath = 'books', apiPath = '/v1/search',
      remoteConfiguration = { baseURL = '${baseURL}' } } },
    search = { parameter = 'q', debounceMilliseconds = 100 },
    format = book_line,
  }

  test(':Datasourced search TEXT updates the remote source\'s query in place', function()
    local sbuf = ds.open(search_spec, { variables = { baseURL = H.base_url } })
    expect_lines(sbuf, { '1 Dune', '2 Gaudy Night', '3 Ariel', '4 Solaris' }, 'every book')
    vim.cmd('Datasourced search dune')
    expect_lines(sbuf, { '1 Dune' }, 'the server\'s answer to q=dune')
    expect_status(sbuf, 'loaded 1')
    -- While the former query's rows are up (stale, with no cache time), the status says so.
    ds.view(sbuf):set_freshness('found', true, nil)
    expect_status(sbuf, 'loaded 1 [updating]')
    ds.view(sbuf):set_freshness('found', false, nil)
    local _, description = H.request(ds.view(sbuf).conn, 'describeSource', { source = 'found' })
    expect_equal({ q = 'dune' }, description.queryParameters, 'the source\'s query')
    press_until_prompt(':Datasourced search<CR>', true)
    expect_equal('dune', vim.fn.getcmdline(), 'starting with the search shown')
    local counts = H.count_requests(ds.view(sbuf).conn)
    press('<C-u>')
    for _, key in ipairs({ 'n', 'i', 'g', 'h', 't' }) do
      press(key)
    end
    press('<CR>')
    expect_lines(sbuf, { '2 Gaudy Night' }, 'the server\'s answer to q=night')
    counts.stop()
    -- A keystroke sends its update once describeSource answers, unless a newer one came
    -- meanwhile (a loaded machine answers after the next key): how many depends on timing,
    -- at most one per keystroke, and the last query always goes.
    expect(counts.updateSource >= 1 and counts.updateSource <= 6, 'an update per keystroke at most (the daemon merges them)',
      counts.updateSource)
    press_until_prompt(':Datasourced search<CR>', true)
    press('<C-u>s<Esc>')
    expect_lines(sbuf, { '2 Gaudy Night' }, '<Esc>: the search shown before')
    vim.cmd('bwipeout ' .. sbuf)
  end)

  test('a list spec\'s search is checked, and a list without one says how to add it', function()
    local bad = vim.deepcopy(search_spec)
    bad.search = { parameter = 'q', debounce = 100 }
    expect_equal(nil, ds.open(bad, { variables = { baseURL = H.base_url } }), 'no list')
    expect_note(LEVELS.ERROR, 'search.debounce is not a member')
    local pbuf = ds.open({ sources = { paginated('fbooks', '/v1/books') }, title = 'plain', format = book_line })
    H.wait_until(function()
      return ds.view(pbuf).loaded
    end)
    vim.cmd('Datasourced search dune')
    expect_note(LEVELS.ERROR, 'no search parameter', '"search": {"parameter": "q"}')
    vim.cmd('bwipeout ' .. pbuf)
  end)
end
