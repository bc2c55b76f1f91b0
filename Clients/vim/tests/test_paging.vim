vim9script
# Protocol 1.5: lists of counted placeholders and jumps, over /v1/million of
# Clients/fixtures.json: 1,000,000 rows in pages of 100, of which the fixture API serves
# pages 1, 2 and 10000 (a request for any other page fails). In order: later tests use
# the list of the first.
import './harness.vim' as H

const TOTAL = 1000000

var buf = 0

def Million(): dict<any>
  return {name: 'million', kind: 'paginated', identityKey: 'id', keyPath: 'rows', pageSize: 100,
    placeholders: 'counted', jumpThreshold: 300, apiPath: '/v1/million',
    remoteConfiguration: {baseURL: H.base_url}, columns: ['title']}
enddef

def Line(n: number): string
  return get(getbufline(buf, n), 0, '')
enddef

# What line n shows: its text, else the text drawn over it (an unloaded row's, laid as
# virtual text while it is near a window), else ''.
def Shown(n: number): string
  var text = Line(n)
  if text != ''
    return text
  endif
  # Vim 9.0's prop_list() gives a virtual text's property (a negative id), not its text:
  # that is in the record the plugin keeps of what it laid (b:datasourced_decorated).
  for prop in prop_list(n, {bufnr: buf})
    if prop.id < 0 && prop.type == 'DatasourcedUnloaded'
      return get(getbufvar(buf, 'datasourced_decorated', {}), string(n), '<a text not recorded>')
    endif
  endfor
  return ''
enddef

# The lines of the list that hold a text (a million empty lines searched in C).
def TextLines(): list<number>
  var found: list<number> = []
  win_execute(bufwinid(buf), 'g:datasourced_test_found = []')
  win_execute(bufwinid(buf), 'var at = 1 | while at > 0 && at <= line("$") | at = nextnonblank(at) | if at > 0 | add(g:datasourced_test_found, at) | at += 1 | endif | endwhile')
  found = g:datasourced_test_found
  unlet g:datasourced_test_found
  return found
enddef

# The lines with a text drawn over them (virtual text).
def DrawnLines(): list<number>
  return sort(mapnew(keys(getbufvar(buf, 'datasourced_decorated', {})), (_, k) => str2nr(k)), 'n')
enddef

# Whether row n (1-based) is unloaded: an empty line, the row not read or a placeholder.
def Unloaded(n: number): bool
  var entry = datasourced#View(buf).sections[0]->get('loaded', {})->get(string(n - 1), {unread: true})
  return Line(n) == '' && (get(entry, 'unread', false) || get(entry.value, '$placeholder', '') == 'unloaded')
enddef

def WaitLine(n: number, text: string, what: string)
  H.WaitUntil(() => Line(n) == text, 30000)
  H.ExpectEqual(text, Line(n), what)
enddef

def WaitUnloaded(n: number, what: string)
  H.WaitUntil(() => Unloaded(n), 30000)
  H.Expect(Unloaded(n), what .. ': an unloaded row', Line(n))
enddef

# Requests of each method the list's daemon was sent since the last Reset().
def Requests(method: string): number
  return get(datasourced#View(buf).conn.requests, method, 0)
enddef

def Reset()
  var conn = datasourced#View(buf).conn
  conn.requests = {}
enddef

# The highlight group line n of the list is drawn with: the text drawn over it (an
# unloaded row's), else a syntax item's, else that of a match (matchadd) of the list's
# window whose pattern the line matches.
def Group(n: number): string
  for prop in prop_list(n, {bufnr: buf})
    if prop.id < 0
      return prop.type
    endif
  endfor
  var syntax = synIDattr(synID(n, 3, 1), 'name')
  if syntax != ''
    return syntax
  endif
  for m in getmatches(bufwinid(buf))
    if has_key(m, 'pattern') && Line(n) =~ m.pattern
      return m.group
    endif
  endfor
  return ''
enddef

# Whether a highlight group, links followed, has a look of its own (a colour or an
# attribute): a group linked to one that is only "cleared" draws nothing.
def HasLook(group: string): bool
  var id = synIDtrans(hlID(group))
  for mode in ['term', 'cterm', 'gui']
    for what in ['fg', 'bg', 'bold', 'italic', 'underline', 'reverse']
      if synIDattr(id, what, mode) != ''
        return true
      endif
    endfor
  endfor
  return false
enddef

export def Run(daemon: string)
  H.Test('a counted list has its full size at once; unloaded rows are empty lines drawn dim as "… row N" where they show; only the rows shown are read', () => {
    buf = datasourced#OpenSpec(Million(), 'million')
    Reset()  # the daemon is the earlier tests' too
    WaitLine(1, 'Row 1', 'the first row')
    # Every line is there as soon as the first row is: the lines past the first screens
    # are written right after it, before any key is read.
    H.ExpectEqual(TOTAL, line('$'), 'a line per row, once the first row shows')
    H.Expect(Unloaded(101), 'the first row not loaded is an empty line', Line(101))
    H.Expect(Unloaded(TOTAL), 'the last row is an empty line', Line(TOTAL))
    H.ExpectStatus(buf, 'loaded 100 of 1000000')
    H.ExpectEqual('', Group(1), 'the group of a loaded row')
    # Texts are laid on what the window shows and a window's height around it, no more.
    var height = winheight(0)
    var texts = TextLines()
    H.Expect(!empty(texts) && texts[-1] <= 3 * height, 'lines with a text within three window heights of the top', texts[-5 :])
    var drawn = DrawnLines()
    H.Expect(len(drawn) <= 3 * height, 'texts drawn over lines: a window''s worth or so', len(drawn))
    H.Expect(empty(drawn) || drawn[-1] <= 3 * height, 'texts drawn near the window', drawn[-5 :])
    H.ExpectEqual(0, len(filter(getbufline(buf, 1, 3 * height), (_, t) => t =~ 'row \d')), 'lines holding an unloaded row''s text')
    H.ExpectEqual(hlID(hlexists('Comment') && execute('highlight Comment') !~ 'cleared' ? 'Comment' : 'NonText'),
      synIDtrans(hlID('DatasourcedUnloaded')), 'DatasourcedUnloaded links to (Comment once it has colours)')
    H.Settle(buf)
    H.ExpectEqual(0, Requests('allObjects'), 'allObjects requests (a million rows)')
    # Rows are read as they show: row 90, loaded but off screen, once the cursor is there.
    H.Expect(winheight(0) < 40, 'a window short enough that row 90 is off screen', winheight(0))
    H.Expect(Unloaded(90), 'row 90 before it shows', Line(90))
    H.Expect(Unloaded(500001), 'a row never shown is not read', Line(500001))
    H.Expect(len(datasourced#View(buf).sections[0].loaded) <= 3 * height, 'rows held (read)', len(datasourced#View(buf).sections[0].loaded))
    Reset()
    H.Press('90G')
    WaitLine(90, 'Row 90', 'row 90 once it shows')
    H.Settle(buf)
    H.ExpectEqual(0, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests (a loaded row)')
    H.ExpectEqual(1, Requests('objectsInSection'), 'objectsInSection requests')
  })

  H.Test('unloaded rows are dim without syntax on, and stay dim once syntax is turned on', () => {
    H.ExpectEqual(0, exists('g:syntax_on'), 'syntax turned on (the tests run without)')
    H.Expect(line('.') + winheight(0) >= 101, 'row 101 near the cursor', [line('.'), winheight(0)])
    H.ExpectEqual('  … row 101', Shown(101), 'row 101, as drawn')
    H.Expect(HasLook('DatasourcedUnloaded'), 'DatasourcedUnloaded has a look without syntax on',
      execute('highlight DatasourcedUnloaded'))
    H.ExpectEqual('DatasourcedUnloaded', Group(101), 'the group of an unloaded row')
    syntax on
    H.ExpectEqual('DatasourcedUnloaded', Group(101), 'the group of an unloaded row after syntax on')
    H.ExpectEqual('', Group(1), 'the group of a loaded row after syntax on')
    H.Expect(HasLook('DatasourcedUnloaded'), 'DatasourcedUnloaded has a look after syntax on')
    syntax off
    filetype off
    H.ExpectEqual('DatasourcedUnloaded', Group(101), 'the group of an unloaded row after syntax off')
  })

  H.Test('keys held down over unloaded rows near the loaded ones ask once, where the cursor rests: the next page', () => {
    var view = datasourced#View(buf)
    view.display_debounce_ms = 400  # the keys below come within it
    H.Press('100G')
    H.Settle(buf)
    Reset()
    for _ in range(5)
      H.Press('j')  # rows 101 to 105: unloaded, near page one
    endfor
    WaitLine(101, 'Row 101', 'page two')
    WaitLine(105, 'Row 105', 'the row under the cursor')
    H.ExpectEqual(105, line('.'), 'the cursor line')
    H.ExpectEqual(1, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests')
    H.ExpectEqual('Row 1', Line(1), 'page one, kept (no jump)')
    H.ExpectStatus(buf, 'loaded 200 of 1000000')
    view.display_debounce_ms = 80
  })

  H.Test('G jumps to the last row, loading its page alone; gg brings the first page back', () => {
    H.Settle(buf)
    Reset()
    H.Press('G')
    WaitLine(TOTAL, 'Row 1000000', 'the last row')
    H.ExpectEqual('Row 999901', Line(999901), 'the first row of the last page')
    H.Expect(Unloaded(999900), 'the row before the last page', Line(999900))
    WaitUnloaded(1, 'the first row, unloaded again by the jump')
    H.ExpectEqual(TOTAL, line('$'), 'lines (index paths never shift)')
    H.ExpectEqual(TOTAL, line('.'), 'the cursor line')
    var description = datasourced#View(buf).conn.channel->ch_evalexpr({method: 'describeSource', params: {source: 'million'}})
    var last_url = get(get(description, 'result', {}), 'lastURL', '')
    H.Expect(last_url =~ '/v1/million?page=10000&page_size=100$', 'the last request was for page 10000', last_url)
    H.ExpectEqual(1, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests')
    H.ExpectStatus(buf, 'loaded 100 of 1000000')
    H.Press('gg')
    WaitLine(1, 'Row 1', 'the first row')
    WaitUnloaded(TOTAL, 'the last row, unloaded again')
    H.ExpectEqual(2, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests')
  })

  H.Test('a jump (G) reads what it shows and loads its page at once, without waiting for the cursor to rest; moves of a screen or less still wait', () => {
    var view = datasourced#View(buf)
    view.display_debounce_ms = 60000  # the cursor's rest never comes within the test
    try
      H.Settle(buf)
      Reset()
      # A screen at a time (what a held <C-f> does; Ex mode draws no screen to page).
      for _ in range(3)
        H.Press(winheight(0) .. 'j')
      endfor
      H.Expect(line('.') > 2 * winheight(0), 'the cursor two screens down or more', [line('.'), winheight(0)])
      H.ExpectEqual(0, Requests('objectsInSection'), 'objectsInSection requests (moves of a screen wait for the rest)')
      H.ExpectEqual(0, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests (moves of a screen wait for the rest)')
      H.Press('G')
      # Sent by G itself, before any key or timer: a read of the rows it shows, else
      # (rows read before) willDisplay for the row under the cursor.
      H.Expect(Requests('objectsInSection') + Requests('willDisplayObjectAtIndexPath') > 0, 'a request sent by G itself', datasourced#View(buf).conn.requests)
      WaitLine(TOTAL, 'Row 1000000', 'the last row, loaded without the rest')
      H.ExpectEqual(1, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests')
    finally
      view.display_debounce_ms = 80
    endtry
    H.Press('gg')
    WaitLine(1, 'Row 1', 'the first row')
    WaitUnloaded(TOTAL, 'the last row, unloaded again')
  })

  H.Test('<CR> on an unloaded row loads its page at once', () => {
    var view = datasourced#View(buf)
    view.display_debounce_ms = 60000  # the cursor's rest never comes within the test
    view.display_far_at_once = false  # nor is the jump read at once
    H.Press('999950G')
    H.Settle(buf)
    Reset()
    H.ExpectEqual('  … row 999950', Shown(line('.')), 'the row under the cursor, as drawn')
    H.ExpectEqual('', getline('.'), 'its line')
    H.ExpectEqual('DatasourcedUnloaded', Group(line('.')), 'its group')
    # The unloaded rows around the cursor are empty lines with their texts drawn over
    # them, and texts are drawn near the cursor only.
    var drawn = DrawnLines()
    var cursor = line('.')
    for n in range(cursor - 5, cursor + 5)
      H.ExpectEqual(['', '  … row ' .. n], [Line(n), Shown(n)], 'line ' .. n .. ' and what it shows')
      H.Expect(index(drawn, n) >= 0, 'a text drawn over line ' .. n, drawn[: 5])
    endfor
    H.Expect(len(drawn) <= 4 * winheight(0), 'texts drawn over lines: a few windows'' worth', len(drawn))
    H.Expect(drawn[0] >= cursor - 3 * winheight(0) && drawn[-1] <= cursor + 3 * winheight(0), 'texts drawn near the cursor', [drawn[0], drawn[-1], cursor])
    feedkeys("\<CR>", 'xt')
    WaitLine(999950, 'Row 999950', 'the row, loaded')
    H.ExpectEqual(1, Requests('willDisplayObjectAtIndexPath'), 'willDisplay requests')
    view.display_debounce_ms = 80
    view.display_far_at_once = true
  })

  H.Test('Vim''s own search (/) finds loaded rows; unloaded rows hold no text to find', () => {
    H.ExpectEqual(999950, search('^Row 999950$', 'nw'), 'the line of a loaded row')
    H.ExpectEqual(0, search('row 5000', 'nw'), 'a line holding an unloaded row''s text')
  })

  H.Test('a counted list opened again, or read again, writes over its lines, deleting none', () => {
    var counted = {deleted: 0, added: 0}
    var listener = listener_add((_, _, _, _, changes) => {
      for change in changes
        if change.added < 0
          counted.deleted -= change.added
        else
          counted.added += change.added
        endif
      endfor
    }, buf)
    try
      var again = datasourced#OpenSpec(Million(), 'million')
      H.ExpectEqual(buf, again, 'the buffer of the list opened again')
      H.ExpectStatus(buf, 'loaded 100 of 1000000')
      H.Expect(H.WaitUntil(() => Shown(line('.')) =~ '^\(Row\|  … row\) 999950$', 30000), 'the row under the cursor, drawn', Shown(line('.')))
      H.ExpectEqual(TOTAL, line('$'), 'lines, opened again')
      datasourced#model#Resync(datasourced#View(buf), 'the test reads it again')
      H.Settle(buf)
      H.Expect(H.WaitUntil(() => !datasourced#View(buf).reloading && datasourced#View(buf).known, 30000), 'read again')
      H.ExpectEqual(TOTAL, line('$'), 'lines, read again')
      listener_flush(buf)
      H.Expect(counted.deleted <= 1000, 'lines deleted (a million deleted takes Vim most of an open)', counted)
      H.Expect(counted.added <= 1000, 'lines added', counted)
      H.Expect(len(DrawnLines()) <= 4 * winheight(0), 'texts drawn over lines', len(DrawnLines()))
    finally
      listener_remove(listener)
    endtry
  })

  H.Test('a counted list refuses a filter, which would read every row, saying why', () => {
    datasourced#SetFilter('Row 1', buf)
    H.ExpectMessage('warning', ['million', 'cannot be filtered', 'every row'])
    H.ExpectEqual({}, datasourced#View(buf).filter, 'the filter')
    H.ExpectEqual('million', datasourced#View(buf).source, 'the source shown')
  })

  H.Test('a second list opened after a jump, its cursor on an unloaded row, loads the page under it', () => {
    WaitUnloaded(1, 'the first row, unloaded by the jump')
    var spec = Million()
    spec.title = 'million, again'
    var again = datasourced#OpenSpec(spec, 'million, again')
    H.Expect(H.WaitUntil(() => get(getbufline(again, 1), 0, '') == 'Row 1', 30000), 'the first row of the second list', getbufline(again, 1))
    WaitLine(1, 'Row 1', 'the first row of the first list')
    H.ExpectEqual(TOTAL, len(getbufline(again, 1, '$')), 'lines')
    execute 'bwipeout! ' .. again
  })

  H.Test('a counted list shown again after a jump while it was hidden loads the page under its cursor', () => {
    execute 'buffer ' .. buf
    cursor(1, 1)
    WaitLine(1, 'Row 1', 'the first row')
    enew
    var conn = datasourced#View(buf).conn
    ch_evalexpr(conn.channel, {method: 'willDisplayObjectAtIndexPath', params: {source: 'million', indexPath: [0, TOTAL - 1]}})
    WaitUnloaded(1, 'the first row, unloaded by a jump made elsewhere')
    # The jump's load over, and the list's own look after it (a timer) done while hidden.
    var view = datasourced#View(buf)
    H.Expect(H.WaitUntil(() => view.loaded && view.display_timer == 0), 'the jump loaded, the list idle', view.status)
    execute 'buffer ' .. buf
    WaitLine(1, 'Row 1', 'the first row, loaded again once shown')
    execute 'bwipeout! ' .. buf
  })
enddef
