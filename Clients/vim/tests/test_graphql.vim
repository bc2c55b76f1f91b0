vim9script
# A GraphQL list: Clients/specs/graphql-books.json against the GraphQL API of
# Tests/Frameworks/graphqlapi.py (Strawberry, 1,000 books in a Relay connection), its rows
# the connection's edges[].node, and :Datasourced search setting the spec's search variable
# of the query (updateSource's graphql.variables). Run by tests/main.vim.
import './harness.vim' as H

def Describe(buf: number, source: string): dict<any>
  var answer = ch_evalexpr(datasourced#View(buf).conn.channel, {method: 'describeSource', params: {source: source}},
    {timeout: 5000})
  return type(answer) == v:t_dict ? get(answer, 'result', {}) : {}
enddef

def Row(n: number, genre: string): string
  return printf('%-4s  %-18s  %s', n, 'Book ' .. n, genre)
enddef

export def Run(daemon: string)
  var repo = fnamemodify(expand('<script>:p:h') .. '/../../..', ':p')
  var url = H.StartGraphQL(repo)
  H.Test('the GraphQL server starts (Clients/tests/graphql-server.py)', () => {
    H.Expect(url != '', 'its base URL (python3 -m pip install -r Tests/Frameworks/requirements.txt installs Strawberry)')
  })
  if url == ''
    return
  endif

  H.Test('a GraphQL spec shows the first page of the connection, and search sets its variable', () => {
    var variables = g:datasourced_variables
    g:datasourced_variables = {baseURL: url}
    var buf = datasourced#Open(repo .. '/Clients/specs/graphql-books.json')
    g:datasourced_variables = variables
    H.WaitUntil(() => getbufline(buf, 1) == [Row(0, 'fantasy')])
    H.ExpectEqual([Row(0, 'fantasy'), Row(1, 'history'), Row(2, 'mystery'), Row(3, 'poetry')],
      getbufline(buf, 1, 4), 'the first page: the nodes, in the spec''s columns')
    Datasourced search 999
    H.ExpectLines(buf, [Row(999, 'science')], 'the server''s answer to search: "999"')
    H.ExpectEqual({search: '999'}, get(get(Describe(buf, 'graphqlBooks'), 'graphql', {}), 'variables', {}), 'the query''s variables')
    feedkeys(":Datasourced search\<CR>\<C-u>book 12\<CR>", 'xt')
    H.WaitUntil(() => getbufline(buf, 1) == [Row(12, 'mystery')])
    H.ExpectEqual([Row(12, 'mystery'), Row(120, 'fantasy'), Row(121, 'history'), Row(122, 'mystery')],
      getbufline(buf, 1, 4), 'searched as typed: the first page of "book 12"')
    datasourced#Search('')
    H.WaitUntil(() => getbufline(buf, 1) == [Row(0, 'fantasy')])
    H.ExpectEqual({}, get(get(Describe(buf, 'graphqlBooks'), 'graphql', {}), 'variables', {'?': '?'}), 'the variable removed')
    Datasourced close
  })
  H.StopGraphQL()
enddef
