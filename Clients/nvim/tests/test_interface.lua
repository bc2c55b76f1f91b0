-- What users touch: the :Datasourced command, keys, highlights, row formats, :help,
-- :checkhealth and setup's options. Run by tests/main.lua after test_list.lua.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_status, expect_note = H.expect_lines, H.expect_status, H.expect_note
  local lines, press, LEVELS = H.lines, H.press, H.LEVELS
  local render = require('datasourced.render')

  --- The floating windows open now, and their lines.
  local function floats()
    local found = {}
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        table.insert(found, { win = win, lines = lines(vim.api.nvim_win_get_buf(win)) })
      end
    end
    return found
  end

  local function close_floats()
    for _, float in ipairs(floats()) do
      pcall(vim.api.nvim_win_close, float.win, true)
    end
  end

  --- A spec file holding `spec` as JSON.
  local function spec_file(spec)
    local path = vim.fn.tempname() .. '.json'
    vim.fn.writefile({ vim.fn.json_encode(spec) }, path)
    return path
  end

  test(':Datasourced runs its subcommands, and completes them and open\'s file', function()
    local subcommands = vim.fn.getcompletion('Datasourced ', 'cmdline')
    table.sort(subcommands)
    expect_equal({ 'action', 'cancel', 'cancel-action', 'close', 'filter', 'log', 'open', 'refresh', 'refresh-interval', 'reload', 'retry', 'search', 'sources' }, subcommands,
      'subcommands')
    local re = vim.fn.getcompletion('Datasourced re', 'cmdline')
    table.sort(re)
    expect_equal({ 'refresh', 'refresh-interval', 'reload', 'retry' }, re, 'subcommands starting with "re"')
    local path = spec_file({ name = 'viaCommand', kind = 'simple', objects = { 'x' } })
    local files = vim.fn.getcompletion('Datasourced open ' .. path:sub(1, -3), 'cmdline')
    expect(vim.tbl_contains(files, path), 'the spec file is completed', files)

    vim.cmd('Datasourced open ' .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    expect_lines(buf, { 'x' }, 'the list')
    local conn = ds.view(buf).conn
    local counts = H.count_requests(conn)
    vim.cmd('Datasourced refresh')
    H.request(conn, 'ping')
    counts.stop()
    expect_equal(1, counts.fetchData, 'fetchData requests')
    vim.cmd('Datasourced bogus')
    expect_note(LEVELS.ERROR, 'usage: :Datasourced {open FILE|refresh|cancel|retry|reload|close|refresh-interval N|off|filter [TEXT]|search [TEXT]|action [NAME]|cancel-action|sources|log}',
      'bogus')
    vim.cmd('Datasourced')
    expect_equal(2, #H.notes_with(LEVELS.ERROR, 'usage: :Datasourced'), 'usage messages')
    vim.cmd('Datasourced close')
    expect_equal(-1, vim.fn.bufnr('datasourced://viaCommand'), 'the list after :Datasourced close')
  end)

  test('commands outside a list say so', function()
    vim.cmd('enew')
    vim.cmd('Datasourced refresh')
    expect_note(LEVELS.ERROR, 'this buffer is not a datasourced list')
  end)

  test('a list has buffer-local keys: <CR> r R <C-c> q / g?', function()
    local buf = ds.open({ name = 'keys', kind = 'simple', identityKey = 'id',
      objects = { { id = 1, name = 'Ada' }, { id = 2, name = 'Bob' } } })
    expect_lines(buf, { 'id: 1  name: Ada', 'id: 2  name: Bob' }, 'the list')
    for lhs, action in pairs({ ['<CR>'] = 'select', r = 'refresh', R = 'retry', ['<C-C>'] = 'cancel', q = 'close', ['/'] = 'filter', ['g?'] = 'help' }) do
      local map = vim.fn.maparg(lhs, 'n', false, true)
      expect_equal(1, map.buffer, lhs .. ' is mapped in the list buffer')
      expect(type(map.desc) == 'string' and map.desc:find(ds.ACTIONS[action], 1, true), lhs .. ': ' .. action, map.desc)
    end
    vim.cmd('enew')
    expect_equal('', vim.fn.maparg('r', 'n'), 'r outside the list')
    vim.api.nvim_set_current_buf(buf)

    local conn = ds.view(buf).conn
    local counts = H.count_requests(conn)
    press('r')
    press('R')
    -- nvim_input takes <C-c> for an interrupt in a headless Neovim (a terminal's <C-c>
    -- reaches the mapping, as tests/capture.sh can show): typed through the typeahead.
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<C-c>', true, false, true), 'm', false)
    H.tick()
    H.request(conn, 'ping')
    counts.stop()
    expect_equal(1, counts.fetchData, 'r: fetchData requests')
    expect_note(LEVELS.INFO, 'keys: nothing failed, nothing to retry')
    expect_note(LEVELS.INFO, 'keys is not loading: nothing to cancel')
    expect_equal(1, counts.cancelFetch, '<C-c>: cancelFetch requests')

    press('g?')
    H.wait_until(function()
      return #floats() == 1
    end)
    local help = floats()[1]
    expect(help and vim.tbl_contains(help.lines, string.format('%-7s %s', 'r', 'refresh: ' .. ds.ACTIONS.refresh)),
      'g? lists the keys', help and help.lines)
    close_floats()

    press('gg<CR>')
    H.wait_until(function()
      return #floats() == 1
    end)
    local preview = floats()[1]
    expect_equal({ '{', '  "id": 1,', '  "name": "Ada"', '}' }, preview and preview.lines, '<CR>: the object, by default as JSON')
    close_floats()

    vim.cmd('enew')
    local other = vim.api.nvim_get_current_buf()
    vim.api.nvim_set_current_buf(buf)
    press('q')
    H.wait_until(function()
      return not vim.api.nvim_buf_is_valid(buf)
    end)
    expect_equal(false, vim.api.nvim_buf_is_valid(buf), 'q wiped the list out')
    expect_equal(other, vim.api.nvim_get_current_buf(), 'the window shows the buffer from before')
  end)

  test('setup sets the keys and what <CR> does with the object', function()
    local selected
    local custom_buf
    ds.setup({
      keymaps = { r = false, x = 'refresh', ['<Space>'] = function(buf)
        custom_buf = buf
      end },
      on_select = function(object, info)
        selected = { object = object, index_path = info.index_path, source = info.source }
      end,
    })
    local buf = ds.open({ name = 'picked', kind = 'simple', objects = { 'a', 'b' } })
    expect_lines(buf, { 'a', 'b' }, 'the list')
    expect_equal('', vim.fn.maparg('r', 'n'), 'r, turned off')
    expect_equal(1, vim.fn.maparg('x', 'n', false, true).buffer, 'x, mapped in the list')
    press('G<CR>')
    H.wait_until(function()
      return selected ~= nil
    end)
    expect_equal({ object = 'b', index_path = { 0, 1 }, source = 'picked' }, selected, 'what on_select got')
    press('<Space>')
    expect_equal(buf, custom_buf, 'a function as a key')
    ds.setup({ keymaps = {}, on_select = ds.preview }) -- the defaults again
    ds.close(buf)
  end)

  test('highlight groups link to standard ones, and the list\'s lines use them', function()
    local function link_of(group)
      return vim.fn.execute('highlight ' .. group):match('links to (%w+)')
    end
    local expected = { DatasourcedHeader = 'Title', DatasourcedLoading = 'Comment', DatasourcedNoResults = 'Comment',
      DatasourcedError = 'ErrorMsg' }
    for group, link in pairs(expected) do
      expect_equal(link, link_of(group), group)
    end
    vim.cmd('colorscheme default') -- clears every group, then says ColorScheme
    for group, link in pairs(expected) do
      expect_equal(link, link_of(group), group .. ' after :colorscheme')
    end

    local buf = ds.open({
      sources = { H.paginated('lit', '/v1/books'), { name = 'litByGenre', kind = 'sectioned', source = 'lit', sectioningKey = 'genre' } },
      show = 'litByGenre', format = H.book_line,
    })
    expect_status(buf, 'loaded 4')
    local groups = {}
    for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ds.view(buf).namespace, 0, -1, { details = true })) do
      groups[mark[2] + 1] = mark[4].hl_group
    end
    expect_equal({ [1] = 'DatasourcedHeader', [4] = 'DatasourcedHeader', [6] = 'DatasourcedHeader', [8] = 'DatasourcedLoading' },
      groups, 'highlights by line (of ' .. vim.inspect(lines(buf)) .. ')')
  end)

  test('rows read well by default: the identity key first, then the others in order', function()
    expect_equal('id: 7  genre: poetry  title: Howl  year: 1956',
      render.default_format({ year = 1956, title = 'Howl', genre = 'poetry', id = 7 }, 'id'), 'an object')
    expect_equal('a: [1, {"b": null, "c": true}]  z: x', render.default_format({ z = 'x', a = { 1, { c = true, b = vim.NIL } } }),
      'nested values as JSON with sorted keys')
    expect_equal('plain text', render.default_format('plain text'), 'a string')
    expect_equal('42', render.default_format(42), 'a number')

    local path = spec_file({ sources = { H.paginated('fromFile', '/v1/books') }, title = 'From a file' })
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    expect_equal('datasourced://From a file', vim.fn.bufname(buf), 'buffer name')
    expect_status(buf, 'loaded 4')
    expect_equal({ 'id: 1  genre: science fiction  title: Dune  year: 1950', H.LOADING },
      { lines(buf)[1], lines(buf)[5] }, 'the rows of a JSON spec')
  end)

  test('a spec\'s columns lay rows out in columns', function()
    local path = spec_file({
      sources = { H.paginated('columned', '/v1/books') },
      columns = { { key = 'id', width = 3 }, { key = 'title', width = 8 }, 'year' },
    })
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    expect_status(buf, 'loaded 4')
    expect_equal({ '1    Dune      1950', '2    Gaudy N…  1953' }, { lines(buf)[1], lines(buf)[2] }, 'the rows')
    expect_equal('7  ├    x', render.columns_format({ { 'n', 1 }, { key = 'mark', width = 1 }, 'missing', 'x' })(
      { n = 7, mark = '├', x = 'x' }), 'a width of one, a missing value')
  end)

  test(':DatasourcedOpen takes a Lua spec file too, with its formatter', function()
    local path = vim.fn.tempname() .. '.lua'
    vim.fn.writefile({
      'return { name = "luaShelf", kind = "simple", objects = { { title = "Dune" }, { title = "Ubik" } },',
      '  format = function(book) return "* " .. book.title end }',
    }, path)
    vim.cmd('DatasourcedOpen ' .. vim.fn.fnameescape(path))
    expect_lines(vim.api.nvim_get_current_buf(), { '* Dune', '* Ubik' }, 'the list')
  end)

  -- Bug: the plugin shipped no doc/tags, so :help datasourced failed (E149) until the
  -- user ran :helptags.
  test(':help datasourced works without :helptags', function()
    vim.cmd('help datasourced')
    expect(vim.api.nvim_buf_get_name(0):match('doc/datasourced%.txt$') ~= nil, 'the help file is shown', vim.api.nvim_buf_get_name(0))
    expect_equal('help', vim.bo.buftype, 'buftype')
    expect(vim.api.nvim_get_current_line():find('*datasourced*', 1, true) ~= nil, 'the cursor is on the tag',
      vim.api.nvim_get_current_line())
    vim.cmd('helpclose')
  end)

  test('doc/tags is what :helptags makes of the help file (regenerate it if not)', function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, 'p')
    vim.fn.writefile(vim.fn.readfile(ctx.root .. '/doc/datasourced.txt'), dir .. '/datasourced.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir))
    local made = vim.fn.readfile(dir .. '/tags')
    expect_equal(made, vim.fn.readfile(ctx.root .. '/doc/tags'), 'doc/tags (run: nvim --clean --headless -c "helptags doc" -c q)')
    local tags = {}
    for _, line in ipairs(made) do
      tags[line:match('^[^\t]+')] = true
    end
    for _, tag in ipairs({ 'datasourced', 'datasourced.setup()', 'datasourced.open()', ':Datasourced',
      ':DatasourcedOpen', ':DatasourcedRefresh', ':DatasourcedCancel', ':DatasourcedRetry', 'b:datasourced_status',
      'datasourced-keymaps', 'datasourced-highlights', 'datasourced-health', 'datasourced-record' }) do
      expect(tags[tag], 'a help tag ' .. tag)
    end
  end)

  -- Bug: :help datasourced-errors showed `createSource "bad": Invalid params: ... (code
  -- -32602)` and a failed load as `books: URL: HTTP status 500: ...`, which the plugin no
  -- longer printed. Each message below, printed for real, must be one of the help's
  -- examples of it: word for word but for the source's name and the fixture API's URL.
  test(':help datasourced-errors shows the messages as the plugin prints them', function()
    local examples, inside = {}, false
    for _, line in ipairs(vim.fn.readfile(ctx.root .. '/doc/datasourced.txt')) do
      if line:find('*datasourced-errors*', 1, true) then
        inside = true
      elseif inside and line:match('^====') then
        break
      elseif inside and line:match('^%s+datasourced: ') then
        table.insert(examples, vim.trim(line))
      end
    end
    --- The Lua pattern of `message` with each of `holes`' literals (keys) as its pattern.
    local function shape(message, holes)
      local pattern = '^' .. vim.pesc(message) .. '$'
      for literal, hole in pairs(holes) do
        pattern = pattern:gsub(vim.pesc(vim.pesc(literal)), (hole:gsub('%%', '%%%%')))
      end
      return pattern
    end
    local function expect_example(message, holes, what)
      local pattern = shape(message, holes)
      local found = vim.tbl_filter(function(example)
        return example:match(pattern) ~= nil
      end, examples)
      expect(#found > 0, string.format('an example of %s in :help datasourced-errors, a line of the shape %q '
        .. '(printed: %q)', what, pattern, message), examples)
    end

    local columns = vim.o.columns
    vim.o.columns = 200 -- room for the URL a failed load's message ends with
    local ok, problem = pcall(function()
      local refused = ds.open({ name = 'refusedForHelp', kind = 'remote', apiPath = '/x',
        remoteConfiguration = { baseURL = 'ftp://example.org' } })
      expect_note(LEVELS.ERROR, 'refusedForHelp: the daemon refused the source')
      expect_example(H.notes_with(LEVELS.ERROR, 'refusedForHelp')[1].message, { refusedForHelp = '[%w_]+' },
        'a source the daemon refused')
      vim.cmd('bwipeout! ' .. refused)

      H.notes = {}
      local failed = ds.open({ name = 'failedForHelp', kind = 'remote', apiPath = '/v1/broken',
        remoteConfiguration = { baseURL = H.base_url } })
      expect_note(LEVELS.ERROR, 'failedForHelp: HTTP status 500')
      local message = H.notes_with(LEVELS.ERROR, 'failedForHelp')[1].message
      expect(message:find(H.base_url .. '/v1/broken', 1, true), 'the message names the URL when there is room', message)
      expect_example(message, { failedForHelp = '[%w_]+', [H.base_url .. '/v1/broken'] = 'https?://[^ ()]+' },
        'a failed load')
      vim.cmd('bwipeout! ' .. failed)
    end)
    vim.o.columns = columns
    if not ok then
      error(problem, 0)
    end
  end)

  test(':checkhealth datasourced reports Neovim, the daemon, its protocol and a round trip', function()
    vim.cmd('silent checkhealth datasourced')
    local report = table.concat(lines(0), '\n')
    vim.cmd('tabclose')
    local v = vim.version()
    for _, expected in ipairs({ string.format('Neovim %d.%d.%d', v.major, v.minor, v.patch), 'found, executable: ' .. ctx.daemon,
      'datasourced 0.', ', protocol 1.', 'round trip (initialize, ping): ' }) do
      expect(report:find(expected, 1, true), 'the report says ' .. expected, report)
    end
    expect(not report:find('ERROR', 1, true), 'no error in the report', report)

    ds.setup({ cmd = { '/nonexistent/datasourced' } })
    vim.cmd('silent checkhealth datasourced')
    report = table.concat(lines(0), '\n')
    vim.cmd('tabclose')
    ds.setup({ cmd = { ctx.daemon } })
    expect(report:find('ERROR', 1, true) and report:find('"/nonexistent/datasourced" is not an executable', 1, true),
      'the report of a daemon that is not there', report)
  end)

  test('setup{record = FILE} hands the daemon --record FILE', function()
    local record = vim.fn.tempname() .. '.jsonl'
    local args_file = vim.fn.tempname()
    -- A stand-in for the daemon that writes down its arguments, then runs the daemon.
    local wrapper = { 'sh', '-c', 'printf "%s\\n" "$@" > "$0"; exec ' .. vim.fn.shellescape(ctx.daemon), args_file }
    ds.setup({ record = record })
    expect_equal(vim.list_extend(vim.deepcopy(wrapper), { '--record', record }), ds.command_line(wrapper), 'the command line')
    local buf = ds.open({ name = 'recorded', kind = 'simple', objects = { 1 } }, { cmd = wrapper })
    ds.setup({ record = false })
    expect_lines(buf, { '1' }, 'the list')
    expect_equal({ '--record', record }, vim.fn.readfile(args_file), 'the daemon\'s arguments')
    expect_equal(ds.command_line(), { ctx.daemon }, 'the command line with record = false')
    vim.cmd('bwipeout ' .. buf)

    -- The daemon itself: it records, or (before it takes --record) refuses, and says so.
    local takes_record = vim.fn.system({ ctx.daemon, 'serve', '--help' }):find('--record', 1, true) ~= nil
    ds.setup({ record = record })
    buf = ds.open({ name = 'recordedToo', kind = 'simple', objects = { 2 } })
    ds.setup({ record = false })
    if takes_record then
      expect_lines(buf, { '2' }, 'the list of a recording daemon')
      local conn = ds.view(buf).conn
      vim.cmd('bwipeout ' .. buf)
      H.wait_until(function()
        return conn.exited
      end)
      expect(vim.fn.getfsize(record) > 0, 'the daemon wrote ' .. record, vim.fn.getfsize(record))
    else
      expect_note(LEVELS.ERROR, 'the daemon refused its command line (status 64)', ctx.daemon .. ' --record ' .. record)
      expect_status(buf, 'daemon exited')
      vim.cmd('bwipeout ' .. buf)
    end
  end)
end
