-- A GraphQL list: Clients/specs/graphql-books.json against the GraphQL API of
-- Tests/Frameworks/graphqlapi.py (Strawberry, 1,000 books in a Relay connection), its rows
-- the connection's edges[].node, and :Datasourced search setting the spec's search
-- variable of the query (updateSource's graphql.variables). Run by tests/main.lua.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, lines = H.expect_lines, H.lines
  local repo = vim.fn.fnamemodify(ctx.root, ':h:h')

  local url, stop = H.start_graphql(repo)
  test('the GraphQL server starts (Clients/tests/graphql-server.py)', function()
    expect(url ~= nil, 'its base URL (python3 -m pip install -r Tests/Frameworks/requirements.txt installs Strawberry)')
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
  stop()
end
