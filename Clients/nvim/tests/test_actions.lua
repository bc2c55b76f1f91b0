-- Actions on rows (protocol 1.9): :Datasourced action on the shared books spec
-- (Clients/specs/books.json) against the fixture API's action routes (Clients/fixtures.json):
-- an edit committed, an edit refused (400) and one in conflict (409) rolled back with the
-- server's words, a delete, an add chosen from the list of actions, values checked by
-- type, an edit the server cannot take yet (503) queued and shown dimmed until it
-- settles, and :Datasourced cancel-action undoing the queued and waiting edits of a row.
-- vim.ui.input and vim.ui.select answer from a script. Run by tests/main.lua.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_note, LEVELS = H.expect_lines, H.expect_note, H.LEVELS
  local repo = vim.fn.fnamemodify(ctx.root, ':h:h')
  local spec = repo .. '/Clients/specs/books.json'

  --- A row of the spec's columns: id (4), title (18), year (4).
  local function row(id, title, year)
    return string.format('%-4s  %-18s  %s', tostring(id), title, tostring(year))
  end
  local FIRST_PAGE = {
    '## science fiction', row(1, 'Dune', 1950), row(4, 'Solaris', 1959),
    '## mystery', row(2, 'Gaudy Night', 1953),
    '## poetry', row(3, 'Ariel', 1956),
    H.LOADING,
  }

  -- The prompts: each vim.ui.input takes the next scripted answer (nil cancels); each
  -- vim.ui.select chooses the scripted item. What they were asked is recorded.
  local answers, choices, asked = {}, {}, {}
  local real_input, real_select = vim.ui.input, vim.ui.select
  local function script(input_answers, select_choices)
    answers, choices, asked = input_answers or {}, select_choices or {}, {}
  end
  vim.ui.input = function(opts, on_confirm)
    table.insert(asked, { prompt = opts.prompt, default = opts.default })
    on_confirm(table.remove(answers, 1))
  end
  vim.ui.select = function(items, opts, on_choice)
    local shown = vim.tbl_map(opts.format_item or tostring, items)
    table.insert(asked, { select = items, shown = shown, prompt = opts.prompt })
    local choice = table.remove(choices, 1)
    on_choice(choice, choice and vim.fn.index(items, choice) + 1 or nil)
  end

  --- The daemon's didSettleMutation notifications on `conn`, as they come.
  local function watch_settles(conn)
    local settles = {}
    local original = conn.handlers.notification
    conn.handlers.notification = function(method, params)
      if method == 'dataSource/didSettleMutation' then
        table.insert(settles, params)
      end
      return original(method, params)
    end
    return settles
  end

  --- The lines of the buffer when performAction's answer arrives: the optimistic change
  --- came before it.
  local function watch_answers(conn, buf)
    local seen = {}
    local original = conn.request
    conn.request = function(self, method, params, callback)
      if method ~= 'performAction' then
        return original(self, method, params, callback)
      end
      return original(self, method, params, function(err, result)
        table.insert(seen, { params = params, err = err, result = result, lines = H.lines(buf) })
        if callback then
          callback(err, result)
        end
      end)
    end
    return seen
  end

  local function on_line(buf, text)
    local line = vim.fn.index(H.lines(buf), text) + 1
    expect(line > 0, 'a line ' .. text, H.lines(buf))
    vim.api.nvim_win_set_cursor(0, { line, 0 })
  end

  --- Loads every page (the cursor's row can then not ask for one as the rows move).
  local function load_all(buf)
    H.wait_until(function()
      local lines = H.lines(buf)
      if lines[#lines] ~= H.LOADING then
        return true
      end
      ds.view(buf):will_display(#lines)
      return false
    end)
  end

  --- Opens the books spec on a new daemon: the books as the server has them (edits of an
  --- earlier test were committed on the last one), and no mutation waiting.
  local function open()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if ds.view(b) then
        vim.cmd('bwipeout! ' .. b)
      end
    end
    ds.stop()
    local buf = ds.open_file(spec, { variables = { baseURL = H.base_url } })
    expect_lines(buf, FIRST_PAGE, 'the first page by genre')
    return buf, ds.view(buf).conn
  end

  --- Edits Ariel to "Ariel (revised)": the fixture API answers its PATCH 503 (Retry-After an
  --- hour), so the edit is queued; `what` names the settle in a failure.
  local function queue_ariels_edit(buf, settles, what)
    on_line(buf, row(3, 'Ariel', 1956))
    script({ 'Ariel (revised)' })
    vim.cmd('Datasourced action edit')
    H.wait_until(function()
      return #settles == 1
    end)
    expect_equal('queued', settles[1].status, what)
  end

  test('actions: answers are read by their declared type; a wrong one says what was expected', function()
    local function parse(text, kind, required)
      return { ds.parse_value(text, { name = 'v', type = kind, required = required == true }) }
    end
    expect_equal({ 'x' }, parse('x', 'string'), 'a string')
    expect_equal({ '' }, parse('', 'string', true), 'a required string may be empty')
    expect_equal({}, parse('', 'string'), 'an optional one left empty is left out')
    expect_equal({ 1987 }, parse(' 1987 ', 'integer'), 'an integer')
    expect_equal({ nil, 'v must be a whole number, got "19.5"' }, parse('19.5', 'integer'), 'not an integer')
    expect_equal({ nil, 'v is required (integer)' }, parse('', 'integer', true), 'a required integer left empty')
    expect_equal({}, parse('  ', 'integer'), 'an optional integer left empty')
    expect_equal({ -2.5 }, parse('-2.5', 'number'), 'a number')
    expect_equal({ nil, 'v must be a number, got "many"' }, parse('many', 'number'), 'not a number')
    expect_equal({ true }, parse('yes', 'boolean'), 'yes')
    expect_equal({ false }, parse('False', 'boolean'), 'False')
    expect_equal({ nil, 'v must be true or false, got "maybe"' }, parse('maybe', 'boolean'), 'not a boolean')
    expect_equal({ { 1, 2 } }, parse('[1, 2]', 'array'), 'an array')
    expect_equal({ { a = 1 } }, parse('{"a": 1}', 'object'), 'an object')
    expect_equal('{}', vim.fn.json_encode(parse('{}', 'object')[1]), 'an empty object stays one')
    expect_equal({ nil, 'v must be a JSON object, got "[1]"' }, parse('[1]', 'object'), 'an array for an object')
    expect_equal({ { name = 'title', type = 'string', required = true }, { name = 'genre', type = 'string', required = false },
      { name = 'year', type = 'integer', required = false } },
      ds.action_values({ values = { year = { type = 'integer' }, genre = { type = 'string' },
        title = { type = 'string', required = true } } }), 'the values in the order asked: required first, then by name')
  end)

  test('actions: an edit shows at once and is committed; refused edits roll back with the server\'s words', function()
    local buf, conn = open()
    expect_equal({ 'add', 'delete', 'edit' }, ds.complete('', 'Datasourced action '), 'the actions completed')
    expect_equal({ 'edit' }, ds.complete('e', 'Datasourced action e'), 'completing e')
    expect(vim.tbl_contains(ds.complete('ac', 'Datasourced ac'), 'action'), 'the subcommand completed')
    local settles, answered = watch_settles(conn), watch_answers(conn, buf)

    on_line(buf, row(1, 'Dune', 1950))
    script({ 'Dune Messiah' })
    vim.cmd('Datasourced action edit')
    H.wait_until(function()
      return #settles == 1
    end)
    expect_equal({ { prompt = 'books: edit title (string): ', default = 'Dune' } }, asked, 'the question, the title as default')
    expect_equal({ source = 'books', action = 'edit', identity = 1, values = { title = 'Dune Messiah' } },
      answered[1].params, 'performAction on the source that declares it, with the row\'s identity')
    expect_equal(row(1, 'Dune Messiah', 1950), answered[1].lines[2], 'the new title, shown before the answer')
    expect_equal({ source = 'books', mutation = answered[1].result.mutation, action = 'edit', status = 'committed' },
      settles[1], 'the settle')
    expect_lines(buf, { '## science fiction', row(1, 'Dune Messiah', 1950), row(4, 'Solaris', 1959),
      '## mystery', row(2, 'Gaudy Night', 1953), '## poetry', row(3, 'Ariel', 1956), H.LOADING }, 'committed')
    H.wait_until(function()
      return #ds.view(buf):pending_lines() == 0
    end)
    expect_equal({}, ds.view(buf):pending_lines(), 'no row marked pending')
    expect_equal({}, H.notes, 'nothing said')

    on_line(buf, row(2, 'Gaudy Night', 1953))
    script({ '' })
    vim.cmd('Datasourced action edit')
    H.wait_until(function()
      return #settles == 2
    end)
    expect_equal(row(2, '', 1953), answered[2].lines[5], 'the empty title, shown at once')
    expect_equal('rolledBack', settles[2].status, 'the settle')
    expect_lines(buf, { '## science fiction', row(1, 'Dune Messiah', 1950), row(4, 'Solaris', 1959),
      '## mystery', row(2, 'Gaudy Night', 1953), '## poetry', row(3, 'Ariel', 1956), H.LOADING }, 'the old title again')
    expect_equal({ { message = 'datasourced: books: edit rolled back: title: This field may not be blank.', level = LEVELS.WARN } },
      H.notes, 'the rollback said, with the server\'s words')

    H.notes = {}
    on_line(buf, row(4, 'Solaris', 1959))
    script({ 'Solaris II' })
    vim.cmd('Datasourced action edit')
    H.wait_until(function()
      return #settles == 3
    end)
    expect_equal('conflict', settles[3].error and settles[3].error.kind, 'a 409 is a conflict')
    expect_lines(buf, { '## science fiction', row(1, 'Dune Messiah', 1950), row(4, 'Solaris', 1959),
      '## mystery', row(2, 'Gaudy Night', 1953), '## poetry', row(3, 'Ariel', 1956), H.LOADING }, 'Solaris again')
    expect_note(LEVELS.WARN, 'books: edit rolled back: Someone else changed this book.')
    H.wait_until(function()
      return #ds.view(buf):pending_lines() == 0
    end)
    expect_equal({}, ds.view(buf):pending_lines(), 'no row marked pending')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('actions: a delete removes the row, an add chosen from the list inserts one; values are checked', function()
    local buf, conn = open()
    local settles = watch_settles(conn)
    load_all(buf)
    local sf = { '## science fiction', row(1, 'Dune', 1950), row(4, 'Solaris', 1959), row(7, 'Kindred', 1968),
      row(10, 'Ubik', 1977) }
    local mystery = { '## mystery', row(2, 'Gaudy Night', 1953), row(5, 'The Big Sleep', 1962), row(8, 'Rebecca', 1971) }
    expect_lines(buf, H.concat(sf, mystery, { '## poetry', row(3, 'Ariel', 1956), row(6, 'Howl', 1965),
      row(9, 'Leaves of Grass', 1974) }), 'every page')

    on_line(buf, row(3, 'Ariel', 1956))
    script({})
    vim.cmd('Datasourced action delete')
    local poetry = { '## poetry', row(6, 'Howl', 1965), row(9, 'Leaves of Grass', 1974) }
    expect_lines(buf, H.concat(sf, mystery, poetry), 'Ariel gone')
    H.wait_until(function()
      return #settles == 1
    end)
    expect_equal('committed', settles[1].status, 'the delete settled')
    expect_equal({}, asked, 'a delete asks nothing')

    -- A value of the wrong type: said, nothing sent.
    local counts = H.count_requests(conn)
    script({ 'Beloved', 'fiction', 'soon' }, { 'add' })
    vim.cmd('Datasourced action')
    H.request(conn, 'ping')
    counts.stop()
    expect_equal(nil, counts.performAction, 'performAction requests')
    expect_note(LEVELS.ERROR, 'books: add: year must be a whole number, got "soon"; nothing was sent')

    -- Without a name: the actions offered, add chosen (through the <Plug> mapping).
    H.notes = {}
    script({ 'Beloved', 'fiction', '1987' }, { 'add' })
    expect(vim.fn.maparg('<Plug>(datasourced-action)', 'n') ~= '', '<Plug>(datasourced-action)')
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Plug>(datasourced-action)', true, false, true), 'x', false)
    H.wait_until(function()
      return #settles == 2
    end)
    expect_equal({ 'add', 'delete', 'edit' }, asked[1].select, 'the actions offered')
    expect_equal({ 'add (POST /v1/books)', 'delete (DELETE /v1/books/{id})', 'edit (PATCH /v1/books/{id})' },
      asked[1].shown, 'as shown')
    expect_equal({ 'books: add title (string): ', 'books: add genre (string, optional): ', 'books: add year (integer, optional): ' },
      vim.tbl_map(function(a)
        return a.prompt
      end, { asked[2], asked[3], asked[4] }), 'the values asked for, required first')
    expect_equal('committed', settles[2].status, 'the add settled')
    expect_lines(buf, H.concat({ '## fiction', row(99, 'Beloved', 1987) }, sf, mystery, poetry),
      'Beloved, with the server\'s id')
    expect_equal({}, H.notes, 'nothing said')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('actions: an edit the server cannot take yet is queued, its row dimmed and marked until it settles', function()
    local buf, conn = open()
    local settles = watch_settles(conn)
    expect(vim.fn.execute('highlight DatasourcedPending'):find('links to Comment', 1, true),
      'DatasourcedPending links to Comment', vim.fn.execute('highlight DatasourcedPending'))

    queue_ariels_edit(buf, settles, 'the settle')
    local shown = { '## science fiction', row(1, 'Dune', 1950), row(4, 'Solaris', 1959),
      '## mystery', row(2, 'Gaudy Night', 1953), '## poetry', row(3, 'Ariel (revised)', 1956), H.LOADING }
    expect_lines(buf, shown, 'the change stays shown')
    H.wait_until(function()
      return #ds.view(buf):pending_lines() == 1
    end)
    expect_equal({ { line = 7, mark = '…', group = 'DatasourcedPending' } }, ds.view(buf):pending_lines(),
      'the row dimmed and marked')
    expect_equal({ { message = 'datasourced: books: edit queued, sent again later: HTTP status 503: Down for maintenance. (retry after 3600 s)', level = LEVELS.INFO } },
      H.notes, 'said once')
    local _, read = H.request(conn, 'objectsInSection', { source = 'books', section = 0, withPending = true })
    expect_equal({ {}, {}, { settles[1].mutation }, {}, {} }, read.pending, 'the daemon\'s pending rows agree (the loading row last)')

    -- A page that comes meanwhile keeps the mark on its row, wherever it moves. What is
    -- checked holds whether or not page three has come too by then.
    vim.cmd('normal! G')
    ds.view(buf):will_display(#H.lines(buf))
    local function ariel_line()
      return vim.fn.index(H.lines(buf), row(3, 'Ariel (revised)', 1956)) + 1
    end
    H.wait_until(function()
      return vim.tbl_contains(H.lines(buf), row(6, 'Howl', 1965))
        and (ds.view(buf):pending_lines()[1] or {}).line == ariel_line()
    end)
    local lines = H.lines(buf)
    expect_equal({ '## science fiction', row(1, 'Dune', 1950), row(4, 'Solaris', 1959), row(7, 'Kindred', 1968) },
      vim.list_slice(lines, 1, 4), 'page two\'s science fiction')
    expect(vim.tbl_contains(lines, row(5, 'The Big Sleep', 1962)) and vim.tbl_contains(lines, row(8, 'Rebecca', 1971)),
      'page two\'s mysteries', vim.inspect(lines))
    expect(ariel_line() >= 10, 'Ariel moved down by the rows above it', vim.inspect(lines))
    expect_equal({ { line = ariel_line(), mark = '…', group = 'DatasourcedPending' } }, ds.view(buf):pending_lines(),
      'the mark moved with its row')

    -- Cancelled: rolled back, the mark goes.
    H.notes = {}
    local err = H.request(conn, 'cancelMutation', { source = 'books', mutation = settles[1].mutation })
    expect_equal(nil, err, 'cancelMutation\'s error')
    -- The cursor rests at the end, so the next page may load meanwhile: only Ariel's line is asserted.
    H.wait_until(function()
      return vim.tbl_contains(H.lines(buf), row(3, 'Ariel', 1956))
    end)
    expect(vim.tbl_contains(H.lines(buf), row(3, 'Ariel', 1956)), 'Ariel again', vim.inspect(H.lines(buf)))
    expect(not vim.tbl_contains(H.lines(buf), row(3, 'Ariel (revised)', 1956)), 'the change undone', vim.inspect(H.lines(buf)))
    H.wait_until(function()
      return #ds.view(buf):pending_lines() == 0
    end)
    expect_equal({}, ds.view(buf):pending_lines(), 'no row marked')
    expect_note(LEVELS.INFO, 'books: edit cancelled, its change undone')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('actions: cancel-action undoes the row\'s actions the server has not taken, newest first; none there, nothing is sent', function()
    local buf, conn = open()
    local settles, answered = watch_settles(conn), watch_answers(conn, buf)
    expect(vim.tbl_contains(ds.complete('can', 'Datasourced can'), 'cancel-action'), 'the subcommand completed')
    expect(vim.fn.maparg('<Plug>(datasourced-cancel-action)', 'n') ~= '', '<Plug>(datasourced-cancel-action)')
    expect(not vim.tbl_contains(vim.tbl_values(ds.config().keymaps), 'cancel-action'), 'no key by default')
    local cancels = {}
    local request = conn.request
    conn.request = function(self, method, params, ...)
      if method == 'cancelMutation' then
        table.insert(cancels, params)
      end
      return request(self, method, params, ...)
    end
    local plug = vim.api.nvim_replace_termcodes('<Plug>(datasourced-cancel-action)', true, false, true)

    -- Nothing pending on the row, or no row: said, nothing sent (the ping's answer comes
    -- after any request the mapping sent).
    on_line(buf, row(3, 'Ariel', 1956))
    vim.api.nvim_feedkeys(plug, 'x', false)
    on_line(buf, '## poetry')
    vim.cmd('Datasourced cancel-action')
    H.request(conn, 'ping')
    expect_equal({}, cancels, 'cancelMutation requests')
    expect_equal({ { message = 'datasourced: byGenre: no pending action on this row: nothing to cancel', level = LEVELS.WARN },
      { message = 'datasourced: byGenre: put the cursor on a row with a pending action to cancel it', level = LEVELS.WARN } },
      H.notes, 'what was said')

    -- Ariel's edit is queued (503, sent again in an hour); a second edit of Ariel and one
    -- of Dune wait behind it.
    queue_ariels_edit(buf, settles, 'the first edit\'s settle')
    on_line(buf, row(3, 'Ariel (revised)', 1956))
    script({ 'Ariel (third)' })
    vim.cmd('Datasourced action edit')
    on_line(buf, row(1, 'Dune', 1950))
    script({ 'Dune Messiah' })
    vim.cmd('Datasourced action edit')
    H.wait_until(function()
      return #answered == 3
    end)
    local m1, m2, m3 = settles[1].mutation, answered[2].result.mutation, answered[3].result.mutation
    local _, described = H.request(conn, 'describeSource', { source = 'books' })
    expect_equal({ { m1, 'queued' }, { m2, 'waiting' }, { m3, 'waiting' } },
      vim.tbl_map(function(p)
        return { p.mutation, p.status }
      end, described.pendingMutations or {}), 'the daemon\'s pending mutations')
    expect_lines(buf, { '## science fiction', row(1, 'Dune Messiah', 1950), row(4, 'Solaris', 1959),
      '## mystery', row(2, 'Gaudy Night', 1953), '## poetry', row(3, 'Ariel (third)', 1956), H.LOADING }, 'both edits shown')
    H.wait_until(function()
      return #ds.view(buf):pending_lines() == 2
    end)
    expect_equal({ 2, 7 }, vim.tbl_map(function(p)
      return p.line
    end, ds.view(buf):pending_lines()), 'Dune and Ariel marked')

    -- Cancelled on Ariel's row: its two edits, the newest first (else the daemon would
    -- send the second as the first went). Dune's then goes to the server, which takes it.
    H.notes = {}
    on_line(buf, row(3, 'Ariel (third)', 1956))
    vim.cmd('Datasourced cancel-action')
    H.wait_until(function()
      return #settles == 4
    end)
    expect_equal({ { source = 'books', mutation = m2 }, { source = 'books', mutation = m1 } }, cancels,
      'cancelMutation requests')
    local outcomes = {}
    for i = 2, 4 do
      outcomes[settles[i].mutation] = { settles[i].status, settles[i].error and settles[i].error.kind }
    end
    expect_equal({ [m1] = { 'rolledBack', 'cancelled' }, [m2] = { 'rolledBack', 'cancelled' }, [m3] = { 'committed' } },
      outcomes, 'how each settled')
    expect_lines(buf, { '## science fiction', row(1, 'Dune Messiah', 1950), row(4, 'Solaris', 1959),
      '## mystery', row(2, 'Gaudy Night', 1953), '## poetry', row(3, 'Ariel', 1956), H.LOADING },
      'Ariel as it was before its edits, Dune\'s edit kept')
    H.wait_until(function()
      return #ds.view(buf):pending_lines() == 0
    end)
    expect_equal({}, ds.view(buf):pending_lines(), 'no row marked')
    expect_equal({ { message = 'datasourced: books: edit cancelled, its change undone', level = LEVELS.INFO },
      { message = 'datasourced: books: edit cancelled, its change undone', level = LEVELS.INFO } }, H.notes,
      'each cancel said, and nothing else')
    local _, after = H.request(conn, 'describeSource', { source = 'books' })
    expect_equal(nil, after.pendingMutations, 'nothing pending in the daemon')
    vim.cmd('bwipeout! ' .. buf)
  end)

  vim.ui.input, vim.ui.select = real_input, real_select
end
