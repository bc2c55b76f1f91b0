-- The rough edges a new user hit (issue 32, item 4), each as it should be now. Run by
-- tests/main.lua. (The refresh that loaded two pages and the protocol jargon in messages
-- are tested in test_list.lua, where those lists are.)

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_status, expect_note, lines, LEVELS = H.expect_status, H.expect_note, H.lines, H.LEVELS
  local readme = table.concat(vim.fn.readfile(ctx.root .. '/README.md'), '\n')

  local function broken(title)
    return { name = 'brokenAgain', kind = 'remote', apiPath = '/v1/broken', title = title,
      remoteConfiguration = { baseURL = H.base_url } }
  end

  test('reopening a list whose load failed loads it again and shows the error, not "loaded 0"', function()
    local keep = ds.open({ name = 'keepsTheDaemon', kind = 'simple', objects = { 'x' } })
    local buf = ds.open(broken('Broken once'))
    H.wait_until(function()
      return vim.startswith(ds.status(buf), 'error: ')
    end)
    expect_status(buf, 'error: HTTP status 500: the database is on fire')
    local conn = ds.view(buf).conn
    local counts = H.count_requests(conn)
    local again = ds.open(broken('Broken twice'))
    H.wait_until(function()
      return vim.startswith(ds.status(again), 'error: ')
    end)
    counts.stop()
    expect_status(again, 'error: HTTP status 500: the database is on fire')
    expect_equal(1, counts.fetchData, 'fetchData requests of the reopened list')
    vim.cmd('bwipeout! ' .. buf .. ' ' .. again .. ' ' .. keep)
  end)

  test('reopening a list whose load was cancelled loads it again', function()
    local keep = ds.open({ name = 'keepsTheDaemon2', kind = 'simple', objects = { 'x' } })
    local spec = { name = 'slowAgain', kind = 'remote', apiPath = '/v1/slow', keyPath = 'books',
      remoteConfiguration = { baseURL = H.base_url } }
    local buf = ds.open(spec)
    expect_status(buf, 'loading')
    ds.cancel(buf)
    expect_status(buf, 'cancelled')
    spec.title = 'slow, again'
    local again = ds.open(spec)
    expect_status(again, 'loading')
    ds.cancel(again)
    expect_status(again, 'cancelled')
    vim.cmd('bwipeout! ' .. buf .. ' ' .. again .. ' ' .. keep)
  end)

  test('with no daemon to start, the list itself says how to set it', function()
    local buf = ds.open({ name = 'nowhere2', kind = 'simple' }, { cmd = { 'datasourced-not-on-the-path' } })
    expect_status(buf, 'error: the daemon did not start')
    local text = lines(buf)[1]
    expect(text:find('cannot start "datasourced-not-on-the-path"', 1, true) and text:find('setup{cmd', 1, true),
      'the list\'s line names the command and setup{cmd}', text)
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('a long error leaves the list\'s name whole in its statusline', function()
    local buf = ds.open(broken('Long error'))
    H.wait_until(function()
      return vim.startswith(ds.status(buf), 'error: ')
    end)
    vim.b[buf].datasourced_status = 'error: ' .. string.rep('a very long explanation ', 10)
    local shown = vim.api.nvim_eval_statusline(ds.STATUSLINE, { winid = vim.fn.bufwinid(buf), maxwidth = 50 }).str
    expect(vim.startswith(shown, 'datasourced://Long error  '), 'the name starts the statusline', shown)
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('a failure\'s message fits on the command line at 100 columns (no Press-ENTER)', function()
    local columns = vim.o.columns
    vim.o.columns = 100
    local buf = ds.open({ name = 'brokenWithAName', kind = 'remote', apiPath = '/v1/broken',
      remoteConfiguration = { baseURL = H.base_url } })
    H.wait_until(function()
      return #H.notes_with(LEVELS.ERROR, 'brokenWithAName') > 0
    end)
    local room = vim.v.echospace
    vim.o.columns = columns
    local note = (H.notes_with(LEVELS.ERROR, 'brokenWithAName')[1] or {}).message or ''
    expect(vim.fn.strdisplaywidth(note) <= room, 'the message fits in ' .. room .. ' columns', note)
    expect(vim.startswith(note, 'datasourced: brokenWithAName: HTTP status 500: the database is on fire'),
      'it says what happened first', note)
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('<Plug> mappings run each action on the current list', function()
    for _, action in ipairs({ 'select', 'refresh', 'retry', 'cancel', 'reload', 'close', 'help' }) do
      expect(vim.fn.maparg('<Plug>(datasourced-' .. action .. ')', 'n') ~= '', '<Plug>(datasourced-' .. action .. ')')
    end
    local buf = ds.open({ name = 'plugged', kind = 'simple', objects = { 'a' } })
    local counts = H.count_requests(ds.view(buf).conn)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Plug>(datasourced-refresh)', true, false, true), 'x', false)
    H.request(ds.view(buf).conn, 'ping')
    counts.stop()
    expect_equal(1, counts.fetchData, 'fetchData requests')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('User DatasourcedLoaded and DatasourcedFailed fire for statusline plugins', function()
    local seen = {}
    local group = vim.api.nvim_create_augroup('datasourced_test_user_events', { clear = true })
    for _, event in ipairs({ 'DatasourcedLoaded', 'DatasourcedFailed' }) do
      vim.api.nvim_create_autocmd('User', { group = group, pattern = event, callback = function(args)
        table.insert(seen, { event = event, buf = vim.api.nvim_get_current_buf(), data = args.data })
      end })
    end
    local loaded = ds.open({ name = 'announced', kind = 'remote', apiPath = '/v1/empty', keyPath = 'books',
      remoteConfiguration = { baseURL = H.base_url } })
    local failed = ds.open(broken('Announced failure'))
    H.wait_until(function()
      return #seen >= 2
    end)
    vim.api.nvim_del_augroup_by_id(group)
    local by_event = {}
    for _, s in ipairs(seen) do
      by_event[s.event] = s
    end
    expect_equal(2, #seen, 'events')
    expect(by_event.DatasourcedLoaded and by_event.DatasourcedFailed, 'both events', seen)
    if vim.fn.has('nvim-0.8') == 1 then
      expect_equal(loaded, by_event.DatasourcedLoaded.data.buf, 'DatasourcedLoaded\'s data.buf')
      expect_equal('brokenAgain', by_event.DatasourcedFailed.data.source, 'DatasourcedFailed\'s data.source')
      expect_equal('http', by_event.DatasourcedFailed.data.error.kind, 'DatasourcedFailed\'s data.error')
    end
    vim.cmd('bwipeout! ' .. loaded .. ' ' .. failed)
  end)

  test(':Datasourced sources lists the open lists and their sources', function()
    local buf = ds.open({ title = 'Letters by case', sources = {
      { name = 'letters2', kind = 'simple', objects = { { c = 'a' } } },
      { name = 'byCase', kind = 'sectioned', source = 'letters2', sectioningKey = 'c' },
    } })
    expect_status(buf, 'loaded 1')
    local shown = ds.sources()
    expect(vim.tbl_contains(shown, string.format('%d  Letters by case: byCase (from letters2)  [loaded 1]', buf)),
      'the list\'s line', shown)
    vim.cmd('Datasourced sources') -- the command runs it
    vim.cmd('bwipeout! ' .. buf)
  end)

  test(':Datasourced log opens the daemon\'s log, where it said why it stopped', function()
    local buf = ds.open({ name = 'logged', kind = 'simple' }, { cmd = { ctx.daemon, '--no-such-option' } })
    local conn = ds.view(buf).conn
    H.wait_until(function()
      return conn.exited
    end)
    expect_equal(64, conn.exit_code, 'the daemon\'s status')
    expect_note(LEVELS.ERROR, 'status 64', ':Datasourced log')
    vim.api.nvim_set_current_buf(buf)
    vim.cmd('Datasourced log')
    local log = vim.api.nvim_get_current_buf()
    expect_equal(conn.log_file, vim.api.nvim_buf_get_name(log), 'the buffer opened')
    expect(table.concat(lines(log), '\n'):find('no-such-option', 1, true), 'the log says what it refused', lines(log))
    vim.cmd('bwipeout! ' .. log .. ' ' .. buf)
  end)

  test('the README shows the page size the fixtures answer, and a lazy.nvim spec', function()
    expect(not readme:find('pageSize = 20', 1, true), 'no pageSize = 20 (the fixtures answer 404)')
    expect(readme:find('cmd = "Datasourced"', 1, true) or readme:find("cmd = 'Datasourced'", 1, true),
      'a lazy.nvim spec loading on :Datasourced')
    expect(readme:find("apiPath = '/v1/books', keyPath = 'books', pageSize = 4", 1, true),
      'the books example asks for pages of 4')
  end)
end
