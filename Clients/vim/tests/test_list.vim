vim9script
# Lists against the real daemon: loading, paging, change sets, refresh, errors, cancel,
# close. In order: later tests use the lists of earlier ones.
import './harness.vim' as H

const LOADING = H.LOADING
const Row = H.Row

# The books by genre (specs/books.json: sections in order of first appearance) after
# one, two and three pages.
const PAGE1 = ['## science fiction', Row(1, 'Dune', 1950), Row(4, 'Solaris', 1959),
  '## mystery', Row(2, 'Gaudy Night', 1953), '## poetry', Row(3, 'Ariel', 1956), LOADING]
const PAGE2 = ['## science fiction', Row(1, 'Dune', 1950), Row(4, 'Solaris', 1959), Row(7, 'Kindred', 1968),
  '## mystery', Row(2, 'Gaudy Night', 1953), Row(5, 'The Big Sleep', 1962), Row(8, 'Rebecca', 1971),
  '## poetry', Row(3, 'Ariel', 1956), Row(6, 'Howl', 1965), LOADING]
const PAGE3 = ['## science fiction', Row(1, 'Dune', 1950), Row(4, 'Solaris', 1959), Row(7, 'Kindred', 1968),
  Row(10, 'Ubik', 1977), '## mystery', Row(2, 'Gaudy Night', 1953), Row(5, 'The Big Sleep', 1962),
  Row(8, 'Rebecca', 1971), '## poetry', Row(3, 'Ariel', 1956), Row(6, 'Howl', 1965), Row(9, 'Leaves of Grass', 1974)]

var books = 0
var events: list<string> = []

export def Run(daemon: string)
  augroup datasourced_tests
    autocmd!
    autocmd User DatasourcedLoaded add(events, 'loaded ' .. datasourced#LastEvent().source)
    autocmd User DatasourcedFailed add(events, 'failed ' .. datasourced#LastEvent().source)
  augroup END

  H.Test('the books by genre: page one in sections, then the trailing loading row', () => {
    books = datasourced#Open('specs/books.json')
    H.ExpectEqual(books, bufnr(), 'the list is the current buffer')
    H.ExpectLines(books, PAGE1, 'page one')
    H.ExpectStatus(books, 'loaded 4')
    H.ExpectEqual('datasourced://Books by genre', bufname(books), 'buffer name')
    H.ExpectEqual(false, &l:modifiable, 'modifiable')
    H.ExpectEqual('nofile', &l:buftype, 'buftype')
    H.ExpectEqual(false, &l:wrap, 'wrap')
    H.Expect(&l:statusline =~ 'datasourced_status', 'the window shows the status', &l:statusline)
    H.Expect(index(events, 'loaded byGenre') >= 0, 'User DatasourcedLoaded for byGenre', events)
    H.ExpectEqual('DatasourcedSection', get(get(prop_list(1, {bufnr: books}), 0, {}), 'type', ''), 'the header''s text property')
    H.ExpectEqual('DatasourcedLoading', get(get(prop_list(8, {bufnr: books}), 0, {}), 'type', ''), 'the loading row''s text property')
    H.ExpectEqual([], prop_list(2, {bufnr: books}), 'text properties of a row')
    H.ExpectEqual([true, true, true, true], H.RowTablesTyped(books), 'typed row tables of the sections the change sets made')
  })

  H.Test('moving to the last line loads page two; the cursor keeps its line', () => {
    H.Press('G')
    H.ExpectLines(books, PAGE2, 'pages one and two')
    H.ExpectStatus(books, 'loaded 8')
    H.ExpectEqual(len(PAGE1), line('.'), 'cursor line')
  })

  H.Test('paging on to the end: every book, no loading row; no more requests after', () => {
    H.Press('G')
    H.ExpectLines(books, PAGE3, 'all pages')
    H.ExpectStatus(books, 'loaded 10')
    H.Press('gg')
    H.Press('G')
    H.Settle(books)
    H.ExpectEqual(PAGE3, getbufline(books, 1, '$'), 'all pages, still')
    H.ExpectEqual(0, datasourced#View(books).resyncs, 'full re-reads (every change set applied)')
  })

  # A refresh with the cursor on the last row must load page one only: a cursor left there
  # would land on the new trailing loading row and ask for page two at once.
  H.Test('a refresh from the last line loads page one only, the cursor at the top', () => {
    H.ExpectEqual(len(PAGE3), line('.'), 'the cursor is on the last line')
    Datasourced refresh
    H.ExpectLines(books, PAGE1, 'page one after the refresh')
    H.ExpectStatus(books, 'loaded 4')
    H.Settle(books)
    H.ExpectEqual(PAGE1, getbufline(books, 1, '$'), 'still page one only')
    H.ExpectEqual(1, line('.'), 'cursor line')
    H.Press('G')
    H.ExpectLines(books, PAGE2, 'page two when the cursor reaches the end again')
  })

  H.Test('a change set edits only the lines it changes (one-source shorthand, columns)', () => {
    var buf = datasourced#Open('specs/books-flat.json')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', LOADING], 'page one')
    var edits = {first: 999999, count: 0}
    var id = listener_add((_, start, _, _, _) => {
      edits.first = min([edits.first, start])
      edits.count += 1
    }, buf)
    H.Press('G')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', '5  The Big Sleep', '6  Howl',
      '7  Kindred', '8  Rebecca', LOADING], 'pages one and two')
    listener_flush(buf)
    listener_remove(id)
    H.Expect(edits.count > 0 && edits.first >= 5, 'lines of page one were not edited', edits)
    H.ExpectEqual('datasourced://Books', bufname(buf), 'the title of the spec names the buffer')
    H.ExpectStatus(buf, 'loaded 8')
  })

  H.Test('"show" as a list shows its first source', () => {
    var buf = datasourced#Open('specs/show-list.json')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', LOADING], 'the catalog, not by genre')
    H.ExpectEqual('catalog', datasourced#View(buf).source, 'the source shown')
    Datasourced close
  })

  H.Test('a failing source: the error in the list, a short message, User DatasourcedFailed', () => {
    events = []
    var buf = datasourced#Open('specs/failing.json')
    var said = 'HTTP status 500: the database is on fire'
    H.ExpectLines(buf, ['  ✗ error: ' .. H.base_url .. '/v1/broken: ' .. said], 'the error, in the list')
    H.ExpectStatus(buf, 'error: ' .. said)
    H.ExpectMessage('error', ['datasourced: broken: ' .. said])
    H.ExpectEqual([], H.MessagesWith('', [H.base_url]), 'messages naming the URL (the list does)')
    H.ExpectEqual(['failed broken'], events, 'User events')
    H.ExpectEqual('DatasourcedError', get(get(prop_list(1, {bufnr: buf}), 0, {}), 'type', ''), 'the error''s highlight')
    Datasourced refresh
    H.Expect(H.WaitUntil(() => len(H.MessagesWith('error', [said])) == 2), 'a second message after a refresh', datasourced#Messages())
    H.ExpectLines(buf, ['  ✗ error: ' .. H.base_url .. '/v1/broken: ' .. said], 'the error after a refresh')
  })

  H.Test('a source that stores error rows shows the daemon''s error row', () => {
    var buf = datasourced#Open('specs/broken-rows.json')
    H.ExpectLines(buf, ['  ✗ error: ' .. H.base_url .. '/v1/broken: HTTP status 500: the database is on fire'], 'the error row')
    H.ExpectEqual('error', datasourced#View(buf).sections[0].rows[0].value['$placeholder'], 'the row is the daemon''s placeholder')
    H.ExpectStatus(buf, 'error: HTTP status 500: the database is on fire')
  })

  H.Test('cancel ends the load in flight; a second cancel has nothing to cancel', () => {
    var buf = datasourced#Open('specs/slow.json')
    H.ExpectLines(buf, [LOADING], 'the loading row')
    H.ExpectStatus(buf, 'loading')
    Datasourced cancel
    H.ExpectStatus(buf, 'cancelled')
    H.ExpectLines(buf, ['  load cancelled: :Datasourced refresh loads the list again'], 'the list after the cancel')
    H.ExpectMessage('warning', ['datasourced: slow: load cancelled'])
    H.ExpectEqual([], H.MessagesWith('', ['cancelFetch']), 'messages in protocol words')
    Datasourced cancel
    H.ExpectMessage('info', ['slow is not loading: nothing to cancel'])
    Datasourced refresh
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night'], 'loaded after all')
  })

  H.Test('a live list (refreshIntervalSeconds) shows the changes its refreshes bring', () => {
    var buf = datasourced#Open('specs/live.json')
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel'], 'the first answer')
    H.ExpectStatus(buf, 'loaded 3')
    # The second refresh brings an edited book and a new one (the first is a 304).
    H.Expect(H.WaitUntil(() => getbufline(buf, 1, '$') == ['1  Dune', '2  Gaudy Night (2nd ed.)', '3  Ariel', '4  Solaris'], 8000),
      'the refreshed rows', getbufline(buf, 1, '$'))
    H.ExpectStatus(buf, 'loaded 4')
    H.ExpectEqual(0, datasourced#View(buf).resyncs, 'full re-reads')
    Datasourced close
  })

  H.Test('opening a spec again after its source changed destroys the old source and creates it anew', () => {
    var spec = {title: 'Reopened', name: 'reopened', kind: 'paginated', remoteConfiguration: {baseURL: H.base_url},
      apiPath: '/v1/books', keyPath: 'books', pageSize: 4, identityKey: 'id', columns: ['id', 'title']}
    var buf = datasourced#OpenSpec(spec)
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', LOADING], 'the books')
    H.ExpectStatus(buf, 'loaded 4')
    # The same title and source name, other parameters: a remote source of one query.
    var changed = {title: 'Reopened', name: 'reopened', kind: 'remote', remoteConfiguration: {baseURL: H.base_url},
      apiPath: '/v1/search', queryParameters: {q: 'night'}, keyPath: 'books', identityKey: 'id', columns: ['id', 'title']}
    H.ExpectEqual(buf, datasourced#OpenSpec(changed), 'the list''s buffer, again')
    H.ExpectLines(buf, ['2  Gaudy Night'], 'the rows of the changed source')
    H.ExpectStatus(buf, 'loaded 1')
    var description = ch_evalexpr(datasourced#View(buf).conn.channel, {method: 'describeSource', params: {source: 'reopened'}})
    H.ExpectEqual('remote', get(get(description, 'result', {}), 'kind', ''), 'the daemon''s source')
    H.ExpectEqual([], H.MessagesWith('', ['other parameters']), 'messages about other parameters')
    # A sectioned source over a paginated one; then the same with its child changed: the
    # sectioned source, built on it, is made anew too.
    var child = {name: 'reopenedBooks', kind: 'paginated', remoteConfiguration: {baseURL: H.base_url},
      apiPath: '/v1/books', keyPath: 'books', pageSize: 4, identityKey: 'id'}
    var sectioned = {title: 'Reopened', columns: ['id', 'title'], sources: [child,
      {name: 'reopenedByGenre', kind: 'sectioned', source: 'reopenedBooks', sectioningKey: 'genre'}]}
    datasourced#OpenSpec(sectioned)
    H.ExpectLines(buf, ['## science fiction', '1  Dune', '4  Solaris', '## mystery', '2  Gaudy Night', '## poetry', '3  Ariel', LOADING],
      'the books by genre')
    sectioned.sources[0] = extend(filter(copy(changed), (k, _) => k != 'title' && k != 'columns'), {name: 'reopenedBooks'})
    datasourced#OpenSpec(sectioned)
    H.ExpectLines(buf, ['## mystery', '2  Gaudy Night'], 'the changed child''s rows, by genre')
    H.ExpectEqual([], H.MessagesWith('', ['other parameters']), 'messages about other parameters')
    Datasourced close
  })

  H.Test('closing a list destroys the sources only it used; the last list stops the daemon', () => {
    var flat = bufnr('^datasourced://Books$')
    var conn = datasourced#View(flat).conn
    Datasourced sources
    H.Expect(join(datasourced#Sources()) =~ 'booksFlat (paginated)', 'the daemon has booksFlat', datasourced#Sources())
    execute 'buffer ' .. flat
    Datasourced close
    H.ExpectEqual(-1, bufnr('^datasourced://Books$'), 'the list''s buffer')
    H.Expect(H.WaitUntil(() => join(datasourced#Sources()) !~ 'booksFlat'), 'booksFlat destroyed', datasourced#Sources())
    H.Expect(join(datasourced#Sources()) =~ 'byGenre (sectioned)', 'the other lists'' sources kept', datasourced#Sources())
    for buf in filter(mapnew(getbufinfo(), (_, b) => b.bufnr), (_, b) => !empty(datasourced#View(b)))
      if bufexists(buf)
        execute 'buffer ' .. buf
        Datasourced close
      endif
    endfor
    H.ExpectEqual(['no lists open (:Datasourced open FILE)'], datasourced#Sources(), 'lists')
    H.Expect(H.WaitUntil(() => job_status(conn.job) == 'dead'), 'the daemon ended', job_status(conn.job))
    H.ExpectEqual(0, job_info(conn.job).exitval, 'exit status (shutdown, then exit)')
  })

  H.Test('a list has a status line with laststatus=1 and one window: laststatus 2 while a list shows, 1 again after', () => {
    set laststatus=1
    only
    var buf = datasourced#Open('specs/books-flat.json')
    H.ExpectStatus(buf, 'loaded 4')
    H.ExpectEqual(2, &laststatus, 'laststatus while the list shows')
    enew
    H.ExpectEqual(1, &laststatus, 'laststatus once no window shows a list')
    execute 'buffer ' .. buf
    H.ExpectEqual(2, &laststatus, 'laststatus when the list shows again')
    set laststatus=0  # the user's own choice while a list shows is kept
    Datasourced close
    H.ExpectEqual(0, &laststatus, 'the user''s laststatus, kept')
    set laststatus=1
    buf = datasourced#Open('specs/books-flat.json')
    H.ExpectStatus(buf, 'loaded 4')
    split
    H.ExpectEqual(2, &laststatus, 'laststatus with two windows on the list')
    close
    H.ExpectEqual(2, &laststatus, 'laststatus while one window still shows it')
    Datasourced close
    H.ExpectEqual(1, &laststatus, 'laststatus after the list closed')
  })
enddef
