vim9script
# datasourced/windows.vim: the windows that show a list and its buffer's own events: the
# window options (no wrap, the status line and 'laststatus', the unloaded rows' match),
# the cursor moving (the last line loads the next page), the list shown again, and the
# list wiped out or opened again (the sources only it used destroyed, the daemon stopped
# with the last list).

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/lazy.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

# The statusline of list windows: the name first, so that a long state is cut, not it.
const STATUSLINE = "%f  %<%{get(b:, 'datasourced_status', '')}%= %l/%L "

# 'laststatus' as it was before a list raised it to 2 (-1: not raised).
var laststatus_before = -1

# Window options ------------------------------------------------------------------------------

export def SetWindowOptions()
  # One line per row: a long row is cut at the window's edge, not folded.
  &l:wrap = false
  SyncUnloadedMatch()
  if get(g:, 'datasourced_statusline', true)
    &l:statusline = STATUSLINE
  endif
  RaiseLastStatus()
enddef

# Unloaded rows of counted lists (see UNREAD in lazy.vim) are dim by one pattern for a
# million lines, a match (matchadd) of each window showing a list: not a syntax item,
# which `syntax on` (a FileType autocommand) clears, and which a text property per line
# would cost. Matches belong to windows, not buffers: a window is given the match when
# it shows a list, and loses it when it shows another buffer (BufWinEnter, WinEnter:
# a window split from a list's).
def SyncUnloadedMatch()
  var win = win_getid()
  var ids = mapnew(filter(getmatches(win), (_, m) => m.group == render.Groups().unloaded), (_, m) => m.id)
  if has_key(core.Views(), string(bufnr()))
    if empty(ids)
      matchadd(render.Groups().unloaded, '^' .. render.Texts().unloaded .. '\d\+$', 10, -1, {window: win})
    endif
    if !exists('#datasourced_windows')
      augroup datasourced_windows
        autocmd!
        autocmd BufWinEnter,WinEnter * SyncUnloadedMatch()
        autocmd WinScrolled * OnScrolled()
      augroup END
    endif
  else
    for id in ids
      matchdelete(id, win)
    endfor
  endif
enddef

# A window scrolled (or resized): the counted lists shown lay the texts of the unloaded
# rows that come into view, before the screen is drawn.
def OnScrolled()
  for info in getwininfo()
    var view = get(core.Views(), string(info.bufnr), {})
    if !empty(view) && !view.detached && view.lazy
      buflines.Decorate(view)
    endif
  endfor
enddef

# A list's state is in its status line, which a window alone has only with 'laststatus'
# 2; the option is global (no window has its own): it is 2 while a window shows a list,
# and back to what it was once none does (unless it was set meanwhile).
# g:datasourced_laststatus false leaves it alone.
def RaiseLastStatus()
  if get(g:, 'datasourced_laststatus', true) && &laststatus < 2
    laststatus_before = &laststatus
    &laststatus = 2
  endif
enddef

# A list buffer `buf` leaving its last window (BufWinLeave).
export def LowerLastStatus(buf: number)
  if laststatus_before < 0
    return
  endif
  for info in getwininfo()
    if info.bufnr != buf && has_key(core.Views(), string(info.bufnr))
      return  # another list is shown, in this tab page or another
    endif
  endfor
  if &laststatus == 2
    &laststatus = laststatus_before
  endif
  laststatus_before = -1
enddef

# Buffer events ---------------------------------------------------------------------------

# The cursor reaching the last line shows its row: that is what asks for the next page.
# Only a move of the user's counts (see NoteCursors).
export def OnCursorMoved(buf: number)
  var view = get(core.Views(), string(buf), {})
  if empty(view) || view.detached
    return
  endif
  var win = win_getid()
  if view.lazy
    # Before the screen is drawn: the lines owed near the cursor, the texts of the
    # unloaded rows it will show.
    buflines.PayForMove(view, win)
    buflines.Decorate(view)
  endif
  var line = line('.')
  var before = get(view.cursor_lines, string(win), -1)
  view.cursor_lines[string(win)] = line
  if before < 0 || line == before
    return
  endif
  view.user_moved[string(win)] = true
  var entry = buflines.EntryAt(view, line)
  if view.lazy && !(line == view.line_count && !empty(entry) && core.PlaceholderKind(entry.value) == 'loading')
    lazy.CursorMoved(view, win, before, line)
  elseif line == view.line_count
    events.WillDisplay(view, line)
  endif
enddef

# A list shown in a window again: a lazy list reads the rows it shows now (none were read
# while it was hidden).
export def ShowAgain(buf: number)
  var view = get(core.Views(), string(buf), {})
  if !empty(view) && !view.detached && view.lazy
    buflines.Decorate(view)
    lazy.ScheduleDisplay(view)
  endif
enddef

# A list gone: the sources only it used are destroyed, and the daemon stops with the
# last list.
export def OnWipeout(buf: number)
  var view = get(core.Views(), string(buf), {})
  if empty(view)
    return
  endif
  remove(core.Views(), string(buf))
  if view.display_timer > 0
    timer_stop(view.display_timer)
  endif
  execute 'augroup datasourced_list_' .. buf
    autocmd!
  augroup END
  execute 'augroup! datasourced_list_' .. buf
  var conn = view.conn
  if empty(conn) || conn.exited || conn.stopping
    return
  endif
  if empty(rpc.ViewsOf(conn))
    rpc.StopConnection(conn)
    return
  endif
  ReleaseSources(view)
enddef

# Destroys the sources only `view` used (no other list of its daemon uses them), parents
# first, and its filter's: when a list is closed; when it is opened again, given the
# spec's sources (`anew`), only those the spec changes and those built on them (the
# daemon handles messages in order: what the list asks next finds them gone; a source
# kept keeps its rows and its pending actions). Until the daemon answers, its
# notifications about them (a load cancelled) are not the lists'.
export def ReleaseSources(view: dict<any>, anew: any = v:null)
  var conn = view.conn
  var names: list<string> = []
  if !empty(conn) && !conn.exited && !conn.stopping
    if !empty(view.filter) && view.filter.ready
      add(names, view.filter.name)
    endif
    var used: dict<any> = {}
    for other in rpc.ViewsOf(conn)
      if other isnot view
        for params in other.create
          used[params.name] = true
        endfor
        used[other.source] = true
      endif
    endfor
    var going: dict<any> = {}
    var spec: dict<any> = {}
    for params in type(anew) == v:t_list ? anew : []
      spec[params.name] = params
    endfor
    # The spec lists children first: a source built on one going goes too.
    for params in view.create
      var name = params.name
      if !has_key(used, name) && has_key(conn.created, name) && (type(anew) != v:t_list
          || get(spec, name, {}) != conn.created[name] || BuiltOnAny(params, going))
        going[name] = true
      endif
    endfor
    # Parents before their children.
    for params in reverse(copy(view.create))
      if has_key(going, params.name)
        remove(conn.created, params.name)
        if has_key(conn.load_state, params.name)
          remove(conn.load_state, params.name)
        endif
        add(names, params.name)
      endif
    endfor
  endif
  for name in names
    Destroy(conn, name)
  endfor
enddef

# Whether a source's params (createSource's) name a child among `names`.
def BuiltOnAny(params: dict<any>, names: dict<any>): bool
  var children = get(params, 'sources', [get(params, 'source', '')])
  return type(children) == v:t_list && !empty(filter(copy(children), (_, c) => type(c) == v:t_string && has_key(names, c)))
enddef

def Destroy(conn: dict<any>, name: string)
  conn.destroying[name] = get(conn.destroying, name, 0) + 1
  rpc.Request(conn, 'destroySource', {name: name}, (_, _) => {
    conn.destroying[name] -= 1
    if conn.destroying[name] <= 0
      remove(conn.destroying, name)
    endif
  })
enddef
