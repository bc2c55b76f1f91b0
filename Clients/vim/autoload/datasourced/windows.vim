vim9script
# datasourced/windows.vim: the windows that show a list and its buffer's own events: the
# window options (no wrap, the status line), the cursor moving (the last line loads the
# next page), the list shown again, and the list wiped out (the sources only it used
# destroyed, the daemon stopped with the last list).

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/lazy.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

# The statusline of list windows: the name first, so that a long state is cut, not it.
const STATUSLINE = "%f  %<%{get(b:, 'datasourced_status', '')}%= %l/%L "

# Window options ------------------------------------------------------------------------------

export def SetWindowOptions()
  # One line per row: a long row is cut at the window's edge, not folded.
  &l:wrap = false
  # Unloaded rows of counted lists (see UNREAD in lazy.vim): one pattern for a million lines.
  silent! syntax clear DatasourcedUnloaded
  execute 'syntax match DatasourcedUnloaded /^' .. render.Texts().unloaded .. '\d\+$/'
  if get(g:, 'datasourced_statusline', true)
    &l:statusline = STATUSLINE
  endif
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
  var line = line('.')
  var before = get(view.cursor_lines, string(win), -1)
  view.cursor_lines[string(win)] = line
  if before < 0 || line == before
    return
  endif
  view.user_moved[string(win)] = true
  var entry = buflines.EntryAt(view, line)
  if view.lazy && !(line == view.line_count && !empty(entry) && core.PlaceholderKind(entry.value) == 'loading')
    lazy.ScheduleDisplay(view)
  elseif line == view.line_count
    events.WillDisplay(view, line)
  endif
enddef

# A list shown in a window again: a lazy list reads the rows it shows now (none were read
# while it was hidden).
export def ShowAgain(buf: number)
  var view = get(core.Views(), string(buf), {})
  if !empty(view) && !view.detached && view.lazy
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
  var others = rpc.ViewsOf(conn)
  if empty(others)
    rpc.StopConnection(conn)
    return
  endif
  if !empty(view.filter) && view.filter.ready
    rpc.Request(conn, 'destroySource', {name: view.filter.name}, (_, _) => 0)
  endif
  var used: dict<any> = {}
  for other in others
    for params in other.create
      used[params.name] = true
    endfor
    used[other.source] = true
  endfor
  # Parents before their children: the spec lists children first.
  for params in reverse(copy(view.create))
    if !has_key(used, params.name) && has_key(conn.created, params.name)
      remove(conn.created, params.name)
      if has_key(conn.load_state, params.name)
        remove(conn.load_state, params.name)
      endif
      rpc.Request(conn, 'destroySource', {name: params.name}, (_, _) => 0)
    endif
  endfor
enddef
