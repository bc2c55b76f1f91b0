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

# Replaces list lines [first, last) (0-based; last -1: the end) with items [text, group].
# The only writer of the buffer. A list without lines shows its notice (an error the
# list has no row for, the daemon that did not start), or one empty line.
export def Edit(view: dict<any>, first: number, last_given: number, items: list<any>)
  WriteLines(view, first, last_given, mapnew(items, (_, item) => item[0]), items)
enddef

# Edit for lines without highlights (unloaded rows): no [text, group] pair per line.
export def EditLines(view: dict<any>, first: number, last_given: number, lines: list<string>)
  WriteLines(view, first, last_given, lines, [])
enddef

# `items`: the [text, group] of each of `lines`, or [] for lines without text properties.
def WriteLines(view: dict<any>, first: number, last_given: number, lines: list<string>, items: list<any>)
  if view.detached
    return
  endif
  var last = last_given < 0 ? view.line_count : last_given
  var was_empty = view.line_count == 0
  var everything = first == 0 && last == view.line_count
  view.line_count = view.line_count - (last - first) + len(lines)
  var buf = view.buf
  if !bufexists(buf)
    return
  endif
  setbufvar(buf, '&modifiable', 1)
  if was_empty || everything || view.line_count == 0
    var notice = view.line_count == 0 ? mapnew(view.notice, (_, t) => [t, render.Groups().error]) : []
    var shown = view.line_count == 0 ? mapnew(notice, (_, item) => item[0]) : lines
    silent deletebufline(buf, 1, '$')
    setbufline(buf, 1, empty(shown) ? [''] : shown)
    prop_clear(1, max([1, len(shown)]), {bufnr: buf})
    AddProps(buf, 1, view.line_count == 0 ? notice : items)
  elseif last > first && last - first == len(lines)
    # Lines rewritten in place (rows updated, read): windows' cursors stay where they are.
    setbufline(buf, first + 1, lines)
    prop_clear(first + 1, first + len(lines), {bufnr: buf})
    AddProps(buf, first + 1, items)
  else
    if last > first
      silent deletebufline(buf, first + 1, last)
    endif
    if !empty(lines)
      appendbufline(buf, first, lines)
      prop_clear(first + 1, first + len(lines), {bufnr: buf})
      AddProps(buf, first + 1, items)
    endif
  endif
  setbufvar(buf, '&modifiable', 0)
  NoteCursors(view)
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
    for entry in section.rows
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
  for entry in section.rows
    if get(entry, 'pending', false) || !core.IsPlaceholder(entry.value)
      return true
    endif
  endfor
  return pending && empty(section.rows)
enddef

export def SectionLine(view: dict<any>, s: number): number
  var line = 0
  for i in range(s)
    var section = view.sections[i]
    line += (section.header ? 1 : 0) + len(section.rows)
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
    for entry in section.rows
      add(items, render.RowItem(view, entry))
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
    if remaining < len(section.rows)
      return [s, remaining]
    endif
    remaining -= len(section.rows)
    s += 1
  endfor
  return []
enddef

export def EntryAt(view: dict<any>, line: number): dict<any>
  var path = IndexPathAt(view, line)
  return empty(path) ? {} : view.sections[path[0]].rows[path[1]]
enddef
