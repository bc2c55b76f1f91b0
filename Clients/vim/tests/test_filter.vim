vim9script
# `/` filters a list as you type (a filtered source over the list's, setFilter at
# each key typed, matched characters highlighted), and :Datasourced search changes a remote
# source's query in place (updateSource). <Esc> at the prompt is checked on a real screen
# (tests/capture.sh filter): in Ex mode, where these tests run, it ends Vim.
import './harness.vim' as H

const LOADING = H.LOADING

# The highlighted spans of a filter's matches, [line, column, length] (1-based columns).
def MatchSpans(buf: number): list<any>
  var spans = []
  for lnum in range(1, len(getbufline(buf, 1, '$')))
    for prop in prop_list(lnum, {bufnr: buf, types: ['DatasourcedMatch']})
      add(spans, [lnum, prop.col, prop.length])
    endfor
  endfor
  return spans
enddef

def ExpectSpans(buf: number, expected: list<any>, what: string)
  H.WaitUntil(() => MatchSpans(buf) == expected)
  H.ExpectEqual(expected, MatchSpans(buf), what)
enddef

def Describe(buf: number, source: string): dict<any>
  var answer = ch_evalexpr(datasourced#View(buf).conn.channel, {method: 'describeSource', params: {source: source}},
    {timeout: 5000})
  return type(answer) == v:t_dict ? get(answer, 'result', {}) : {}
enddef

export def Run(daemon: string)
  var buf = 0

  H.Test('/ filters the list as you type, ranked, matches highlighted; <CR> keeps the filter', () => {
    buf = datasourced#Open('specs/filter.json')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', LOADING], 'page one')
    # A window of two lines: the filter fills two rows (page one has them), so that the
    # pages after it load as the cursor goes there.
    belowright new
    wincmd p
    resize 2
    feedkeys("/ar\<CR>", 'xt')
    H.ExpectLines(buf, ['3  Ariel', '4  Solaris', LOADING], 'rows matching ar, best first')
    # "3  Ariel": A and r; "4  Solaris": the a and r of "laris".
    ExpectSpans(buf, [[1, 4, 1], [1, 5, 1], [2, 7, 1], [2, 8, 1]], 'highlighted characters')
    var view = datasourced#View(buf)
    var description = Describe(buf, view.source)
    H.ExpectEqual('filtered', get(description, 'kind', ''), 'the list shows a filtered source')
    H.ExpectEqual({query: 'ar', keyPaths: ['id', 'title']}, get(description, 'match', {}),
      'the match: the query over the columns')
    H.ExpectStatus(buf, 'loaded 2')
  })

  H.Test('paging goes on through the filter; :Datasourced filter TEXT filters anew', () => {
    H.Press('G')
    # Page two has no title matching "ar": the loading row stays under the cursor and
    # asks for page three, whose "Leaves of Grass" matches.
    H.ExpectLines(buf, ['3  Ariel', '4  Solaris', '9  Leaves of Grass'], 'every page, filtered')
    Datasourced filter night
    H.ExpectLines(buf, ['2  Gaudy Night'], 'filtered by night')
    ExpectSpans(buf, [[1, 10, 1], [1, 11, 1], [1, 12, 1], [1, 13, 1], [1, 14, 1]], 'highlighted characters')
  })

  H.Test('/ starts from the kept query; an emptied prompt shows every row again', () => {
    feedkeys("/\<C-u>\<CR>", 'xt')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', '5  The Big Sleep', '6  Howl',
      '7  Kindred', '8  Rebecca', '9  Leaves of Grass', '10  Ubik'], 'every row, in the source''s order')
    ExpectSpans(buf, [], 'no highlight without a filter')
    feedkeys("/ub\<CR>", 'xt')
    H.ExpectLines(buf, ['10  Ubik'], 'filtered by ub')
    feedkeys("/y\<CR>", 'xt')  # the prompt starts with "ub": "uby" matches nothing
    H.ExpectLines(buf, ['  (no results)'], 'filtered by uby')
    datasourced#SetFilter('')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', '5  The Big Sleep', '6  Howl',
      '7  Kindred', '8  Rebecca', '9  Leaves of Grass', '10  Ubik'], 'every row again')
    only
    Datasourced close
  })

  H.Test('a spec that shows a filtered source over a sectioned one has its section headers', () => {
    var hbuf = datasourced#OpenSpec({title: 'Mysteries', sources: [
      {name: 'hbooks', kind: 'paginated', remoteConfiguration: {baseURL: H.base_url}, apiPath: '/v1/books',
        keyPath: 'books', pageSize: 4, identityKey: 'id'},
      {name: 'hbyGenre', kind: 'sectioned', source: 'hbooks', sectioningKey: 'genre'},
      {name: 'hmysteries', kind: 'filtered', source: 'hbyGenre', filter: {keyPath: 'genre', op: 'eq', value: 'mystery'}}],
      columns: ['id', 'title']})
    # The other genres' sections are empty: no headers (the poetry section holds the loading row).
    H.ExpectLines(hbuf, ['## mystery', '2  Gaudy Night', LOADING], 'the mysteries, in sections')
    Datasourced close
  })

  H.Test('a section whose rows all fail the filter has no header; it comes back with its rows', () => {
    var sbuf = datasourced#Open('specs/books.json')
    H.ExpectStatus(sbuf, 'loaded 4')
    datasourced#SetFilter('night')
    # One match: the filter fills its window from every page.
    H.ExpectLines(sbuf, ['## mystery', H.Row(2, 'Gaudy Night', 1953)], 'only the mystery section has a header')
    datasourced#SetFilter('')
    H.ExpectLines(sbuf, ['## science fiction', H.Row(1, 'Dune', 1950), H.Row(4, 'Solaris', 1959), H.Row(7, 'Kindred', 1968),
      H.Row(10, 'Ubik', 1977), '## mystery', H.Row(2, 'Gaudy Night', 1953), H.Row(5, 'The Big Sleep', 1962),
      H.Row(8, 'Rebecca', 1971), '## poetry', H.Row(3, 'Ariel', 1956), H.Row(6, 'Howl', 1965), H.Row(9, 'Leaves of Grass', 1974)],
      'every section again')
    Datasourced close
  })

  H.Test('a filter fills the list''s window from later pages (fill: its height), the cursor staying at the top', () => {
    # /v1/many: 1000 pages of one book promised, pages 1 to 3 served.
    var mbuf = datasourced#OpenSpec({title: 'Volumes', name: 'volumes', kind: 'paginated', remoteConfiguration: {baseURL: H.base_url},
      apiPath: '/v1/many', keyPath: 'books', identityKey: 'id', columns: ['id', 'title']})
    H.ExpectLines(mbuf, ['1  Volume 1', LOADING], 'page one')
    belowright new
    wincmd p
    resize 3
    H.ExpectEqual(3, winheight(0), 'the list''s window height')
    datasourced#SetFilter('volume')
    # Pages two and three come without the cursor reaching the loading row.
    H.ExpectLines(mbuf, ['1  Volume 1', '2  Volume 2', '3  Volume 3', LOADING], 'a window of matches')
    H.ExpectEqual(1, line('.'), 'the cursor line')
    var view = datasourced#View(mbuf)
    H.ExpectEqual(3, get(Describe(mbuf, view.filter.name), 'fill', 0), 'the filtered source''s fill')
    H.Settle(mbuf)
    H.ExpectEqual(['1  Volume 1', '2  Volume 2', '3  Volume 3', LOADING], getbufline(mbuf, 1, '$'), 'no page after the window is full')
    only
    Datasourced close
  })

  H.Test(':Datasourced search TEXT updates the remote source''s query in place', () => {
    var sbuf = datasourced#Open('specs/search.json')
    H.ExpectLines(sbuf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris'], 'every book')
    Datasourced search dune
    H.ExpectLines(sbuf, ['1  Dune'], 'the server''s answer to q=dune')
    H.ExpectEqual({q: 'dune'}, get(Describe(sbuf, 'found'), 'queryParameters', {}), 'the source''s query')
    feedkeys(":Datasourced search\<CR>\<C-u>night\<CR>", 'xt')
    H.ExpectLines(sbuf, ['2  Gaudy Night'], 'searched as typed: the last query''s rows')
    H.ExpectStatus(sbuf, 'loaded 1')
    H.ExpectEqual({q: 'night'}, get(Describe(sbuf, 'found'), 'queryParameters', {}), 'the query')
    datasourced#Search('')
    H.ExpectLines(sbuf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris'], 'no search: every book')
    H.ExpectEqual({}, get(Describe(sbuf, 'found'), 'queryParameters', {'?': '?'}), 'the parameter removed')
    Datasourced close
  })

  H.Test('a spec''s search is checked; a list without one says how to add it', () => {
    var spec = json_decode(join(readfile('specs/search.json'), "\n"))
    spec.search = {parameter: 'q', debounce: 100}
    spec.remoteConfiguration.baseURL = H.base_url
    H.ExpectEqual(0, datasourced#OpenSpec(spec), 'no list')
    H.ExpectMessage('', ['search.debounce is not a member'])
    var fbuf = datasourced#Open('specs/filter.json')
    H.ExpectStatus(fbuf, 'loaded 4')
    Datasourced search dune
    H.ExpectMessage('', ['no search parameter', '"search": {"parameter": "q"}'])
    Datasourced close
  })
enddef
