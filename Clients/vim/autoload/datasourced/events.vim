vim9script
# datasourced/events.vim: the daemon's notifications about the source a list shows
# (willLoadData, finishedLoading, failedWithError, didChange, didChangeFreshness) and what
# they do to the list: its status, its notice, the User events; the rows it displays.

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/lazy.vim'
import autoload 'datasourced/model.vim'
import autoload 'datasourced/render.vim'

# Events ----------------------------------------------------------------------------------

# "loaded N": the objects shown, placeholders left out.
export def UpdateLoadedStatus(view: dict<any>)
  if !view.loaded
    return
  endif
  if view.lazy
    # The list has its full size, of which the daemon holds this many objects (most
    # rows were never read here).
    var total = 0
    for section in view.sections
      total += buflines.Count(section)
    endfor
    buflines.SetStatus(view, printf('loaded %d of %d', view.loaded_objects, total))
    return
  endif
  var count = 0
  for section in view.sections
    count += len(filter(copy(section.rows), (_, e) => !e.pending && !core.IsPlaceholder(e.value)))
  endfor
  buflines.SetStatus(view, 'loaded ' .. count)
enddef

export def OnEvent(view: dict<any>, kind: string, params: dict<any>)
  if kind == 'didChangeFreshness'
    buflines.SetFreshness(view, params.source, core.IsTrue(get(params, 'stale', false)), get(params, 'cachedAt', v:null))
    return
  endif
  if params.source != view.source
    return
  endif
  if kind == 'didChange'
    model.OnChange(view, params)
  elseif kind == 'willLoadData'
    view.loaded = false
    view.failure = {}
    buflines.SetNotice(view, [])
    buflines.SetStatus(view, 'loading')
  elseif kind == 'finishedLoading'
    view.loaded = true
    if view.lazy
      lazy.CountLoaded(view)
      lazy.ScheduleDisplay(view)  # a cursor still on an unloaded row asks on for its page
    endif
    model.ReadPending(view)
    ShowFilteredLoadingRow(view)
    core.Fire('DatasourcedLoaded', view)
  elseif kind == 'failedWithError'
    var failure = type(get(params, 'error', 0)) == v:t_dict ? params.error : {}
    view.loaded = false
    view.failure = {error: failure, sources: FailedSources(view.source, failure)}
    if get(failure, 'kind', '') == 'cancelled'
      buflines.SetStatus(view, 'cancelled')
    else
      buflines.SetStatus(view, 'error: ' .. render.ErrorText(failure, true))
    endif
    # Without an error row (the source does not store error placeholders), the error
    # is said in the list itself.
    buflines.SetNotice(view, get(failure, 'kind', '') == 'cancelled'
      ? ['  ' .. render.ErrorText(failure) .. ': :Datasourced refresh loads the list again']
      : [render.Texts().error .. render.ErrorText(failure)])
    core.Fire('DatasourcedFailed', view, render.ErrorText(failure))
  endif
enddef

# A filtered list whose page brought no row that passes leaves the cursor on its
# trailing loading row, where no move of the cursor can show it again: that row asks for
# the next page itself, as the user's move onto it did.
def ShowFilteredLoadingRow(view: dict<any>)
  if empty(view.filter) || view.source != view.filter.name
    return
  endif
  for win in win_findbuf(view.buf)
    var lnum = line('.', win)
    var entry = buflines.EntryAt(view, lnum)
    if lnum == view.line_count && !empty(entry) && !entry.pending && core.PlaceholderKind(entry.value) == 'loading'
      WillDisplay(view, lnum)
      return
    endif
  endfor
enddef

def FailedSources(own: string, failure: dict<any>): list<string>
  var failures = get(failure, 'failures', [])
  if type(failures) == v:t_list && !empty(failures)
    return mapnew(failures, (_, f) => type(f) == v:t_dict ? core.Str(get(f, 'source', own)) : own)
  endif
  var source = get(failure, 'source', own)
  return [type(source) == v:t_string ? source : own]
enddef

export def WillDisplay(view: dict<any>, line: number)
  var path = buflines.IndexPathAt(view, line)
  if empty(path) || empty(view.conn) || view.conn.exited
    return
  endif
  model.Send(view, 'willDisplayObjectAtIndexPath', {indexPath: path})
enddef
