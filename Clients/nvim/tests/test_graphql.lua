-- A GraphQL list: Clients/specs/graphql-books.json against the GraphQL API of
-- Tests/Frameworks/graphqlapi.py (Strawberry, 1,000 books in a Relay connection), its rows
-- the connection's edges[].node, and :Datasourced search setting the spec's search
-- variable of the query (updateSource's graphql.variables); and a list asked for with POST
-- and a JSON body: Clients/specs/search-books.json against the Elasticsearch-shaped search
-- of Tests/Frameworks/postapis.py, paged by search_after. Run by tests/main.lua.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, lines = H.expect_lines, H.lines
  local repo = vim.fn.fnamemodify(ctx.root, ':h:h')

  local url, stop, search_url = H.start_graphql(repo)
  test('the GraphQL server starts (Clients/tests/graphql-server.py)', function()
    expect(url ~= nil, 'its base URL (python3 -m pip install -r Tests/Frameworks/requirements.txt installs Strawberry)')
    expect(search_url ~= nil, 'the search\'s base URL (searchURL)')
  end)
  if not url then
    return
  end

  local function row(n, genre)
    return string.format('%-4d  %-18s  %s', n, 'Book ' .. n, genre)
  end

  test('a GraphQL spec shows the first page of the connection, and search sets its variable', function()
    ds.setup({ variables = { baseURL = url } })
    vim.cmd('Datasourced open ' .. vim.fn.fnameescape(repo .. '/Clients/specs/graphql-books.json'))
    local buf = vim.api.nvim_get_current_buf()
    ds.setup({ variables = {} })
    expect_equal('datasourced://GraphQL books', vim.api.nvim_buf_get_name(buf), 'the buffer name')
    H.wait_until(function()
      return #lines(buf) >= 4 and lines(buf)[1] ~= ''
    end)
    expect_equal({ row(0, 'fantasy'), row(1, 'history'), row(2, 'mystery'), row(3, 'poetry') },
      vim.list_slice(lines(buf), 1, 4), 'the first page: the nodes, in the spec\'s columns')
    vim.cmd('Datasourced search 999')
    expect_lines(buf, { row(999, 'science') }, 'the server\'s answer to search: "999"')
    local _, description = H.request(ds.view(buf).conn, 'describeSource', { source = 'graphqlBooks' })
    expect_equal({ search = '999' }, description.graphql.variables, 'the query\'s variables')
    ds.search('book 12', buf)
    H.wait_until(function()
      return lines(buf)[1] == row(12, 'mystery')
    end)
    expect_equal({ row(12, 'mystery'), row(120, 'fantasy'), row(121, 'history'), row(122, 'mystery') },
      vim.list_slice(lines(buf), 1, 4), 'searched as typed: the first page of "book 12"')
    vim.cmd('bwipeout ' .. buf)
  end)

  -- The search's documents in the spec's sort, years ascending then ids: year = 1950 + id % 50.
  local sorted = {}
  for n = 0, 999 do
    sorted[#sorted + 1] = { id = n, year = 1950 + n % 50 }
  end
  table.sort(sorted, function(a, b)
    return a.year < b.year or (a.year == b.year and a.id < b.id)
  end)
  local function search_rows(from, to)
    local rows = {}
    for i = from, to do
      local doc = sorted[i]
      rows[#rows + 1] = string.format('%-4d  %-18s  %d', doc.id, 'Book ' .. doc.id, doc.year)
    end
    return rows
  end

  test('a spec asked for with a POST body shows its first page, and the end of the list loads the page after the last row\'s sort values', function()
    if not search_url then
      return H.fail('no searchURL from Clients/tests/graphql-server.py')
    end
    local buf = ds.open_file(repo .. '/Clients/specs/search-books.json', { variables = { baseURL = search_url } })
    expect_equal(buf, vim.api.nvim_get_current_buf(), 'the list is the current buffer')
    expect_equal('datasourced://Search books', vim.api.nvim_buf_get_name(buf), 'the buffer name')
    expect_lines(buf, H.concat(search_rows(1, 4), { H.LOADING }), 'the first page: the hits\' _source, in the spec\'s columns')
    local conn = ds.view(buf).conn
    local _, last = H.request(conn, 'objectAtIndexPath', { source = 'searchBooks', indexPath = { 0, 3 } })
    expect_equal({ sorted[4].year, sorted[4].id }, last.sort, 'the last row\'s sort values, kept by the mapping')
    local _, description = H.request(conn, 'describeSource', { source = 'searchBooks' })
    expect_equal(last.sort, vim.fn.json_decode(description.nextPage.cursor), 'the next page\'s search_after')
    H.press('G')
    -- The server answers search_after with the documents that sort after it: rows 5 to 8.
    expect_lines(buf, H.concat(search_rows(1, 8), { H.LOADING }), 'the next page after the last row\'s sort values')
    vim.cmd('bwipeout! ' .. buf)
  end)
  stop()
end
