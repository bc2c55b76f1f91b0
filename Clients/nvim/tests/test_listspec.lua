-- The list spec every client reads (Clients/specs, Protocol/listspec.schema.json; issue
-- 32, item 3): the shared example specs open as they do in Vim, Emacs and the CLI, and
-- every spec these tests use is valid under the schema. Run by tests/main.lua.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_note, lines, LEVELS = H.expect_lines, H.expect_note, H.lines, H.LEVELS
  local repo = vim.fn.fnamemodify(ctx.root, ':h:h')
  local specs = repo .. '/Clients/specs'
  local schema = repo .. '/Protocol/listspec.schema.json'

  --- The schema's complaints about JSON files (python3's jsonschema, as in the Python
  --- client's tests): '' when every file is valid.
  local function schema_problems(paths)
    local script = table.concat({
      'import json, sys',
      'from jsonschema import Draft202012Validator',
      'v = Draft202012Validator(json.load(open(sys.argv[1])))',
      'for p in sys.argv[2:]:',
      '    for e in v.iter_errors(json.load(open(p))):',
      '        print(p, "/".join(map(str, e.absolute_path)) or "(top)", e.message[:200])',
    }, '\n')
    local output = vim.fn.system(vim.list_extend({ 'python3', '-c', script, schema }, paths))
    if vim.v.shell_error ~= 0 then
      return 'python3 with jsonschema failed (bash Clients/python/tests/run.sh installs it): ' .. output
    end
    return output
  end

  local written = {} -- the spec files these tests write, checked against the schema at the end
  local function spec_file(spec)
    local path = vim.fn.tempname() .. '.json'
    vim.fn.writefile({ vim.fn.json_encode(spec) }, path)
    table.insert(written, path)
    return path
  end

  local function books(extra)
    return vim.tbl_extend('force', {
      name = 'specBooks', kind = 'paginated', remoteConfiguration = { baseURL = '${baseURL}' },
      apiPath = '/v1/books', keyPath = 'books', pageSize = 4, identityKey = 'id',
    }, extra or {})
  end

  test('the shared books spec opens with setup\'s variables: its title, the sectioned view, its columns', function()
    ds.setup({ variables = { baseURL = H.base_url } })
    vim.cmd('Datasourced open ' .. vim.fn.fnameescape(specs .. '/books.json'))
    local buf = vim.api.nvim_get_current_buf()
    expect_equal('datasourced://Books by genre', vim.api.nvim_buf_get_name(buf), 'the buffer name')
    expect_equal('byGenre', ds.view(buf).source, 'the shown source (show = "byGenre", a string)')
    H.wait_until(function()
      return lines(buf)[2] == '1     Dune                1950'
    end)
    expect_equal('## science fiction', lines(buf)[1], 'the first section header')
    expect_equal('1     Dune                1950', lines(buf)[2], 'a row in the spec\'s columns and widths')
    vim.cmd('Datasourced close')
    ds.setup({ variables = {} })
  end)

  test('the shared failing spec (the one-source shorthand) opens with open()\'s variables and shows its error', function()
    local buf = ds.open_file(specs .. '/failing.json', { variables = { baseURL = H.base_url } })
    expect_equal('datasourced://broken', vim.api.nvim_buf_get_name(buf), 'the buffer name (its title)')
    H.wait_until(function()
      return vim.startswith(ds.status(buf), 'error: ')
    end)
    expect(vim.startswith(ds.status(buf), 'error: HTTP status 500'), 'the status says what failed', ds.status(buf))
    expect_note(LEVELS.ERROR, 'broken', 'HTTP status 500')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('show as a list shows its first source; columns as keys', function()
    local buf = ds.open_file(spec_file({
      title = 'Books, list show', show = { 'specBooks', 'specByGenre' }, columns = { 'id', 'title' },
      sources = { books(), { name = 'specByGenre', kind = 'sectioned', source = 'specBooks', sectioningKey = 'genre' } },
    }), { variables = { baseURL = H.base_url } })
    expect_equal('specBooks', ds.view(buf).source, 'the shown source')
    H.wait_until(function()
      return lines(buf)[1] == '1  Dune'
    end)
    expect_equal('1  Dune', lines(buf)[1], 'the first row in its columns')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('an unknown variable is an error naming it and the file; nothing is created', function()
    local path = spec_file(books({ apiPath = '/v1/${where}' }))
    expect_equal(nil, ds.open_file(path, { variables = { baseURL = H.base_url } }), 'open_file\'s answer')
    expect_note(LEVELS.ERROR, path .. ': apiPath uses ${where}, which has no value')
    expect_equal(-1, vim.fn.bufnr('datasourced://specBooks'), 'no list buffer')
  end)

  test('bad specs are refused naming the member: show as a number, a column of width 0, no sources', function()
    local cases = {
      { spec = { sources = { books() }, show = 3 }, says = 'show must be a source name or a non-empty list of them' },
      { spec = { sources = { books() }, columns = { { key = 'id', width = 0 } } },
        says = 'columns[0].width must be a whole number of at least 1' },
      { spec = { title = 'nothing to show' }, says = 'open() takes createSource params' },
    }
    for _, case in ipairs(cases) do
      local path = vim.fn.tempname() .. '.json'
      vim.fn.writefile({ vim.fn.json_encode(case.spec) }, path)
      expect_equal(nil, ds.open_file(path, { variables = { baseURL = H.base_url } }), 'open_file\'s answer')
      expect_note(LEVELS.ERROR, path .. ': ' .. case.says)
      expect(schema_problems({ path }) ~= '', 'the schema refuses it too: ' .. vim.fn.json_encode(case.spec))
    end
  end)

  test('a TOML spec is refused naming the file, pointing to JSON', function()
    local path = vim.fn.tempname() .. '.toml'
    vim.fn.writefile({ 'name = "x"', 'kind = "simple"' }, path)
    expect_equal(nil, ds.open_file(path), 'open_file\'s answer')
    expect_note(LEVELS.ERROR, path .. ': the Neovim plugin reads no TOML')
  end)

  test('every spec these tests open is valid under Protocol/listspec.schema.json', function()
    local paths = vim.fn.glob(specs .. '/*.json', false, true)
    expect(#paths >= 2, 'the shared specs are there', paths)
    expect_equal('', schema_problems(vim.list_extend(paths, written)), 'the schema\'s complaints')
  end)
end
