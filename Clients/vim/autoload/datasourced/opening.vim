vim9script
# datasourced/opening.vim: opening a list. A spec file read (JSON, ${NAME} from
# g:datasourced_variables) and checked; the list buffer and its keys; the sources the
# daemon lacks created, the list read, and its remote sources loaded. Its windows and
# its buffer's events are windows.vim's.

import autoload 'datasourced/actions.vim'
import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/lazy.vim'
import autoload 'datasourced/model.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'
import autoload 'datasourced/windows.vim'

# Opening a list ------------------------------------------------------------------------------

# ${NAME} in every string of the spec, from g:datasourced_variables; an unknown NAME
# is an error naming it and the file.
def Substitute(value: any, variables: dict<any>, file: string): any
  if type(value) == v:t_string
    var out = ''
    var start = 0
    while true
      var found = matchstrpos(value, '\${\([^}]*\)}', start)
      if found[1] < 0
        return out .. value[start :]
      endif
      var name = found[0][2 : -2]
      if !has_key(variables, name)
        throw printf('datasourced-spec: %s: unknown variable ${%s} (set it in g:datasourced_variables; known: %s)',
          file, name, empty(variables) ? 'none' : join(sort(keys(variables)), ', '))
      endif
      out ..= (found[1] > 0 ? value[start : found[1] - 1] : '') .. core.Str(variables[name])
      start = found[2]
    endwhile
  elseif type(value) == v:t_list
    return mapnew(value, (_, v) => Substitute(v, variables, file))
  elseif type(value) == v:t_dict
    return mapnew(value, (_, v) => Substitute(v, variables, file))
  endif
  return value
enddef

# A spec file as a dict, variables replaced; throws 'datasourced-spec: ...' otherwise.
def ReadSpec(path: string): dict<any>
  var file = expand(path)
  if file =~? '\.toml$'
    throw 'datasourced-spec: ' .. file .. ' is TOML, which datasourced.vim cannot read: write the same spec as JSON'
  endif
  if !filereadable(file)
    throw 'datasourced-spec: cannot read ' .. file
  endif
  var spec: any
  try
    spec = json_decode(join(readfile(file), "\n"))
  catch
    throw 'datasourced-spec: ' .. file .. ' is not valid JSON (' .. substitute(v:exception, '^Vim\S*:', '', '') .. ')'
  endtry
  if type(spec) != v:t_dict
    throw 'datasourced-spec: ' .. file .. ': a list spec is a JSON object'
  endif
  var variables = get(g:, 'datasourced_variables', {})
  return Substitute(spec, type(variables) == v:t_dict ? variables : {}, file)
enddef

# Members of a one-source spec (the shorthand) that are the list's, not the source's.
const DISPLAY_MEMBERS = ['title', 'columns', 'show', 'maxPages', 'search']

# The sources (children first), the one shown, the title and columns of a spec.
def Normalize(spec: dict<any>, file: string): dict<any>
  var sources: list<any>
  if has_key(spec, 'sources')
    if type(spec.sources) != v:t_list || empty(spec.sources)
      throw 'datasourced-spec: ' .. file .. ': "sources" must be a non-empty list of createSource params'
    endif
    sources = spec.sources
  elseif has_key(spec, 'name') && has_key(spec, 'kind')
    sources = [filter(copy(spec), (k, _) => index(DISPLAY_MEMBERS, k) < 0)]
  else
    throw 'datasourced-spec: ' .. file .. ': a list spec has "sources" (createSource params), or "name" and "kind" for one source'
  endif
  var names = []
  var n = 0
  for params in sources
    if type(params) != v:t_dict || type(get(params, 'name', 0)) != v:t_string || params.name == ''
      throw printf('datasourced-spec: %s: sources[%d] needs a "name"', file, n)
    endif
    add(names, params.name)
    n += 1
  endfor
  var show = get(spec, 'show', names[-1])
  if type(show) == v:t_list && !empty(show)
    show = show[0]  # one list buffer per spec: the first name
  endif
  if type(show) != v:t_string || index(names, show) < 0
    throw printf('datasourced-spec: %s: "show" must name one of the sources (%s), got %s', file, join(names, ', '), json_encode(get(spec, 'show', '')))
  endif
  var columns = get(spec, 'columns', [])
  if type(columns) != v:t_list
    throw 'datasourced-spec: ' .. file .. ': "columns" must be a list of keys or {"key": ..., "width": ...}'
  endif
  var title = get(spec, 'title', show)
  var search = get(spec, 'search', {})
  if type(search) != v:t_dict
    throw 'datasourced-spec: ' .. file .. ': "search" must be an object: {"parameter" (or "variable"), "source", "debounceMilliseconds", "keyPaths"}'
  endif
  for member in keys(search)
    if index(['parameter', 'variable', 'source', 'debounceMilliseconds', 'keyPaths'], member) < 0
      throw printf('datasourced-spec: %s: search.%s is not a member of search (parameter, variable, source, debounceMilliseconds, keyPaths)', file, member)
    endif
  endfor
  if has_key(search, 'parameter') && has_key(search, 'variable')
    throw printf('datasourced-spec: %s: search has both parameter and variable: a search sets a query parameter, or a GraphQL source''s variable', file)
  endif
  return {sources: sources, show: show, columns: columns, title: type(title) == v:t_string ? title : show, search: search}
enddef

def NewView(buf: number, normalized: dict<any>): dict<any>
  return {buf: buf, source: normalized.show, title: normalized.title, columns: normalized.columns,
    create: normalized.sources, conn: {}, sections: [], line_count: 0, notice: [],
    known: false, revision: -1, version: 0, reading: false, reloading: false, reload_again: false,
    reload_callback: null_function, detached: false, loaded: false, failure: {}, resyncs: 0, last_resync: '',
    cursor_lines: {}, user_moved: {}, state: 'starting', status: 'starting', stale: {}, under: {},
    identity_key: '', show_headers: false, kind: '', setup_failed: false,
    lazy: false, owed: 0, spare: 0, pay_timer: 0, pay_due: 0.0, loaded_objects: 0, reading_visible: false, display_after_read: false, display_timer: 0,
    display_debounce_ms: lazy.DisplayDebounce(), display_far_at_once: true,
    search: normalized.search, filter: {}, matches_read: -1, reading_matches: false, prompting: false, searched: '', remote_sources: {},
    action_source: '', actions: {}, action_key: '', mutations: {}}
enddef

# The buffer of a list titled `title`: the one already showing it, else a new one.
def ListBuffer(title: string): number
  for view in values(core.Views())
    if view.title == title && bufexists(view.buf)
      view.detached = true  # opened again (say, after fixing the spec): started anew
      return view.buf
    endif
  endfor
  var name = 'datasourced://' .. title
  var buf = bufadd(name)
  setbufvar(buf, '&buftype', 'nofile')
  bufload(buf)
  setbufvar(buf, '&bufhidden', 'hide')
  setbufvar(buf, '&swapfile', 0)
  setbufvar(buf, '&undolevels', -1)  # no undo: a million lines written are not kept twice
  setbufvar(buf, '&buflisted', 1)
  setbufvar(buf, '&modifiable', 0)
  setbufvar(buf, '&filetype', 'datasourced')
  for group in render.PropTypes()
    if empty(prop_type_get(group, {bufnr: buf}))
      prop_type_add(group, {bufnr: buf, highlight: group})
    endif
  endfor
  execute 'augroup datasourced_list_' .. buf
    autocmd!
    execute 'autocmd CursorMoved <buffer=' .. buf .. '> windows.OnCursorMoved(' .. buf .. ')'
    execute 'autocmd BufWinEnter <buffer=' .. buf .. '> windows.SetWindowOptions() | windows.ShowAgain(' .. buf .. ')'
    execute 'autocmd BufWinLeave <buffer=' .. buf .. '> windows.LowerLastStatus(' .. buf .. ')'
    execute 'autocmd BufWipeout <buffer=' .. buf .. '> windows.OnWipeout(' .. buf .. ')'
  augroup END
  return buf
enddef

def SetKeymaps(buf: number)
  for [lhs, action] in items(core.Keymaps())
    if type(action) != v:t_string || action == ''
      continue
    endif
    if !has_key(core.Actions(), action)
      core.Notify(printf('g:datasourced_keymaps[%s]: no action "%s" (one of %s)', string(lhs), action, join(sort(keys(core.Actions())), ', ')))
      continue
    endif
    execute 'nmap <buffer> <nowait> <silent> ' .. lhs .. ' <Plug>(datasourced-' .. action .. ')'
  endfor
enddef

# Opens a list from a parsed spec in the current window (a split when the current
# buffer cannot be left). Returns the buffer, or 0.
export def OpenSpec(spec: dict<any>, file = 'the spec'): number
  var normalized: dict<any>
  try
    normalized = Normalize(spec, file)
  catch /^datasourced-spec: /
    core.Notify(substitute(v:exception, '^datasourced-spec: ', '', ''))
    return 0
  endtry
  var buf = ListBuffer(normalized.title)
  var before = get(core.Views(), string(buf), {})
  var view = NewView(buf, normalized)
  extend(core.Views(), {[string(buf)]: view})
  if bufnr() != buf
    try
      execute 'buffer ' .. buf
    catch
      execute 'sbuffer ' .. buf
    endtry
  endif
  windows.SetWindowOptions()
  SetKeymaps(buf)
  setbufvar(buf, 'datasourced_source', view.source)
  view.cursor_lines[string(win_getid())] = line('.')
  if !empty(before)
    # Opened again (say, after the spec changed): the sources only the list used that
    # the spec changes go first, so that they are created anew, with its parameters.
    windows.ReleaseSources(before, normalized.sources)
  endif
  StartView(view)
  return buf
enddef

export def Open(path: string): number
  if trim(path) == ''
    core.Notify('open needs a spec file (JSON): :Datasourced open FILE')
    return 0
  endif
  try
    return OpenSpec(ReadSpec(trim(path)), expand(trim(path)))
  catch /^datasourced-spec: /
    core.Notify(substitute(v:exception, '^datasourced-spec: ', '', ''))
  endtry
  return 0
enddef

def DaemonMissingNotice(problem: string): list<string>
  return [
    render.Texts().error .. 'the daemon did not start: ' .. problem,
    '',
    '  Set g:datasourced_cmd to its command line, in your vimrc:',
    '      let g:datasourced_cmd = [''/path/to/datasourced'']',
    '  then :Datasourced refresh. (`swift build` in the datasourced repository',
    '  makes .build/debug/datasourced.) :Datasourced health checks it.',
  ]
enddef

# Creates the sources the daemon lacks, then reads and loads the list; also what
# starts a list again after its daemon exited or could not start.
export def StartView(view: dict<any>)
  var conn = rpc.Connection()
  view.conn = {}
  view.sections = []
  buflines.Edit(view, 0, -1, [])
  if has_key(conn, 'problem')
    buflines.SetNotice(view, DaemonMissingNotice(conn.problem))
    buflines.SetStatus(view, 'error: the daemon did not start (see g:datasourced_cmd)')
    core.Notify(conn.problem)
    core.Fire('DatasourcedFailed', view, conn.problem)
    return
  endif
  if !empty(view.filter)
    # A new daemon has no filtered source: the list shows its own source again.
    view.source = view.filter.base
    view.filter = {}
  endif
  view.conn = conn
  view.known = false
  view.revision = -1
  view.version += 1
  view.reading = false
  view.reloading = false
  view.reload_again = false
  view.loaded = false
  view.failure = {}
  view.stale = {}
  view.under = {[view.source]: true}
  view.remote_sources = {}
  buflines.SetNotice(view, [])
  buflines.SetStatus(view, 'starting')
  rpc.Request(conn, 'listSources', {}, (err, existing) => {
    if view.detached || view.conn isnot conn
      return
    endif
    if type(err) == v:t_dict
      buflines.SetStatus(view, 'error: ' .. render.RpcErrorText(err))
      buflines.SetNotice(view, [render.Texts().error .. render.RpcErrorText(err)])
      return
    endif
    var have: dict<any> = {}
    for s in existing
      have[s.name] = true
    endfor
    var missing = filter(copy(view.create), (_, p) => !has_key(have, p.name))
    for params in view.create
      if has_key(have, params.name) && has_key(conn.created, params.name) && conn.created[params.name] != params
        core.Notify(params.name .. ': another list uses this source, made with other parameters; the list shows that one (close the other lists to change it)', 'warning')
      endif
    endfor
    if empty(missing)
      view.setup_failed = false
      ReadAndLoad(view)
      return
    endif
    var state: dict<any> = {answers: 0, failed: false}
    for params in missing
      Create(view, conn, params, state, len(missing))
    endfor
  })
enddef

def Create(view: dict<any>, conn: dict<any>, params: dict<any>, state: dict<any>, total: number)
  rpc.Request(conn, 'createSource', params, (err, _) => {
    state.answers += 1
    if type(err) == v:t_dict && !state.failed
      # The first refusal is the one to read; later ones usually follow from it.
      state.failed = true
      view.setup_failed = true
      var text = printf('the daemon refused source "%s": %s', params.name, render.RpcErrorText(err))
      buflines.SetStatus(view, 'error: ' .. render.RpcErrorText(err))
      buflines.SetNotice(view, [render.Texts().error .. text])
      core.Notify(text)
      core.Fire('DatasourcedFailed', view, text)
    elseif type(err) != v:t_dict
      conn.created[params.name] = params
    endif
    if state.answers == total && !state.failed
      view.setup_failed = false
      ReadAndLoad(view)
    endif
  })
enddef

# Reads the list, then loads what needs it: remote and paginated sources under it that
# never loaded on this daemon, or whose last load failed or was cancelled (a list opened
# on sources already loaded shows their rows and pages as they are).
def ReadAndLoad(view: dict<any>)
  var conn = view.conn
  model.Reload(view, (description) => {
    var walk: dict<any> = {seen: {}, outstanding: 0, unloaded: [], remote: 0, kinds: {}, sources: {}}
    Visit(view, conn, view.source, walk, description)
  })
enddef

def Visit(view: dict<any>, conn: dict<any>, name: string, walk: dict<any>, shown: dict<any>)
  if has_key(walk.seen, name)
    return
  endif
  walk.seen[name] = true
  walk.outstanding += 1
  rpc.Request(conn, 'describeSource', {source: name}, (err, description) => {
    if type(err) != v:t_dict && type(description) == v:t_dict
      view.under[name] = true
      actions.Note(view, name, description)
      walk.kinds[name] = description.kind
      walk.sources[name] = get(description, 'source', '')
      if description.kind == 'remote' || description.kind == 'paginated'
        view.remote_sources[name] = true
        walk.remote += 1
        var state = get(conn.load_state, name, '')
        if state == '' || state == 'failed'
          add(walk.unloaded, name)
        endif
        buflines.SetFreshness(view, name, core.IsTrue(get(description, 'stale', false)), get(description, 'cachedAt', v:null))
      endif
      var children = get(description, 'children', get(description, 'sources', has_key(description, 'source') ? [description.source] : []))
      for child in type(children) == v:t_list ? children : []
        if type(child) == v:t_string
          Visit(view, conn, child, walk, shown)
        endif
      endfor
    endif
    walk.outstanding -= 1
    if walk.outstanding > 0 || view.detached || view.conn isnot conn
      return
    endif
    ShowHeadersBelowFilters(view, walk.kinds, walk.sources)
    if empty(walk.unloaded)
      AdoptState(view, shown)
    elseif len(walk.unloaded) == walk.remote
      model.Send(view, 'fetchData', {})
    else
      for source in walk.unloaded
        model.Send(view, 'fetchData', {source: source})
      endfor
    endif
  })
enddef

# A filtered source the spec shows has section headers when the source under its
# filters is sectioned or multi (`kinds` and `sources`: each source's kind and child).
def ShowHeadersBelowFilters(view: dict<any>, kinds: dict<any>, sources: dict<any>)
  if get(kinds, view.source, '') != 'filtered' || !empty(view.filter)
    return
  endif
  var name = view.source
  var seen: dict<any> = {}
  while get(kinds, name, '') == 'filtered' && !has_key(seen, name)
    seen[name] = true
    name = core.Str(get(sources, name, ''))
  endwhile
  var headers = index(['sectioned', 'multi'], get(kinds, name, '')) >= 0
  if headers != view.show_headers
    view.show_headers = headers
    buflines.Edit(view, 0, -1, buflines.AllItems(view))
  endif
enddef

def AdoptState(view: dict<any>, description: dict<any>)
  if core.IsTrue(get(description, 'isFetching', false))
    view.loaded = false
    buflines.SetStatus(view, 'loading')
  else
    view.loaded = true
    events.UpdateLoadedStatus(view)
    core.Fire('DatasourcedLoaded', view)
  endif
enddef
