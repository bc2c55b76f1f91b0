vim9script
# datasourced/filters.vim: `/` and :Datasourced search. A filter is a filtered source
# over the one a list shows, its query sent as keys are typed (setFilter), its matched
# characters highlighted; a search changes the query parameters of the list's remote
# source (updateSource). Both read what is typed through one live prompt.

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/commands.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/model.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

# The characters a filter's query matched (protocol 1.4's match positions).
const MATCH_GROUP = 'DatasourcedMatch'

# Filters and searches ------------------------------------------------------------------------

# Where the string `value` shows in `text` (a rendered line): its 0-based byte offset and
# how many of its characters are there (whole, or cut by a column's width: its first
# characters, then "…"); [-1, 0] when the line does not show it.
def FindShown(text: string, value: string): list<number>
  var start = stridx(text, value)
  if start >= 0
    return [start, strchars(value)]
  endif
  for n in range(strchars(value) - 1, 1, -1)
    start = stridx(text, strcharpart(value, 0, n) .. '…')
    if start >= 0
      return [start, n]
    endif
  endfor
  return [-1, 0]
enddef

# Highlights the characters of line `lnum` that `match` ({score, keyPath, positions})
# names in `object`'s string at match.keyPath.
def HighlightRow(view: dict<any>, lnum: number, object: any, match: dict<any>)
  var value = core.AtKeyPath(object, core.Str(get(match, 'keyPath', '')))
  if type(value) != v:t_string || value == '' || type(get(match, 'positions', 0)) != v:t_list
    return
  endif
  var text = get(getbufline(view.buf, lnum), 0, '')
  var [start, shown] = FindShown(text, value)
  if start < 0
    return  # a format that does not show the matched string as it is
  endif
  for position in match.positions
    if type(position) == v:t_number && position < shown
      # positions count Unicode scalars; byteidxcomp counts them too
      var from = byteidxcomp(value, position)
      var to = byteidxcomp(value, position + 1)
      if from >= 0 && to > from
        prop_add(lnum, start + from + 1, {bufnr: view.buf, type: MATCH_GROUP, length: to - from})
      endif
    endif
  endfor
enddef

def ClearMatches(view: dict<any>)
  if bufexists(view.buf) && view.line_count > 0
    prop_remove({type: MATCH_GROUP, bufnr: view.buf, all: true}, 1, view.line_count - view.owed)
  endif
enddef

# Reads the match positions of every row (objectsInSection withMatches, protocol 1.4) and
# highlights them, when the list shows a filter with a query; clears them otherwise. Once
# per revision; an answer about another revision is dropped (the next change reads again).
export def HighlightMatches(view: dict<any>)
  if view.detached || !bufexists(view.buf)
    return
  endif
  var filter = view.filter
  if empty(filter) || !filter.ready || filter.query == '' || view.source != filter.name
    ClearMatches(view)
    view.matches_read = -1
    if view.prompting
      redraw  # the rows a search (or an emptied filter) brings, behind its prompt
    endif
    return
  endif
  if view.reading_matches || !view.known || view.matches_read == view.revision
    return
  endif
  view.reading_matches = true
  var state: dict<any> = {answers: 0, found: {}, version: view.version, revision: view.revision,
    total: len(view.sections)}
  if state.total == 0
    MatchesRead(view, state)
    return
  endif
  for s in range(state.total)
    RequestMatches(view, s, state)
  endfor
enddef

def RequestMatches(view: dict<any>, s: number, state: dict<any>)
  rpc.Request(view.conn, 'objectsInSection', {source: view.source, section: s, withMatches: true}, (err, result) => {
    state.answers += 1
    if type(err) != v:t_dict && type(result) == v:t_dict && get(result, 'revision', -2) == view.revision
      state.found[string(s)] = result
    endif
    if state.answers == state.total
      MatchesRead(view, state)
    endif
  })
enddef

def MatchesRead(view: dict<any>, state: dict<any>)
  view.reading_matches = false
  if view.detached || !bufexists(view.buf)
    return
  endif
  if view.version != state.version
    model.ReadPending(view)  # the rows changed meanwhile: read again once their values are in
    return
  endif
  ClearMatches(view)
  var complete = true
  for [key, result] in items(state.found)
    var s = str2nr(key)
    var i = 0
    for match in get(result, 'matches', [])
      if s < len(view.sections) && i < buflines.Count(view.sections[s])
        var entry = buflines.RowAt(view.sections[s], i)
        if entry.pending
          complete = false  # its line is not written yet: highlighted on the next read
        elseif type(match) == v:t_dict
          HighlightRow(view, buflines.RowLine(view, s, i) + 1, result.objects[i], match)
        endif
      endif
      i += 1
    endfor
  endfor
  view.matches_read = complete ? state.revision : -1
  if view.prompting
    redraw  # the list behind the prompt shows the new rows as they come
  endif
enddef

# The key paths `/` matches over: the spec's search.keyPaths, else its columns' keys, else
# the string members of the first object.
def MatchKeyPaths(view: dict<any>): list<string>
  if type(get(view.search, 'keyPaths', 0)) == v:t_list && !empty(view.search.keyPaths)
    return copy(view.search.keyPaths)
  endif
  var paths = mapnew(view.columns, (_, c) => type(c) == v:t_dict ? core.Str(get(c, 'key', '')) : core.Str(c))
  if !empty(paths)
    return paths
  endif
  for section in view.sections
    for entry in buflines.Entries(section)
      if !entry.pending && type(entry.value) == v:t_dict && !core.IsPlaceholder(entry.value)
        var strings = sort(filter(keys(entry.value), (_, k) => type(entry.value[k]) == v:t_string))
        if !empty(strings)
          return strings
        endif
      endif
    endfor
  endfor
  return [view.identity_key == '' ? 'id' : view.identity_key]
enddef

# A filter's fill (protocol 1.10): while fewer rows pass and the paginated source under
# it has pages to come, the daemon loads them, so that a filter over a list still paging
# shows a window of matches without the cursor going to the end. The height of the
# list's tallest window (the screen's when it is hidden), within 1...10000; none (0) for
# a daemon older than 1.10, which would refuse the member.
def Fill(view: dict<any>): number
  var version = matchlist(core.Str(get(view.conn, 'protocol_version', '')), '^\(\d\+\)\.\(\d\+\)')
  if empty(version) || str2nr(version[1]) == 1 && str2nr(version[2]) < 10 || str2nr(version[1]) < 1
    return 0
  endif
  var heights = mapnew(win_findbuf(view.buf), (_, win) => winheight(win))
  return max([1, min([10000, empty(heights) ? &lines : max(heights)])])
enddef

# Sends the filter's query (setFilter with a match over its key paths; none for '') and
# its fill, once the filtered source exists. Answers come in order, each after its change
# set.
def SendQuery(view: dict<any>)
  var filter = view.filter
  if empty(filter) || !filter.ready || filter.sent == filter.query
    return
  endif
  filter.sent = filter.query
  var match: any = filter.query == '' ? v:null : {query: filter.query, keyPaths: filter.key_paths}
  var params: dict<any> = {source: filter.name, match: match}
  var fill = Fill(view)
  if fill > 0
    params.fill = fill
  endif
  model.Send(view, 'setFilter', params, (_) => {
    view.matches_read = -1
    HighlightMatches(view)
  })
enddef

# Makes the list show a filtered source over the one it shows (once per list); named after
# the buffer, so that two lists of one source filter apart.
def EnsureFilter(view: dict<any>)
  if !empty(view.filter)
    return
  endif
  var filter = {name: printf('%s/filter#%d', view.source, view.buf), base: view.source, query: '', sent: '',
    key_paths: MatchKeyPaths(view), ready: false}
  view.filter = filter
  var conn = view.conn
  var params: dict<any> = {name: filter.name, kind: 'filtered', source: filter.base}
  var fill = Fill(view)
  if fill > 0
    params.fill = fill
  endif
  rpc.Request(conn, 'createSource', params, (err, _) => {
    if view.filter isnot filter || view.conn isnot conn
      return
    endif
    if type(err) == v:t_dict
      view.filter = {}
      core.Notify(printf('%s: the daemon refused the filter: %s', filter.base, render.RpcErrorText(err)))
      return
    endif
    filter.ready = true
    view.source = filter.name
    view.under[filter.name] = true
    model.Reload(view, (_) => SendQuery(view))
  })
enddef

# Filters the list by `query`, a fuzzy match over its shown key paths ('' shows every row).
export def SetFilter(query: string, buf: number = 0)
  var view = commands.RunningView(buf)
  if empty(view)
    return
  endif
  if empty(view.filter)
    if query == ''
      return
    endif
    if view.lazy
      # A filtered source over it is read whole (allObjects): a million rows would hang Vim.
      core.Notify(view.source .. ': a counted list cannot be filtered here: the filter would read every row; use a search (:Datasourced search) instead', 'warning')
      return
    endif
    EnsureFilter(view)
  endif
  view.filter.query = query
  SendQuery(view)
enddef

# A prompt whose text goes to `OnTyped` at each key typed (CmdlineChanged); returns the
# text entered, or v:null when cancelled (<Esc>).
const PROMPT_CANCELLED = "datasourced-cancelled"
var PromptHandler: func(string) = null_function

def PromptChanged()
  if PromptHandler != null_function
    PromptHandler(getcmdline())
  endif
enddef

def LivePrompt(prompt: string, default: string, OnTyped: func(string)): any
  PromptHandler = OnTyped
  augroup datasourced_prompt
    autocmd!
    autocmd CmdlineChanged @ PromptChanged()
  augroup END
  var text = PROMPT_CANCELLED
  try
    text = inputdialog(prompt, default, PROMPT_CANCELLED)
  finally
    augroup datasourced_prompt
      autocmd!
    augroup END
    PromptHandler = null_function
  endtry
  return text == PROMPT_CANCELLED ? v:null : text
enddef

# `/` in a list: a prompt that filters the rows as you type; <CR> keeps the filter, <Esc>
# shows every row again.
export def Filter(buf: number = 0)
  var view = commands.RunningView(buf)
  if empty(view)
    return
  endif
  view.prompting = true
  var text = LivePrompt('/', empty(view.filter) ? '' : view.filter.query, (query) => SetFilter(query, view.buf))
  view.prompting = false
  SetFilter(text == v:null ? '' : text, view.buf)
enddef

# The remote or paginated source a list's search changes: search.source, else the only
# one the list is made from; '' after saying why.
def SearchTarget(view: dict<any>): string
  if type(get(view.search, 'parameter', 0)) != v:t_string && type(get(view.search, 'variable', 0)) != v:t_string
    core.Notify(view.source .. ': the list spec names no search parameter (add "search": {"parameter": "q"}, or {"variable": "search"} for a GraphQL source)')
    return ''
  endif
  if type(get(view.search, 'source', 0)) == v:t_string
    return view.search.source
  endif
  var remote = sort(keys(view.remote_sources))
  if len(remote) == 1
    return remote[0]
  endif
  core.Notify(printf('%s: %s remote sources; name the one to search in the spec''s search.source', view.source,
    empty(remote) ? 'no' : 'several'))
  return ''
enddef

# Searches the server: updateSource sets the spec's search parameter of the list's remote
# source to `text` ('' removes it), its other query parameters kept; or, when the spec
# names a search variable, that variable of its GraphQL query, its other variables kept. The rows stay (the
# status says [updating]) until the new query's rows replace them in one change set.
export def Search(text: string, buf: number = 0)
  var view = commands.RunningView(buf)
  if empty(view)
    return
  endif
  var target = SearchTarget(view)
  if target == ''
    return
  endif
  view.searched = text
  model.Send(view, 'describeSource', {source: target}, (description) => {
    if view.searched != text
      return  # a newer search sends its own update
    endif
    var params: dict<any> = {source: target}
    if has_key(view.search, 'variable')
      var graphql = get(description, 'graphql', {})
      var variables = type(graphql) == v:t_dict && type(get(graphql, 'variables', 0)) == v:t_dict ? copy(graphql.variables) : {}
      if text == ''
        if has_key(variables, view.search.variable)
          remove(variables, view.search.variable)
        endif
      else
        variables[view.search.variable] = text
      endif
      params.graphql = {variables: variables}
    else
      var query = type(get(description, 'queryParameters', 0)) == v:t_dict ? copy(description.queryParameters) : {}
      if text == ''
        if has_key(query, view.search.parameter)
          remove(query, view.search.parameter)
        endif
      else
        query[view.search.parameter] = text
      endif
      params.queryParameters = query
    endif
    if has_key(view.search, 'debounceMilliseconds')
      params.debounceMilliseconds = view.search.debounceMilliseconds
    endif
    model.Send(view, 'updateSource', params)
  })
enddef

# `:Datasourced search` alone: a prompt that searches as you type (the spec's
# debounceMilliseconds merges a burst of keys into one request); <Esc> goes back to the
# search shown before.
export def SearchPrompt(buf: number = 0)
  var view = commands.RunningView(buf)
  if empty(view) || SearchTarget(view) == ''
    return
  endif
  var before = view.searched
  view.prompting = true
  var text = LivePrompt('search: ', before, (query) => Search(query, view.buf))
  view.prompting = false
  # The last key's search went out already; <Esc> goes back to the one before.
  var final = text == v:null ? before : text
  if final != view.searched
    Search(final, view.buf)
  endif
enddef
