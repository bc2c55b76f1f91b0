vim9script
# datasourced/buflines.vim: a list buffer's lines and the model they show. A view keeps
# the daemon's layout (view.sections: {title, title_pending, header, rows}, each row an
# entry {value, pending}), so that a line maps to an index path and a change to a range
# of lines; this is the only writer of the buffer, and of the status (b:datasourced_status).

import autoload 'datasourced/core.vim'
import autoload 'datasourced/render.vim'

# Lines ---------------------------------------------------------------------------------

export def SetStatus(view: dict<any>, state: string)
  if view.detached
    return
  endif
  view.state = state
  var marker = StaleMarker_(view)
  view.status = marker == '' ? state : state .. ' ' .. marker
  if bufexists(view.buf)
    setbufvar(view.buf, 'datasourced_status', view.status)
    setbufvar(view.buf, 'datasourced_stale', marker != '')
    if !empty(win_findbuf(view.buf))
      redrawstatus!
    endif
  endif
enddef

def StaleMarker_(view: dict<any>): string
  if empty(view.stale)
    return ''
  endif
  var times = filter(values(view.stale), (_, t) => type(t) == v:t_string)
  if empty(times)
    # Stale without a time: a former query's rows, up until updateSource's new query's
    # rows come (protocol 1.4), not rows of the cache.
    return '[updating]'
  endif
  return render.StaleMarker(sort(times)[0])
enddef

export def SetFreshness(view: dict<any>, source: string, stale: bool, cached_at: any)
  var before = get(view.stale, source, v:null)
  if stale
    view.stale[source] = type(cached_at) == v:t_string ? cached_at : true
  elseif has_key(view.stale, source)
    remove(view.stale, source)
  endif
  if string(before) != string(get(view.stale, source, v:null))
    SetStatus(view, view.state)
  endif
enddef

# Rows of counted lists (lazy.vim) ----------------------------------------------------------

# A row not read yet is this one shared entry (entries are replaced, never changed in
# place). A counted list's section holds no list of its rows: `count` rows, of which
# `loaded` (item as a string -> entry) holds those read; every other row is UNREAD. A
# million rows are a number, not a million list items (48 MB in Vim).
# `loaded` is declared dict<dict<any>>, never a plain {}: in Vim 9.0 a call of a :def
# function takes time in proportion to what its arguments hold (their type is worked out
# member by member) except below a container whose type was declared, and every function
# given the view or a section (RowItem, RowAt...) would walk every entry read: 20 µs a
# call with 200 rows read, 40 ms of the change set a G brings.
const UNREAD: dict<any> = {value: {'$placeholder': 'unloaded'}, pending: false, unread: true}

export def Unread(): dict<any>
  return UNREAD
enddef

# A section of `count` rows not read yet.
export def LazySection(title: any, count: number): dict<any>
  var loaded: dict<dict<any>> = {}
  return {title: title, title_pending: false, header: false, count: count, loaded: loaded}
enddef

export def IsLazy(section: dict<any>): bool
  return has_key(section, 'loaded')
enddef

# How many rows a section has.
export def Count(section: dict<any>): number
  return has_key(section, 'loaded') ? section.count : len(section.rows)
enddef

# The entry of item i (0-based) of a section.
export def RowAt(section: dict<any>, i: number): dict<any>
  return has_key(section, 'loaded') ? get(section.loaded, string(i), UNREAD) : section.rows[i]
enddef

# The entries a section holds: every row, or of a counted list's, those read.
export def Entries(section: dict<any>): list<any>
  return has_key(section, 'loaded') ? values(section.loaded) : section.rows
enddef

export def SetRow(section: dict<any>, i: number, entry: dict<any>)
  if !has_key(section, 'loaded')
    section.rows[i] = entry
  elseif entry is UNREAD
    if has_key(section.loaded, string(i))
      remove(section.loaded, string(i))
    endif
  else
    section.loaded[string(i)] = entry
  endif
enddef

# Rows [i, i + n) leave a section: the rows after them move up.
export def RemoveRows(section: dict<any>, i: number, n: number)
  if !has_key(section, 'loaded')
    remove(section.rows, i, i + n - 1)
    return
  endif
  var kept: dict<dict<any>> = {}
  for [key, entry] in items(section.loaded)
    var k = str2nr(key)
    if k < i
      kept[key] = entry
    elseif k >= i + n
      kept[string(k - n)] = entry
    endif
  endfor
  section.loaded = kept
  section.count -= n
enddef

# Inserts `entries`, then `unread` rows not read yet, before item i.
export def InsertRows(section: dict<any>, i: number, entries: list<any>, unread: number = 0)
  var n = len(entries) + unread
  if !has_key(section, 'loaded')
    var all = unread > 0 ? entries + repeat([UNREAD], unread) : entries
    if i == len(section.rows)
      extend(section.rows, all)
    else
      extend(section.rows, all, i)
    endif
    return
  endif
  var moved: dict<dict<any>> = {}
  for [key, entry] in items(section.loaded)
    var k = str2nr(key)
    moved[k < i ? key : string(k + n)] = entry
  endfor
  var k = i
  for entry in entries
    if entry isnot UNREAD
      moved[string(k)] = entry
    endif
    k += 1
  endfor
  section.loaded = moved
  section.count += n
enddef

# Lines ------------------------------------------------------------------------------------

# A run of at least this many empty lines is written in one piece: :read of a file of line
# ends (a million in about 30 ms; no Vim script strings), and a replacement of this many
# lines or more by as many or more writes over them (deleting a million lines takes Vim
# about 200 ms).
const BULK_LINES = 2000
# A run of unloaded rows that ends a counted list is written in two steps: the lines a
# window can show and read around (NEAR_LINES at least) at once, the rest (view.owed:
# counted in view.line_count, not in the buffer yet) once the rows on screen are read and
# drawn (see Pay), so that the first screen of a million rows comes as fast as a short
# list's.
const NEAR_LINES = 300
# The latest the owed lines wait when the rows on screen are not read first.
const PAY_AFTER_MS = 300
# How long the lines a list kept when it was started anew (view.spare) wait for its rows.
const SPARE_MS = 2000

# The buffer's line count (a hidden buffer's too).
def BufferLines(buf: number): number
  var info = getbufinfo(buf)
  return empty(info) ? 0 : info[0].linecount
enddef

# Replaces list lines [first, last) (0-based; last -1: the end) with items [text, group],
# then `blank` empty lines (the rows of a counted list not read yet: a run of a million
# needs no million items). The only writer of the buffer. A list without lines shows
# its notice (an error the list has no row for, the daemon that did not start), or one
# empty line.
export def Edit(view: dict<any>, first: number, last_given: number, items: list<any>, blank: number = 0)
  WriteLines(view, first, last_given, mapnew(items, (_, item) => item[0]), items, blank)
enddef

# `items`: the [text, group] of each of `lines`, or [] for lines without text properties.
def WriteLines(view: dict<any>, first: number, last_given: number, lines: list<string>, items: list<any>, blank_given: number)
  if view.detached
    return
  endif
  var blank = blank_given
  var last = last_given < 0 ? view.line_count : last_given
  if view.owed > 0 && last > view.line_count - view.owed
    if last == view.line_count && first <= view.line_count - view.owed
      # The edit takes every owed line away: they are never written.
      view.line_count -= view.owed
      last -= view.owed
      view.owed = 0
    else
      Pay(view)  # it touches them: they are written first
    endif
  endif
  var was_empty = view.line_count == 0
  var ended = view.line_count
  view.line_count = view.line_count - (last - first) + len(lines) + blank
  var buf = view.buf
  if !bufexists(buf)
    return
  endif
  # A long run of unloaded rows ending the list: the lines near the windows now, the rest
  # owed (written by Pay once the rows on screen are drawn).
  var owe = 0
  if view.lazy && view.spare == 0 && last == ended && blank > NEAR_LINES
    var at = first + len(lines)
    var need = NEAR_LINES
    for win in win_findbuf(buf)
      need = max([need, line('w0', win) + 3 * max([1, winheight(win)]) - at])
    endfor
    if blank > need
      owe = blank - need
      blank = need
    endif
  endif
  setbufvar(buf, '&modifiable', 1)
  try
    ForgetDecorations(buf, first, last, len(lines) + blank)
    if view.spare > 0 && first == ended && last == ended
      # Rows added at the end take the spare lines (empty already) first.
      var taken = min([view.spare, len(lines) + blank])
      view.spare -= taken
      WriteOver(view, first, lines, items, blank, taken)
    elseif view.spare > 0
      WritePart(view, first, last, lines, items, blank)
    elseif was_empty || view.line_count == 0 || first == 0 && last == ended
        && !(ended >= BULK_LINES && len(lines) + blank >= ended)
      # Everything replaced (but a big list by as many lines or more: written over).
      var buffer_lines = BufferLines(buf)
      if view.line_count == 0 && buffer_lines >= BULK_LINES && empty(view.notice)
        # A big list started anew (opened again, its daemon restarted): its lines are
        # kept, emptied, for the rows to come (deleting a million lines takes Vim most of
        # the time of an open); those left after SPARE_MS go.
        BlankTexts(view, 1, buffer_lines)
        view.spare = buffer_lines
        timer_start(SPARE_MS, (_) => Trim(view))
      else
        var notice = view.line_count == 0 ? mapnew(view.notice, (_, t) => [t, render.Groups().error]) : []
        var shown = view.line_count == 0 ? mapnew(notice, (_, item) => item[0]) : lines
        silent deletebufline(buf, 1, '$')
        var first_blank = empty(shown) && blank > 0 ? 1 : 0
        setbufline(buf, 1, empty(shown) ? [''] : shown)
        prop_clear(1, max([1, len(shown)]), {bufnr: buf})
        AddProps(buf, 1, view.line_count == 0 ? notice : items)
        if view.line_count > 0
          InsertBlank(view, len(lines) + first_blank, blank - first_blank)
        endif
      endif
    else
      WritePart(view, first, last, lines, items, blank)
    endif
  finally
    setbufvar(buf, '&modifiable', 0)
  endtry
  if owe > 0
    view.owed += owe
    SchedulePay(view, PAY_AFTER_MS)
  endif
  NoteCursors(view)
  if view.lazy
    Decorate(view)
  endif
enddef

# Writes lines [first, last) of a list that has lines (the buffer modifiable).
def WritePart(view: dict<any>, first: number, last: number, lines: list<string>, items: list<any>, blank: number)
  var buf = view.buf
  var old = last - first
  if old >= BULK_LINES && len(lines) + blank >= old
    # A big run replaced by as many lines or more (a counted list read again): written
    # over, where they or their new lines have a text, not deleted and written again.
    BlankTexts(view, first + 1, last)
    WriteOver(view, first, lines, items, blank, old)
  elseif old > 0 && old == len(lines) + blank
    # Lines rewritten in place (rows updated, read): windows' cursors stay where they are.
    setbufline(buf, first + 1, blank > 0 ? lines + repeat([''], blank) : lines)
    prop_clear(first + 1, first + old, {bufnr: buf})
    AddProps(buf, first + 1, items)
  else
    if old > 0
      silent deletebufline(buf, first + 1, last)
    endif
    if !empty(lines)
      appendbufline(buf, first, lines)
      prop_clear(first + 1, first + len(lines), {bufnr: buf})
      AddProps(buf, first + 1, items)
    endif
    InsertBlank(view, first + len(lines), blank)
  endif
enddef

# Writes `lines` then `blank` empty lines from line `at` (0-based), whose first `taken`
# lines are there already, empty: only texts are written over them; the rest is inserted.
def WriteOver(view: dict<any>, at: number, lines: list<string>, items: list<any>, blank: number, taken: number)
  var buf = view.buf
  var over = min([len(lines), taken])
  if over > 0
    setbufline(buf, at + 1, lines[: over - 1])
    prop_clear(at + 1, at + over, {bufnr: buf})
    AddProps(buf, at + 1, items[: over - 1])
  endif
  if len(lines) > taken
    appendbufline(buf, at + taken, lines[taken :])
    prop_clear(at + taken + 1, at + len(lines), {bufnr: buf})
    AddProps(buf, at + taken + 1, items[taken :])
  endif
  var blank_left = blank - max([0, taken - len(lines)])
  InsertBlank(view, at + max([taken, len(lines)]), blank_left)
enddef

# The lines of buffer lines [from, to] (1-based) that have a text, for BlankTexts.
var found_texts: list<number> = []

# Collects, in the current window, the lines [from, to] with a text (nextnonblank: a
# million empty lines in about 10 ms).
export def FindTexts(from: number, to: number)
  found_texts = []
  var at = from
  while at <= to
    at = nextnonblank(at)
    if at == 0 || at > to
      break
    endif
    add(found_texts, at)
    at += 1
  endwhile
enddef

# Empties the lines [from, to] (1-based) that hold a text, and their text properties
# (the buffer modifiable). Lines of spaces alone count as empty.
def BlankTexts(view: dict<any>, from: number, to: number)
  var buf = view.buf
  var wins = win_findbuf(buf)
  if empty(wins)
    # No window to search in: read in pieces.
    found_texts = []
    var at = from
    while at <= to
      var k = at
      for text in getbufline(buf, at, min([to, at + 9999]))
        if text =~ '\S'
          add(found_texts, k)
        endif
        k += 1
      endfor
      at += 10000
    endwhile
  else
    win_execute(wins[0], printf('call datasourced#buflines#FindTexts(%d, %d)', from, to))
  endif
  for lnum in found_texts
    setbufline(buf, lnum, '')
    prop_clear(lnum, lnum, {bufnr: buf})
  endfor
  found_texts = []
enddef

# The spare lines (see WriteLines) the list did not take go.
def Trim(view: dict<any>)
  if view.spare == 0 || view.detached || !bufexists(view.buf)
    return
  endif
  view.spare = 0
  var keep = max([1, view.line_count - view.owed])
  if BufferLines(view.buf) > keep
    setbufvar(view.buf, '&modifiable', 1)
    silent deletebufline(view.buf, keep + 1, '$')
    setbufvar(view.buf, '&modifiable', 0)
  endif
  NoteCursors(view)
enddef

# A file of line ends for InsertBlank, and how many it holds.
var blank_file = {path: '', lines: -1}

# Inserts `n` empty lines after buffer line `at` (0 before the first; the buffer
# modifiable). A run of BULK_LINES or more is :read from a file of line ends, in a window
# showing the buffer (its windows keep their cursors and views); else appended.
def InsertBlank(view: dict<any>, at: number, n: number)
  if n <= 0
    return
  endif
  var buf = view.buf
  var wins = win_findbuf(buf)
  if n < BULK_LINES || empty(wins)
    var piece = repeat([''], min([n, 10000]))
    var done = 0
    while done < n
      appendbufline(buf, at + done, n - done >= len(piece) ? piece : piece[: n - done - 1])
      done += len(piece)
    endwhile
    return
  endif
  if blank_file.lines != n
    if blank_file.path == ''
      blank_file.path = tempname()
    endif
    writefile(repeat(0z0a, n), blank_file.path)
    blank_file.lines = n
  endif
  var before = BufferLines(buf)
  var places = {}
  for win in wins
    places[string(win)] = [line('.', win), getcurpos(win)[2], line('w0', win)]
  endfor
  var cpoptions = &cpoptions
  # :read names no alternate file and no buffer.
  &cpoptions = substitute(cpoptions, '[aAfF]', '', 'g')
  try
    win_execute(wins[0], printf('silent noautocmd keepalt keepjumps :%dread ++ff=unix ++nobin %s', at, fnameescape(blank_file.path)))
  finally
    &cpoptions = cpoptions
  endtry
  # An empty buffer's one line is replaced by what is read: it is put back.
  var got = BufferLines(buf) - before
  if got < n
    appendbufline(buf, at, repeat([''], n - got))
  endif
  for [win, place] in items(places)
    var [lnum, col, top] = place
    # :read moves a cursor to the lines it read; a row below them has moved down.
    lnum += lnum > at ? n : 0
    top += top > at ? n : 0
    win_execute(str2nr(win), printf('call winrestview({"lnum": %d, "col": %d, "topline": %d})', lnum, col - 1, top))
  endfor
enddef

# Writes the owed lines (see WriteLines) now.
export def Pay(view: dict<any>)
  var owed = view.owed
  if owed == 0
    return
  endif
  view.owed = 0
  if view.detached || !bufexists(view.buf)
    return
  endif
  setbufvar(view.buf, '&modifiable', 1)
  try
    InsertBlank(view, view.line_count - owed, owed)
  finally
    setbufvar(view.buf, '&modifiable', 0)
  endtry
  NoteCursors(view)
enddef

# Draws the screen, then writes the owed lines, in one go: no key is read between a
# counted list's first screen and its full length (keys typed meanwhile find every line).
export def PayNow(view: dict<any>)
  if view.owed == 0 || view.detached || !bufexists(view.buf)
    return
  endif
  if !empty(win_findbuf(view.buf))
    redraw
  endif
  Pay(view)
enddef

# PayNow in `delay_ms` (an earlier time asked later wins).
export def SchedulePay(view: dict<any>, delay_ms: number)
  if view.owed == 0 || view.detached
    return
  endif
  var due = reltimefloat(reltime()) * 1000 + delay_ms
  if view.pay_timer > 0 && view.pay_due <= due
    return
  endif
  if view.pay_timer > 0
    timer_stop(view.pay_timer)
  endif
  view.pay_due = due
  view.pay_timer = timer_start(delay_ms, (_) => {
    view.pay_timer = 0
    PayNow(view)
  })
enddef

# A user's move near the lines written so far while some are owed (keys typed between a
# counted list's first lines and its first rows): they are written first. A cursor on the
# last line written (G) goes on to the list's last line.
export def PayForMove(view: dict<any>, win: number)
  if view.owed == 0
    return
  endif
  var written = view.line_count - view.owed
  var lnum = line('.', win)
  if lnum + 2 * winheight(win) < written
    return  # far from the end: they come once the rows on screen are read
  endif
  Pay(view)
  if lnum == written
    win_execute(win, 'cursor(' .. view.line_count .. ', 1)')
    NoteCursors(view)
  endif
enddef

# Unloaded rows on screen ---------------------------------------------------------------------

# An unloaded row of a counted list is an empty line: its text ("  … row N", dim) is
# virtual text (a text property with `text`, Vim 9.0.0067) on the lines the windows show
# and a window's height around them, laid again as they scroll (Decorate). A million
# rows never get a million texts, and `/` finds the text of loaded rows only.
# b:datasourced_decorated: line -> the text laid on it.

def Decorations(buf: number): dict<any>
  var decorated = getbufvar(buf, 'datasourced_decorated', v:null)
  if type(decorated) != v:t_dict
    decorated = {}
    setbufvar(buf, 'datasourced_decorated', decorated)
  endif
  return decorated
enddef

# Lines [first, last) (0-based) are replaced by n lines: their texts go, those of the lines
# after them move along.
def ForgetDecorations(buf: number, first: number, last: number, n: number)
  var decorated = Decorations(buf)
  if empty(decorated)
    return
  endif
  var moved: dict<any> = {}
  var buffer_lines = BufferLines(buf)
  for [key, text] in items(decorated)
    var lnum = str2nr(key)
    if lnum <= first
      moved[key] = text
    elseif lnum > last
      moved[string(lnum + n - (last - first))] = text
    elseif lnum <= buffer_lines
      prop_remove({type: render.Groups().unloaded, bufnr: buf, all: true}, lnum)
    endif
  endfor
  filter(decorated, 'false')
  extend(decorated, moved)
enddef

# Lays the texts of the unloaded rows around each window of a counted list, and takes
# them off the lines that left it.
export def Decorate(view: dict<any>)
  var buf = view.buf
  if view.detached || !bufexists(buf)
    return
  endif
  var wanted: dict<string> = {}
  if view.lazy
    var written = view.line_count - view.owed
    for win in win_findbuf(buf)
      var height = max([1, winheight(win)])
      var cursor = line('.', win)
      for lnum in range(max([1, min([line('w0', win), cursor]) - height]), min([written, max([line('w$', win), cursor]) + height]))
        var path = IndexPathAt(view, lnum)
        if empty(path)
          continue
        endif
        var entry = RowAt(view.sections[path[0]], path[1])
        if entry is UNREAD || !entry.pending && core.PlaceholderKind(entry.value) == 'unloaded'
          var at = entry is UNREAD ? path[1] : get(entry.value, 'index', path[1])
          wanted[string(lnum)] = render.Texts().unloaded .. ((type(at) == v:t_number ? at : path[1]) + 1)
        endif
      endfor
    endfor
  endif
  var decorated = Decorations(buf)
  var group = render.Groups().unloaded
  var buffer_lines = BufferLines(buf)
  for [key, text] in items(decorated)
    if get(wanted, key, '') != text
      if str2nr(key) <= buffer_lines
        prop_remove({type: group, bufnr: buf, all: true}, str2nr(key))
      endif
      remove(decorated, key)
    endif
  endfor
  for [key, text] in items(wanted)
    if !has_key(decorated, key)
      prop_add(str2nr(key), 1, {bufnr: buf, type: group, text: text})
      decorated[key] = text
    endif
  endfor
enddef

def AddProps(buf: number, lnum: number, items: list<any>)
  var n = lnum
  for item in items
    if item[1] != '' && item[0] != ''
      prop_add(n, 1, {bufnr: buf, type: item[1], length: strlen(item[0])})
    endif
    n += 1
  endfor
enddef

export def SetNotice(view: dict<any>, lines: list<string>)
  view.notice = lines
  if view.line_count == 0
    Edit(view, 0, 0, [])
  endif
enddef

# Where our own edits left each window's cursor: the CursorMoved that follows is not a
# move of the user's.
export def NoteCursors(view: dict<any>)
  for win in win_findbuf(view.buf)
    view.cursor_lines[string(win)] = line('.', win)
  endfor
enddef

# Whether section s (0-based) gets a header line: in sectioned and multi lists, unless
# it is titled null and holds only placeholders (a paginated source's trailing row).
export def HeaderWanted(view: dict<any>, section: dict<any>): bool
  if !view.show_headers
    return false
  endif
  if view.kind == 'filtered'
    # A filter keeps its child's sections: one whose rows all fail it has no header (a
    # placeholder it holds, the trailing loading row, stands without one).
    for entry in Entries(section)
      if get(entry, 'pending', false) || !core.IsPlaceholder(entry.value)
        return true
      endif
    endfor
    return false
  endif
  var pending = get(section, 'title_pending', false)
  if !pending && !core.IsNull(section.title)
    return true
  endif
  for entry in Entries(section)
    if get(entry, 'pending', false) || !core.IsPlaceholder(entry.value)
      return true
    endif
  endfor
  return pending && Count(section) == 0
enddef

export def SectionLine(view: dict<any>, s: number): number
  var line = 0
  for i in range(s)
    var section = view.sections[i]
    line += (section.header ? 1 : 0) + Count(section)
  endfor
  return line
enddef

export def RowLine(view: dict<any>, s: number, i: number): number
  return SectionLine(view, s) + (view.sections[s].header ? 1 : 0) + i
enddef

export def SyncHeader(view: dict<any>, s: number)
  var section = view.sections[s]
  var wanted = HeaderWanted(view, section)
  if wanted == section.header
    return
  endif
  var line = SectionLine(view, s)
  if wanted
    Edit(view, line, line, [render.HeaderItem(section)])
  else
    Edit(view, line, line + 1, [])
  endif
  section.header = wanted
enddef

export def AllItems(view: dict<any>): list<any>
  var items = []
  for section in view.sections
    section.header = HeaderWanted(view, section)
    if section.header
      add(items, render.HeaderItem(section))
    endif
    for i in range(Count(section))
      add(items, render.RowItem(view, RowAt(section, i), i))
    endfor
  endfor
  return items
enddef

# The daemon's [section, item] of a 1-based line; [] for a header or past the end.
export def IndexPathAt(view: dict<any>, line: number): list<number>
  var remaining = line - 1
  var s = 0
  for section in view.sections
    remaining -= section.header ? 1 : 0
    if remaining < 0
      return []
    endif
    var count = Count(section)
    if remaining < count
      return [s, remaining]
    endif
    remaining -= count
    s += 1
  endfor
  return []
enddef

export def EntryAt(view: dict<any>, line: number): dict<any>
  var path = IndexPathAt(view, line)
  return empty(path) ? {} : RowAt(view.sections[path[0]], path[1])
enddef
