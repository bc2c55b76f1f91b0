vim9script
# datasourced/commands.vim: what a person asks of a list, by :Datasourced or a key:
# refresh, retry, cancel, close, select, a source's action on a row and cancelling it
# (actions.vim), the keys' help; the command line parsed and completed.

import autoload 'datasourced/actions.vim'
import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/credentials.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/filters.vim'
import autoload 'datasourced/health.vim'
import autoload 'datasourced/model.vim'
import autoload 'datasourced/opening.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

const SUBCOMMANDS = ['open', 'refresh', 'retry', 'cancel', 'close', 'filter', 'search', 'action', 'cancel-action', 'sources', 'health', 'log']

# Commands ----------------------------------------------------------------------------------

def ViewFor(buf: number = 0): dict<any>
  var view = get(core.Views(), string(buf == 0 ? bufnr() : buf), {})
  if empty(view)
    core.Notify('this buffer is not a datasourced list (:Datasourced open FILE opens one)', 'warning')
  endif
  return view
enddef

def NeedsStart(view: dict<any>): bool
  return empty(view.conn) || view.conn.exited || view.conn.stopping || view.setup_failed
enddef

export def RunningView(buf: number = 0): dict<any>
  var view = ViewFor(buf)
  if !empty(view) && NeedsStart(view)
    core.Notify(view.source .. ': the daemon is not running (:Datasourced refresh starts it)', 'warning')
    return {}
  endif
  return view
enddef

# Loads the list again from page one; the cursor goes to the top, where a reloaded list
# starts (left on the last line, it would sit on the new trailing loading row and ask
# for page two at once). Starts the daemon again if it is gone.
export def Refresh(buf: number = 0)
  var view = ViewFor(buf)
  if empty(view)
    return
  endif
  for win in win_findbuf(view.buf)
    win_execute(win, 'cursor(1, 1)')
  endfor
  buflines.NoteCursors(view)
  if NeedsStart(view)
    opening.StartView(view)
    return
  endif
  credentials.ForgetDeclined(view.conn)
  model.Send(view, 'fetchData', {})
enddef

export def Cancel(buf: number = 0)
  var view = RunningView(buf)
  if empty(view)
    return
  endif
  model.Send(view, 'cancelFetch', {}, (result) => {
    if type(result) == v:t_dict && !core.IsTrue(get(result, 'cancelled', false))
      core.Notify(view.source .. ' is not loading: nothing to cancel', 'info')
    endif
  })
enddef

# After a failure: the failed page again when every failed source is paginated and has
# rows (fetchNextPage keeps them); otherwise the whole list again.
export def Retry(buf: number = 0)
  var view = ViewFor(buf)
  if empty(view)
    return
  endif
  if NeedsStart(view)
    opening.StartView(view)
    return
  endif
  if empty(view.failure)
    core.Notify(view.source .. ': nothing failed, nothing to retry (:Datasourced refresh loads again)', 'info')
    return
  endif
  credentials.ForgetDeclined(view.conn)
  var targets = view.failure.sources
  var state: dict<any> = {answers: 0, next_page: true}
  for name in targets
    rpc.Request(view.conn, 'describeSource', {source: name}, (err, d) => {
      state.answers += 1
      state.next_page = state.next_page && type(err) != v:t_dict && d.kind == 'paginated'
        && get(d, 'numberOfObjects', 0) > 0 && core.IsTrue(get(d, 'hasMorePages', false))
      if state.answers < len(targets)
        return
      endif
      if !state.next_page
        model.Send(view, 'fetchData', {})
        return
      endif
      for target in targets
        model.Send(view, 'fetchNextPage', {source: target})
      endfor
    })
  endfor
enddef

# Closes the list: its windows go back to the buffer shown before (or close), and the
# buffer is wiped out.
export def Close(buf: number = 0)
  var view = ViewFor(buf)
  if empty(view)
    return
  endif
  for win in win_findbuf(view.buf)
    win_execute(win, 'LeaveList(' .. view.buf .. ')')
  endfor
  execute 'silent! bwipeout! ' .. view.buf
enddef

def LeaveList(buf: number)
  var alternate = bufnr('#')
  if alternate > 0 && alternate != buf && buflisted(alternate)
    execute 'buffer ' .. alternate
  elseif winnr('$') > 1
    close
  endif
enddef

# <CR>: a row's object to g:datasourced_on_select (default: its JSON in a popup); an
# error row retries; a loading row loads.
export def Select(buf: number = 0)
  var view = ViewFor(buf)
  if empty(view)
    return
  endif
  var entry = buflines.EntryAt(view, line('.'))
  if empty(entry) || entry.pending
    return
  endif
  var kind = core.PlaceholderKind(entry.value)
  if kind == 'error'
    Retry(view.buf)
  elseif kind == 'loading' || kind == 'unloaded'
    events.WillDisplay(view, line('.'))
  elseif kind == ''
    var OnSelect = get(g:, 'datasourced_on_select', null_function)
    if type(OnSelect) == v:t_func
      OnSelect(entry.value, {buf: view.buf, line: line('.'), index_path: buflines.IndexPathAt(view, line('.')), source: view.source})
    else
      popup_atcursor(render.Pretty(entry.value), {border: [], padding: [0, 1, 0, 1], moved: 'any'})
    endif
  endif
enddef

export def Help(): list<string>
  var lines = []
  var keymaps = core.Keymaps()
  for lhs in sort(keys(keymaps))
    var action = keymaps[lhs]
    if type(action) == v:t_string && has_key(core.Actions(), action)
      add(lines, printf('%-7s %s: %s', lhs, action, core.Actions()[action]))
    endif
  endfor
  extend(lines, ['', ':help datasourced'])
  popup_atcursor(lines, {border: [], padding: [0, 1, 0, 1], moved: 'any'})
  return lines
enddef

export def Action(name: string)
  if name == 'select'
    Select()
  elseif name == 'refresh'
    Refresh()
  elseif name == 'retry'
    Retry()
  elseif name == 'cancel'
    Cancel()
  elseif name == 'close'
    Close()
  elseif name == 'filter'
    filters.Filter()
  elseif name == 'help'
    Help()
  elseif name == 'action'
    actions.Perform(RunningView(), '')
  elseif name == 'cancel-action'
    actions.CancelPending(RunningView())
  endif
enddef

export def Command(args: string)
  var sub = matchstr(args, '^\s*\zs\S*')
  var rest = trim(matchstr(args, '^\s*\S*\s*\zs.*'))
  if sub == 'open'
    opening.Open(rest)
  elseif sub == 'filter' && rest != ''
    filters.SetFilter(rest)
  elseif sub == 'action'
    actions.Perform(RunningView(), rest)
  elseif sub == 'search'
    if rest == ''
      filters.SearchPrompt()
    else
      filters.Search(rest)
    endif
  elseif index(SUBCOMMANDS, sub) >= 0 && rest == ''
    if sub == 'sources'
      for line in health.Sources()
        echo line
      endfor
    elseif sub == 'health'
      health.Health()
    elseif sub == 'log'
      health.Log()
    else
      Action(sub)
    endif
  else
    core.Notify(printf('usage: :Datasourced {%s} (got "%s")', join(SUBCOMMANDS, '|'), args))
  endif
enddef

export def Complete(arglead: string, cmdline: string, cursor: number): list<string>
  var words = split(cmdline[: cursor - 1], '\s\+', true)
  if len(words) <= 2
    return filter(copy(SUBCOMMANDS), (_, s) => stridx(s, arglead) == 0)
  endif
  if words[1] == 'open' && len(words) == 3
    return getcompletion(arglead, 'file')
  endif
  if words[1] == 'action' && len(words) == 3
    var view = get(core.Views(), string(bufnr()), {})
    return filter(actions.Names(view), (_, s) => stridx(s, arglead) == 0)
  endif
  return []
enddef
