vim9script
# datasourced/model.vim: keeping a list's copy of its source true to the daemon's. A list
# reads its layout and rows (describeSource, allObjects), then applies each change set
# (didChange) as edits of the lines it touches, reading the rows it did not bring; a
# change set that does not follow the revision shown, or does not fit, reads it all again.

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/filters.vim'
import autoload 'datasourced/lazy.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

# Reading the list -----------------------------------------------------------------------

export def Send(view: dict<any>, method: string, params: dict<any>, OnResult: func = null_function)
  var all = extend({source: view.source}, params)
  rpc.Request(view.conn, method, all, (err, result) => Sent(view, method, err, result, OnResult))
enddef

def Sent(view: dict<any>, method: string, err: any, result: any, OnResult: func)
  if type(err) == v:t_dict
    core.Notify(printf('%s: %s failed: %s', view.source, method, render.RpcErrorText(err)))
  elseif OnResult != null_function
    OnResult(result)
  endif
enddef

# Reads the layout and every row (describeSource, then allObjects) and redraws it all:
# when a list opens, and whenever the copy cannot be trusted. A list of counted
# placeholders reads the layout alone: its rows are read as they show (lazy.vim).
export def Reload(view: dict<any>, Done: func = null_function)
  view.known = false
  if Done != null_function
    view.reload_callback = Done
  endif
  if view.reloading
    view.reload_again = true
    return
  endif
  view.reloading = true
  view.reload_again = false
  var conn = view.conn
  rpc.Request(conn, 'describeSource', {source: view.source}, (err, description) => {
    if view.conn isnot conn || view.detached
      view.reloading = false
      return
    endif
    if type(err) == v:t_dict
      view.reloading = false
      buflines.SetStatus(view, 'error: ' .. render.RpcErrorText(err))
      buflines.SetNotice(view, [render.Texts().error .. view.source .. ': ' .. render.RpcErrorText(err)])
      core.Notify(view.source .. ': ' .. render.RpcErrorText(err))
      return
    endif
    if Counted(description)
      FinishReload(view, description, v:null, get(description, 'revision', -1))
      return
    endif
    rpc.Request(conn, 'allObjects', {source: view.source, withRevision: true}, (read_err, answer) => {
      if view.conn isnot conn || view.detached
        view.reloading = false
        return
      endif
      if type(read_err) == v:t_dict
        view.reloading = false
        core.Notify(view.source .. ': allObjects failed: ' .. render.RpcErrorText(read_err))
        return
      endif
      FinishReload(view, description, answer.objects, answer.revision)
    })
  })
enddef

# Whether a description is of a paginated source asked for counted placeholders
# (protocol 1.5): its list may be a million rows long, of which few are loaded.
def Counted(description: any): bool
  if type(description) != v:t_dict || get(description, 'kind', '') != 'paginated'
    return false
  endif
  var placeholders = get(description, 'placeholders', '')
  if type(placeholders) == v:t_dict
    return get(placeholders, 'requested', '') == 'counted' || core.IsTrue(get(placeholders, 'inForce', false))
  endif
  return type(placeholders) == v:t_string && placeholders == 'counted'
enddef

# The end of Reload: the rows from `objects` (every row; v:null for a lazy list, whose
# rows are read as they show).
def FinishReload(view: dict<any>, description: dict<any>, objects: any, revision: number)
  view.reloading = false
  if view.reload_again || get(description, 'revision', -1) != revision
    Reload(view)  # a change between the two answers: they describe different rows
    return
  endif
  view.version += 1  # answers to reads made before are about the old rows
  view.revision = revision
  view.known = true
  view.kind = description.kind
  view.identity_key = type(get(description, 'identityKey', '')) == v:t_string ? get(description, 'identityKey', '') : ''
  # A filtered source keeps its child's sections: headers if the child had them (the
  # list showed the child before its first filter).
  if description.kind != 'filtered'
    view.show_headers = description.kind == 'sectioned' || description.kind == 'multi'
  endif
  view.matches_read = -1
  if description.kind == 'remote' || description.kind == 'paginated'
    buflines.SetFreshness(view, view.source, core.IsTrue(get(description, 'stale', false)), get(description, 'cachedAt', v:null))
  endif
  view.lazy = type(objects) != v:t_list
  var loaded = get(description, 'numberOfObjects', 0)
  view.loaded_objects = type(loaded) == v:t_number ? loaded : 0
  var sections = []
  var next = 0
  var s = 0
  for count in description.counts
    if view.lazy
      # A number of rows not read yet, not a list of them.
      add(sections, buflines.LazySection(description.sectionTitles[s], count))
    else
      # Declared, as a counted list's `loaded` is (buflines.LazySection): in Vim 9.0 a
      # section passed to a :def function from an untyped place (view.sections[s]) has its
      # type checked row by row unless this list's type is declared (7 ms a call with
      # 10,000 rows, against microseconds).
      var rows: list<dict<any>> = count > 0 ? mapnew(objects[next : next + count - 1], (_, v) => ({value: v, pending: false})) : []
      add(sections, {title: description.sectionTitles[s], title_pending: false, header: false, rows: rows})
    endif
    next += count
    s += 1
  endfor
  view.sections = sections
  if view.lazy && len(sections) == 1 && !buflines.HeaderWanted(view, sections[0])
    # Empty lines: their texts are drawn as they show. A list read again writes over
    # the lines it has (buflines.Edit).
    buflines.Edit(view, 0, -1, [], sections[0].count)
  else
    buflines.Edit(view, 0, -1, buflines.AllItems(view))
  endif
  events.UpdateLoadedStatus(view)
  if view.lazy
    view.display_after_read = true  # a cursor on an unloaded row (after a jump) shows it
    lazy.ReadVisible(view)
  endif
  var Callback = get(view, 'reload_callback', null_function)
  view.reload_callback = null_function
  if Callback != null_function
    Callback(description)
  endif
enddef

export def Resync(view: dict<any>, reason: string)
  view.resyncs += 1
  view.last_resync = reason
  Reload(view)
enddef

# Change sets ----------------------------------------------------------------------------

export def OnChange(view: dict<any>, params: dict<any>)
  if !view.known
    if view.reloading
      view.reload_again = true  # the read under way may straddle this change
    endif
    return
  endif
  var revision = get(params, 'revision', -1)
  if type(revision) == v:t_number && revision >= 0
    if revision <= view.revision
      return  # already in the rows read
    endif
    if get(params, 'previousRevision', -1) != view.revision
      Resync(view, printf('change set from revision %s, the list shows %s', string(get(params, 'previousRevision', '?')), view.revision))
      return
    endif
  endif
  Apply(view, get(params, 'changes', {}), get(params, 'values', {}))
  if view.known && type(revision) == v:t_number && revision >= 0
    view.revision = revision
  endif
enddef

# Applies a change set (Protocol.md, "Notifications"), editing only the lines it touches;
# one that does not fit the copy makes it read again.
def Apply(view: dict<any>, changes: dict<any>, values: any)
  view.version += 1
  # The cursor keeps its line number (rather than riding along with its row) when it is
  # on the last line, so that a page arriving does not carry it to the new trailing
  # loading row and load the next page by itself; and before the user moved it, so a
  # list just opened shows its top.
  var pinned: dict<any> = {}
  for win in win_findbuf(view.buf)
    var line = line('.', win)
    if line >= view.line_count || !get(view.user_moved, string(win), false)
      pinned[string(win)] = line
    endif
  endfor
  var problem = ''
  try
    ApplyUnprotected(view, changes, type(values) == v:t_dict ? values : {})
  catch
    problem = v:exception
  endtry
  for [win, line] in items(pinned)
    win_execute(str2nr(win), 'cursor(' .. max([1, min([line, view.line_count])]) .. ', 1)')
  endfor
  buflines.NoteCursors(view)
  if problem != ''
    Resync(view, problem)
    return
  endif
  ReadPending(view)
enddef

def Key(s: number, i: number): string
  return s .. ':' .. i
enddef

# The rows a change set's list of paths names, as runs [section, item, count]: each
# element is [section, item], or with the changeRanges capability (protocol 1.6)
# [section, item, count] (a counted list taking its million rows is one element).
def Runs(paths: any): list<any>
  if type(paths) != v:t_list
    return []
  endif
  return mapnew(paths, (_, p) => [p[0], p[1], len(p) > 2 ? p[2] : 1])
enddef

def ApplyUnprotected(view: dict<any>, changes: dict<any>, values: dict<any>)
  var removals: dict<any> = {}  # section -> runs [item, count] leaving (old coordinates)
  var moved_entries: dict<any> = {}
  for run in Runs(get(changes, 'deleted', []))
    if !has_key(removals, string(run[0]))
      removals[string(run[0])] = []
    endif
    add(removals[string(run[0])], [run[1], run[2]])
  endfor
  for move in get(changes, 'moved', [])
    if move.from[0] >= len(view.sections) || move.from[1] >= buflines.Count(view.sections[move.from[0]])
      throw 'moved.from out of range'
    endif
    if !has_key(removals, string(move.from[0]))
      removals[string(move.from[0])] = []
    endif
    add(removals[string(move.from[0])], [move.from[1], 1])
    moved_entries[Key(move.to[0], move.to[1])] = buflines.RowAt(view.sections[move.from[0]], move.from[1])
  endfor
  var deleted_sections: dict<any> = {}
  for s in get(changes, 'deletedSections', [])
    if s >= len(view.sections)
      throw 'deletedSections out of range'
    endif
    deleted_sections[string(s)] = true
  endfor

  # 1. Old coordinates, bottom up (the lines above stay where they are): deleted
  #    sections, and each run of removed rows as one edit.
  for s in range(len(view.sections) - 1, 0, -1)
    var section = view.sections[s]
    if has_key(deleted_sections, string(s))
      var first = buflines.SectionLine(view, s)
      buflines.Edit(view, first, first + (section.header ? 1 : 0) + buflines.Count(section), [])
      remove(view.sections, s)
      continue
    endif
    for run in sort(get(removals, string(s), []), (a, b) => b[0] - a[0])
      var [i, count] = run
      if i + count > buflines.Count(section)
        throw 'deleted out of range'
      endif
      var line = buflines.RowLine(view, s, i)
      buflines.Edit(view, line, line + count, [])
      buflines.RemoveRows(section, i, count)
    endfor
  endfor

  # 2. New coordinates, top down: new sections, their headers and titles to come.
  for s in sort(copy(get(changes, 'insertedSections', [])), 'n')
    if s > len(view.sections)
      throw 'insertedSections out of range'
    endif
    var rows: list<dict<any>> = []
    var section = view.lazy ? buflines.LazySection(v:null, 0) : {title: v:null, header: false, rows: rows}
    section.title_pending = true
    insert(view.sections, section, s)
  endfor

  # 3. Inserted and moved rows, top down: [section, item, count, offset of the values
  #    (-1: a moved row)], placed run by run.
  var inserted_values = type(get(values, 'inserted', 0)) == v:t_list ? values.inserted : v:null
  var placed = []
  var offset = 0
  for run in Runs(get(changes, 'inserted', []))
    add(placed, [run[0], run[1], run[2], offset])
    offset += run[2]
  endfor
  for move in get(changes, 'moved', [])
    add(placed, [move.to[0], move.to[1], 1, -1])
  endfor
  sort(placed, (a, b) => a[0] != b[0] ? a[0] - b[0] : a[1] - b[1])
  for [s, first, count, from] in placed
    if s >= len(view.sections) || first > buflines.Count(view.sections[s])
      throw 'inserted row out of range'
    endif
    var section = view.sections[s]
    var entries: list<any>
    var unread = from >= 0 && type(inserted_values) != v:t_list && view.lazy
    if from < 0
      entries = [moved_entries[Key(s, first)]]
    elseif type(inserted_values) == v:t_list
      entries = mapnew(inserted_values[from : from + count - 1], (_, v) => ({value: v, pending: false}))
    elseif !unread
      entries = mapnew(range(count), (_, _) => ({value: v:null, pending: true}))
    endif
    # Rows not read yet (a counted list taking its million rows): a count, and empty lines.
    buflines.InsertRows(section, first, entries, unread ? count : 0)
    var line = buflines.RowLine(view, s, first)
    if unread
      buflines.Edit(view, line, line, [], count)
    else
      buflines.Edit(view, line, line, mapnew(entries, (k, entry) => render.RowItem(view, entry, first + k)))
    endif
  endfor

  # 4. Updated rows keep their line.
  var updated_values = get(values, 'updated', 0)
  var unread = lazy.Unread()
  var u = 0
  for [s, first, count] in Runs(get(changes, 'updated', []))
    if s >= len(view.sections) || first + count > buflines.Count(view.sections[s])
      throw 'updated out of range'
    endif
    var section = view.sections[s]
    if type(updated_values) != v:t_list && buflines.IsLazy(section)
      # Read again if they show: the entries held go (a count of a million rows is not
      # walked), their lines emptied.
      filter(section.loaded, (key, _) => str2nr(key) < first || str2nr(key) >= first + count)
      u += count
      var line = buflines.RowLine(view, s, first)
      buflines.Edit(view, line, line + count, [], count)
      continue
    endif
    for i in range(first, first + count - 1)
      if type(updated_values) == v:t_list
        buflines.SetRow(section, i, {value: updated_values[u], pending: false})
      elseif view.lazy
        buflines.SetRow(section, i, unread)  # read again if it shows
      else
        buflines.SetRow(section, i, {value: v:null, pending: true})
      endif
      u += 1
    endfor
    if type(updated_values) == v:t_list || view.lazy
      var line = buflines.RowLine(view, s, first)
      buflines.Edit(view, line, line + count, mapnew(range(first, first + count - 1), (_, i) => render.RowItem(view, buflines.RowAt(section, i), i)))
    endif
  endfor

  # 5. Header lines where wanted now.
  for s in range(len(view.sections))
    buflines.SyncHeader(view, s)
  endfor
enddef

# Reads what the change sets did not bring: rows without values, titles of new sections.
export def ReadPending(view: dict<any>)
  if view.reading || view.reloading
    return
  endif
  if view.lazy
    # Its rows are never pending (lazy.Unread() instead): read as they show, not scanned here.
    lazy.ReadVisible(view)
    events.UpdateLoadedStatus(view)
    return
  endif
  var ranges = []
  var titles_pending = false
  var s = 0
  for section in view.sections
    titles_pending = titles_pending || section.title_pending
    var pending = filter(range(len(section.rows)), (_, i) => section.rows[i].pending)
    if !empty(pending)
      add(ranges, {section: s, first: pending[0], last: pending[-1]})
    endif
    s += 1
  endfor
  if empty(ranges) && !titles_pending
    events.UpdateLoadedStatus(view)
    filters.HighlightMatches(view)
    return
  endif
  view.reading = true
  var version = view.version
  var state: dict<any> = {outstanding: len(ranges) + (titles_pending ? 1 : 0)}
  var Done = () => {
    state.outstanding -= 1
    if state.outstanding == 0
      view.reading = false
      ReadPending(view)
    endif
  }
  if titles_pending
    rpc.Request(view.conn, 'sectionTitles', {source: view.source}, (err, titles) => {
      if type(err) == v:t_dict
        view.reading = false
        Resync(view, 'sectionTitles failed')
        return
      elseif view.version == version
        var t = 0
        for section in view.sections
          if section.title_pending
            section.title_pending = false
            section.title = titles[t]
            if section.header
              var line = buflines.SectionLine(view, t)
              buflines.Edit(view, line, line + 1, [render.HeaderItem(section)])
            endif
            buflines.SyncHeader(view, t)
          endif
          t += 1
        endfor
      endif
      Done()
    })
  endif
  for range_ in ranges
    ReadRange(view, range_, version, Done)
  endfor
enddef

def ReadRange(view: dict<any>, range_: dict<any>, version: number, Done: func)
  var params = {source: view.source, section: range_.section, start: range_.first, count: range_.last - range_.first + 1}
  rpc.Request(view.conn, 'objectsInSection', params, (err, result) => {
    if type(err) == v:t_dict
      view.reading = false
      Resync(view, 'objectsInSection failed')
      return
    elseif get(result, 'revision', -1) == view.revision || view.version == version
      var section = view.sections[range_.section]
      var offset = 0
      for value in result.objects
        var i = range_.first + offset
        if i < len(section.rows) && section.rows[i].pending
          section.rows[i].pending = false
          section.rows[i].value = value
          var line = buflines.RowLine(view, range_.section, i)
          buflines.Edit(view, line, line + 1, [render.RowItem(view, section.rows[i])])
        endif
        offset += 1
      endfor
      buflines.SyncHeader(view, range_.section)
    endif
    Done()
  })
enddef
