vim9script
# datasourced/lazy.vim: lists of counted placeholders (protocol 1.5), read lazily: a list
# of 1,000,000 rows has all its lines, but only the rows near the windows' view are read
# from the daemon, and a row the cursor rests on asks for its page.

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/model.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

# A row not read yet is one shared entry (buflines.Unread()), shown as an unloaded row
# (an empty line, "  … row N" drawn over it while it shows: buflines.Decorate) until it
# is read.
const UNREAD: dict<any> = buflines.Unread()
# A list reads again the unloaded placeholders it holds (rows the daemon has not loaded)
# that are far from its windows once it holds more entries than this.
const MAX_ENTRIES = 20000
# How long the cursor rests before a lazy list reads what is shown and tells the daemon
# that an unloaded row is displayed: keys held down (j, <C-d>, <C-f>) ask nothing on the
# way.
const DISPLAY_DEBOUNCE_MS = 80
# A move farther than this many window heights (G, gg, 500000G, a search) is no key held
# down: what it shows is read at once, without the rest (view.display_far_at_once).
const FAR_MOVE_HEIGHTS = 2

# The entry of every row not read yet (compared with `is`).
export def Unread(): dict<any>
  return UNREAD
enddef

# A new list's debounce (view.display_debounce_ms), in milliseconds.
export def DisplayDebounce(): number
  return DISPLAY_DEBOUNCE_MS
enddef

# Lazy lists (counted placeholders) ----------------------------------------------------------

# Reads the rows not read yet (UNREAD) that the list's windows show, and a window's height
# around them, with one objectsInSection; then those lines are written again.
export def ReadVisible(view: dict<any>)
  if !view.lazy || !view.known || view.detached || view.reading_visible || !bufexists(view.buf) || len(view.sections) != 1
    return
  endif
  var section = view.sections[0]
  var header = section.header ? 1 : 0
  var first = -1
  var last = -1
  var near: list<list<number>> = []
  for win in win_findbuf(view.buf)
    var height = max([1, winheight(win)])
    var cursor = line('.', win)
    var from = max([0, min([line('w0', win), cursor]) - 1 - header - height])
    var to = min([buflines.Count(section) - 1, max([line('w$', win), cursor]) - 1 - header + height])
    add(near, [from - height, to + height])
    for i in range(from, to)
      if buflines.RowAt(section, i) is UNREAD
        first = first < 0 ? i : min([first, i])
        last = max([last, i])
      endif
    endfor
  endfor
  if buflines.IsLazy(section) && len(section.loaded) > MAX_ENTRIES
    Forget(section, near)
  endif
  if first < 0
    if view.display_after_read
      DisplayCursorRows(view)
    endif
    if view.owed > 0
      buflines.SchedulePay(view, 0)
    endif
    return
  endif
  view.reading_visible = true
  var version = view.version
  var conn = view.conn
  var params = {source: view.source, section: 0, start: first, count: last - first + 1}
  rpc.Request(conn, 'objectsInSection', params, (err, result) => {
    view.reading_visible = false
    if view.detached || view.conn isnot conn || !view.lazy || len(view.sections) != 1
      return
    endif
    if type(err) == v:t_dict
      model.Resync(view, 'objectsInSection failed: ' .. render.RpcErrorText(err))
      return
    endif
    var revision = get(result, 'revision', -1)
    if revision != view.revision && !(revision < 0 && view.version == version)
      return  # about other rows: the change set still to come reads again
    endif
    var shown = view.sections[0]
    var n = first
    for value in result.objects
      if n < buflines.Count(shown) && buflines.RowAt(shown, n) is UNREAD
        buflines.SetRow(shown, n, {value: value, pending: false})
      endif
      n += 1
    endfor
    var top = buflines.RowLine(view, 0, first)
    var count = min([len(result.objects), buflines.Count(shown) - first])
    buflines.Edit(view, top, top + count, mapnew(range(first, first + count - 1), (_, i) => render.RowItem(view, buflines.RowAt(shown, i), i)))
    # The rows on screen are drawn: the lines owed come right after, before any key.
    buflines.PayNow(view)
    ReadVisible(view)  # the windows may have moved meanwhile
    if view.display_after_read && !view.reading_visible
      DisplayCursorRows(view)
    endif
  })
enddef

# Forgets the unloaded placeholders (rows the daemon has not loaded) held outside the
# ranges `near` ([first, last] items): read again if they show again.
def Forget(section: dict<any>, near: list<list<number>>)
  filter(section.loaded, (key, entry) => {
    if entry.pending || core.PlaceholderKind(entry.value) != 'unloaded'
      return true
    endif
    var i = str2nr(key)
    for [from, to] in near
      if i >= from && i <= to
        return true
      endif
    endfor
    return false
  })
enddef

# Sends willDisplay for the unloaded rows under the cursors of a lazy list (which loads
# its page: the one beside the loaded rows, or, farther than jumpThreshold, that page
# alone); a row not read yet is looked at again once it is read.
def DisplayCursorRows(view: dict<any>)
  view.display_after_read = false
  var asked: dict<any> = {}
  for win in win_findbuf(view.buf)
    var line = line('.', win)
    var entry = buflines.EntryAt(view, line)
    if empty(entry) || has_key(asked, string(line))
      continue
    endif
    var kind = core.PlaceholderKind(entry.value)
    if entry is UNREAD
      view.display_after_read = true
    elseif kind == 'unloaded'
      asked[string(line)] = true
      events.WillDisplay(view, line)
    endif
  endfor
enddef

# The cursor of window `win` moved from line `before` to `line` (a move of the user's):
# a jump reads what it shows at once; a shorter move waits for the cursor to rest.
export def CursorMoved(view: dict<any>, win: number, before: number, line: number)
  if view.display_far_at_once && abs(line - before) > FAR_MOVE_HEIGHTS * max([1, winheight(win)])
    DisplayNow(view)
  else
    ScheduleDisplay(view)
  endif
enddef

# The cursor moved in a lazy list: once it rests (keys held down move it many times),
# the rows shown are read and an unloaded row under the cursor is displayed.
export def ScheduleDisplay(view: dict<any>)
  if view.display_timer > 0
    timer_stop(view.display_timer)
  endif
  view.display_timer = timer_start(view.display_debounce_ms, (_) => {
    view.display_timer = 0
    DisplayNow(view)
  })
enddef

# Reads the rows shown now, then displays an unloaded row under a cursor (a rest pending
# is dropped: this is what it would do).
export def DisplayNow(view: dict<any>)
  if view.display_timer > 0
    timer_stop(view.display_timer)
    view.display_timer = 0
  endif
  if view.detached || empty(view.conn) || !bufexists(view.buf)
    return
  endif
  view.display_after_read = true
  ReadVisible(view)
enddef

# A lazy list's count of loaded objects, for the status, from the daemon.
export def CountLoaded(view: dict<any>)
  var version = view.version
  rpc.Request(view.conn, 'describeSource', {source: view.source}, (err, description) => {
    if type(err) != v:t_dict && type(description) == v:t_dict && view.lazy && view.version == version
      var loaded = get(description, 'numberOfObjects', 0)
      view.loaded_objects = type(loaded) == v:t_number ? loaded : 0
      events.UpdateLoadedStatus(view)
    endif
  })
enddef
