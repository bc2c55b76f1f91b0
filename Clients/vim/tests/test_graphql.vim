vim9script
# A GraphQL list: Clients/specs/graphql-books.json against the GraphQL API of
# Tests/Frameworks/graphqlapi.py (Strawberry, 1,000 books in a Relay connection), its rows
# the connection's edges[].node, and :Datasourced search setting the spec's search variable
# of the query (updateSource's graphql.variables); and a list asked for with POST and a JSON
# body: Clients/specs/search-books.json against the Elasticsearch-shaped search of
# Tests/Frameworks/postapis.py, paged by search_after. Run by tests/main.vim.
import './harness.vim' as H

def Describe(buf: number, source: string): dict<any>
  var answer = ch_evalexpr(datasourced#View(buf).conn.channel, {method: 'describeSource', params: {source: source}},
    {timeout: 5000})
  return type(answer) == v:t_dict ? get(answer, 'result', {}) : {}
enddef

# The answer to a request on the list's connection (its result, or {} when none came).
def Ask(buf: number, method: string, params: dict<any>): any
  var answer = ch_evalexpr(datasourced#View(buf).conn.channel, {method: method, params: params}, {timeout: 5000})
  return type(answer) == v:t_dict ? get(answer, 'result', {}) : {}
enddef

# The search's documents in the spec's sort, years ascending then ids: year = 1950 + id % 50.
def SortedDocs(): list<dict<number>>
  var docs = range(1000)->mapnew((_, n) => ({id: n, year: 1950 + n % 50}))
  return docs->sort((a, b) => a.year != b.year ? a.year - b.year : a.id - b.id)
enddef

def SearchRows(docs: list<dict<number>>): list<string>
  return docs->mapnew((_, doc) => H.Row(doc.id, 'Book ' .. doc.id, doc.year))
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

  H.Test('a spec asked for with a POST body shows its first page, and the end of the list loads the page after the last row''s sort values', () => {
    var search_url = H.SearchURL()
    H.Expect(search_url != '', 'the search''s base URL (searchURL of Clients/tests/graphql-server.py)')
    var variables = g:datasourced_variables
    g:datasourced_variables = {baseURL: search_url}
    var buf = datasourced#Open(repo .. '/Clients/specs/search-books.json')
    g:datasourced_variables = variables
    var docs = SortedDocs()
    H.ExpectEqual(buf, bufnr(), 'the list is the current buffer')
    H.ExpectLines(buf, SearchRows(docs[0 : 3]) + [H.LOADING], 'the first page: the hits'' _source, in the spec''s columns')
    var last = Ask(buf, 'objectAtIndexPath', {source: 'searchBooks', indexPath: [0, 3]})
    H.ExpectEqual([docs[3].year, docs[3].id], get(last, 'sort', []), 'the last row''s sort values, kept by the mapping')
    var next_page = get(Ask(buf, 'describeSource', {source: 'searchBooks'}), 'nextPage', {})
    H.ExpectEqual(get(last, 'sort', []), json_decode(get(next_page, 'cursor', '""')), 'the next page''s search_after')
    H.Press('G')
    # The server answers search_after with the documents that sort after it: rows 5 to 8.
    H.ExpectLines(buf, SearchRows(docs[0 : 7]) + [H.LOADING], 'the next page after the last row''s sort values')
    Datasourced close
  })
  H.StopGraphQL()
enddef
