vim9script
# datasourced.vim: list buffers over the data sources of a datasourced daemon.
#
# The daemon is a job on Vim's own JSON-RPC channel mode ("lsp"): Vim does the
# Content-Length framing, numbers the requests and calls each answer's callback; the
# daemon's notifications come to the channel callback, in the order it wrote them.
# Everything here is script-local; the plugin/ file defines the one command, the <Plug>
# maps and the highlight links. See :help datasourced.

const VERSION = '0.1.0'

# Placeholder rows and headers as lines, with their highlight groups.
const TEXTS = {
  loading: '  ⋯ loading…',
  noResults: '  (no results)',
  error: '  ✗ error: ',
  pending: '  …',
  unloaded: '  … row ',
  header: '## ',
}
const GROUPS = {
  header: 'DatasourcedSection',
  loading: 'DatasourcedLoading',
  noResults: 'DatasourcedNoResults',
  error: 'DatasourcedError',
  pending: 'DatasourcedLoading',
  unloaded: 'DatasourcedUnloaded',
}
const PROP_TYPES = ['DatasourcedSection', 'DatasourcedLoading', 'DatasourcedNoResults', 'DatasourcedError', 'DatasourcedMatch']
# The characters a filter's query matched (protocol 1.4's match positions).
const MATCH_GROUP = 'DatasourcedMatch'

# Lists of counted placeholders (protocol 1.5) are read lazily: a list of 1,000,000 rows
# has all its lines, but only the rows near the windows' view are read from the daemon.
# A row not read yet is this one shared entry (entries are replaced, never changed in
# place), shown as an unloaded row ("  … row N") until it is read. Unloaded rows are
# highlighted by a syntax match, not a text property per line: a million would cost.
const UNREAD: dict<any> = {value: {'$placeholder': 'unloaded'}, pending: false, unread: true}
# How long the cursor rests before a lazy list reads what is shown and tells the daemon
# that an unloaded row is displayed: keys held down (j, <C-d>) ask nothing on the way.
const DISPLAY_DEBOUNCE_MS = 80

# What each action does: keymaps, <Plug>(datasourced-ACTION) and the g? help.
const ACTIONS = {
  select: 'the row: g:datasourced_on_select (default: its JSON); an error row retries, a loading row loads',
  refresh: 'load again (a paginated source from page one); starts the daemon again if it is gone',
  retry: 'after an error: the failed page again, or the whole load',
  cancel: 'cancel the load in flight',
  close: 'close the list',
  filter: 'filter the rows as you type (<CR> keeps the filter, <Esc> clears it)',
  help: 'show these keys',
}
const DEFAULT_KEYMAPS = {'<CR>': 'select', r: 'refresh', R: 'retry', '<C-c>': 'cancel', q: 'close', '/': 'filter', 'g?': 'help'}
const SUBCOMMANDS = ['open', 'refresh', 'retry', 'cancel', 'close', 'filter', 'search', 'sources', 'health', 'log']

# The statusline of list windows: the name first, so that a long state is cut, not it.
const STATUSLINE = "%f  %<%{get(b:, 'datasourced_status', '')}%= %l/%L "

var connections: dict<any> = {}  # the command line, joined -> connection
var views: dict<any> = {}        # string(buffer number) -> view
var messages: list<any> = []     # what was echoed, for :messages-like checks in tests
var last_event: dict<any> = {}   # what the last User autocommand was about

# Settings -----------------------------------------------------------------------------

def Cmd(): list<string>
  var cmd = get(g:, 'datasourced_cmd', ['datasourced'])
  if type(cmd) == v:t_string
    return [cmd]
  endif
  return type(cmd) == v:t_list ? mapnew(cmd, (_, v) => type(v) == v:t_string ? v : string(v)) : []
enddef

def Keymaps(): dict<any>
  var keymaps = copy(DEFAULT_KEYMAPS)
  var given = get(g:, 'datasourced_keymaps', {})
  if type(given) == v:t_dict
    extend(keymaps, given)
  endif
  return keymaps
enddef

# Messages -------------------------------------------------------------------------------

# One line, cut to `width` display cells with "…".
def Fit(text: string, width: number): string
  if strdisplaywidth(text) <= width
    return text
  endif
  var cut = text
  while strdisplaywidth(cut) > width - 1 && cut != ''
    cut = strcharpart(cut, 0, strchars(cut) - 1)
  endwhile
  return cut .. '…'
enddef

def OneLine(text: string): string
  return substitute(text, '[\r\n]\+', ' ', 'g')
enddef

# Echoes "datasourced: TEXT", cut to fit the command line (a longer message would ask
# for Enter). level: 'error', 'warning' or 'info'.
def Notify(text: string, level = 'error')
  var line = 'datasourced: ' .. OneLine(text)
  add(messages, {text: line, level: level})
  if len(messages) > 200
    remove(messages, 0)
  endif
  var group = level == 'error' ? 'ErrorMsg' : level == 'warning' ? 'WarningMsg' : 'None'
  execute 'echohl ' .. group
  echomsg Fit(line, max([20, &columns - 12]))
  echohl None
enddef

def Fire(event: string, view: dict<any>, detail = '')
  last_event = {event: event, buf: view.buf, title: view.title, source: view.source, status: view.status, detail: detail}
  if exists('#User#' .. event)
    execute 'doautocmd <nomodeline> User ' .. event
  endif
enddef

# A JSON-RPC error as people read it: no code number, no "Invalid params" prefix.
def RpcErrorText(err: any): string
  if type(err) != v:t_dict
    return string(err)
  endif
  var text = type(get(err, 'message', '')) == v:t_string ? err.message : string(get(err, 'message', ''))
  text = substitute(text, '^Invalid params: ', '', '')
  return OneLine(text != '' ? text : 'unknown error')
enddef

# What failed, for people: where (unless short), what happened, what the server said.
def ErrorText(failure: any, short = false): string
  if type(failure) != v:t_dict
    return 'unknown error'
  endif
  var text = Str(get(failure, 'message', get(failure, 'kind', 'unknown error')))
  if get(failure, 'kind', '') == 'cancelled'
    # The protocol's words name methods; a user asked to cancel, or loaded again.
    if text =~ 'superseded'
      text = 'replaced by a new load'
    elseif text =~ 'shutdown'
      text = 'cancelled: the daemon is stopping'
    elseif text =~ 'destroySource'
      text = 'cancelled: the list was closed'
    else
      text = 'load cancelled'
    endif
  endif
  var url = get(failure, 'url', '')
  var final = get(failure, 'finalURL', '')
  if type(final) == v:t_string && final != '' && final != url
    url = type(url) == v:t_string && url != '' ? url .. ' → ' .. final : final
  endif
  if !short && get(failure, 'kind', '') != 'cancelled' && type(url) == v:t_string && url != ''
    text = url .. ': ' .. text
  endif
  var said = get(failure, 'serverMessage', '')
  if type(said) != v:t_string || said == ''
    var raw = get(failure, 'body', '')
    var body = type(raw) == v:t_string ? trim(substitute(raw, '\_s\+', ' ', 'g')) : ''
    said = body != '' && strlen(body) <= 200 && body !~ '^<' ? body : ''
  endif
  if said != '' && stridx(text, said) < 0
    text ..= ': ' .. said
  endif
  var retry = get(failure, 'retryAfterSeconds', '')
  if type(retry) == v:t_number || type(retry) == v:t_float
    text ..= printf(' (retry after %d s)', float2nr(retry * 1.0))
  endif
  return OneLine(text)
enddef

# Values as text ---------------------------------------------------------------------------

def Str(value: any): string
  return type(value) == v:t_string ? value : json_encode(value)
enddef

def IsTrue(value: any): bool
  return type(value) == v:t_bool && value
enddef

def IsNull(value: any): bool
  return type(value) == v:t_none
enddef

def IsPlaceholder(value: any): bool
  return type(value) == v:t_dict && has_key(value, '$placeholder')
enddef

def PlaceholderKind(value: any): string
  return IsPlaceholder(value) ? Str(value['$placeholder']) : ''
enddef

def AtKeyPath(value: any, path: string): any
  var found = value
  for part in split(path, '\.')
    if type(found) != v:t_dict || !has_key(found, part)
      return v:none
    endif
    found = found[part]
  endfor
  return found
enddef

def Pad(text: string, width: number): string
  var fitted = Fit(text, width)
  return fitted .. repeat(' ', width - strdisplaywidth(fitted))
enddef

# An object as "key: value" pairs, the identity key first, then the others sorted.
def DefaultFormat(value: any, identity_key: string): string
  if type(value) != v:t_dict
    return Str(value)
  endif
  var keys = sort(filter(keys(value), (_, k) => k != identity_key))
  if identity_key != '' && has_key(value, identity_key)
    insert(keys, identity_key)
  endif
  return join(mapnew(keys, (_, k) => k .. ': ' .. Str(value[k])), '  ')
enddef

# Columns: key paths, or {key, width}; two spaces apart, the last one not padded.
def ColumnsFormat(value: any, columns: list<any>): string
  if type(value) != v:t_dict
    return Str(value)
  endif
  var cells = []
  var n = 0
  for column in columns
    n += 1
    var path = type(column) == v:t_dict ? Str(get(column, 'key', '')) : Str(column)
    var width = type(column) == v:t_dict ? get(column, 'width', 0) : 0
    var found = AtKeyPath(value, path)
    var text = IsNull(found) ? '' : OneLine(Str(found))
    if type(width) == v:t_number && width > 0 && n < len(columns)
      text = Pad(text, width)
    endif
    add(cells, text)
  endfor
  return substitute(join(cells, '  '), '\s\+$', '', '')
enddef

# JSON over several lines, members sorted: what <CR> shows of a row.
def Pretty(value: any, indent = '', prefix = '', suffix = ''): list<string>
  var is_dict = type(value) == v:t_dict
  if (is_dict || type(value) == v:t_list) && !empty(value)
    var lines = [indent .. prefix .. (is_dict ? '{' : '[')]
    var keys = is_dict ? sort(keys(value)) : range(len(value))
    var n = 0
    for k in keys
      n += 1
      var member = is_dict ? json_encode(k) .. ': ' : ''
      extend(lines, Pretty(value[k], indent .. '  ', member, n < len(keys) ? ',' : ''))
    endfor
    add(lines, indent .. (is_dict ? '}' : ']') .. suffix)
    return lines
  endif
  return [indent .. prefix .. json_encode(value) .. suffix]
enddef

# The text of an unloaded row at item `index` (0-based; shown from 1, as lines are).
def UnloadedText(index: number): string
  return TEXTS.unloaded .. (index + 1)
enddef

# The lines of `count` unloaded rows from item `first`: one string each, no list pairs
# (a counted list taking its size makes a million of them).
def UnloadedLines(first: number, count: number): list<string>
  # Joined and split again: no Vim script runs per line (0.8 s for a million, not 1.2).
  return count <= 0 ? [] : split(TEXTS.unloaded .. join(range(first + 1, first + count), "\n" .. TEXTS.unloaded), "\n")
enddef

# The text and group of a row (`index`: its item, for an unloaded row read as UNREAD).
# Unloaded rows get no text property: a syntax match highlights them (see UNREAD).
def RowItem(view: dict<any>, entry: dict<any>, index = -1): list<string>
  if get(entry, 'pending', false)
    return [TEXTS.pending, GROUPS.pending]
  endif
  var value = entry.value
  var kind = PlaceholderKind(value)
  if kind == 'unloaded'
    var at = get(value, 'index', index)
    return [UnloadedText(type(at) == v:t_number ? at : index), '']
  elseif kind == 'error'
    return [TEXTS.error .. ErrorText(get(value, 'error', {})), GROUPS.error]
  elseif kind != ''
    return [get(TEXTS, kind, '  <' .. kind .. '>'), get(GROUPS, kind, '')]
  endif
  try
    var text = empty(view.columns) ? DefaultFormat(value, view.identity_key) : ColumnsFormat(value, view.columns)
    return [OneLine(text), '']
  catch
    return ['  <format failed: ' .. OneLine(v:exception) .. '>', GROUPS.error]
  endtry
enddef

def HeaderItem(section: dict<any>): list<string>
  if get(section, 'title_pending', false)
    return [TEXTS.header .. '…', GROUPS.header]
  endif
  return [TEXTS.header .. OneLine(Str(section.title)), GROUPS.header]
enddef

# "[cached 16:41]" for an RFC 3339 UTC time (local time; the date when not today).
def StaleMarker(cached_at: any): string
  if type(cached_at) != v:t_string || cached_at !~ '^\d\+-\d\+-\d\+T\d\+:\d\+:\d\+'
    return '[cached]'
  endif
  var seconds = strptime('%Y-%m-%dT%H:%M:%S', matchstr(cached_at, '^[0-9T:-]\+'))
  if seconds == 0
    return '[cached]'
  endif
  # strptime read it as local time; it was UTC: add this zone's offset.
  var zone = strftime('%z', seconds)
  var offset = (str2nr(zone[1 : 2]) * 60 + str2nr(zone[3 : 4])) * 60
  seconds += zone[0] == '-' ? -offset : offset
  var today = strftime('%Y-%m-%d') == strftime('%Y-%m-%d', seconds)
  return '[cached ' .. strftime(today ? '%H:%M' : '%Y-%m-%d %H:%M', seconds) .. ']'
enddef

# The daemon ----------------------------------------------------------------------------

def AddLog(conn: dict<any>, line: string)
  add(conn.log, line)
  if len(conn.log) > 1000
    remove(conn.log, 0)
  endif
enddef

# Sends a request; Callback(err, result) runs when it is answered (err: v:null or the
# error dict). A request that cannot be sent is answered with an error, later.
def Request(conn: dict<any>, method: string, params: dict<any>, Callback: func)
  conn.requests[method] = get(conn.requests, method, 0) + 1
  if conn.exited || ch_status(conn.channel) != 'open'
    timer_start(0, (_) => Answer(method, Callback, {error: {message: 'the daemon is not running'}}))
    return
  endif
  try
    ch_sendexpr(conn.channel, {method: method, params: params}, {callback: (_, response) => Answer(method, Callback, response)})
  catch
    var problem = v:exception
    timer_start(0, (_) => Answer(method, Callback, {error: {message: 'cannot send ' .. method .. ': ' .. problem}}))
  endtry
enddef

def Answer(method: string, Callback: func, response: any)
  var err: any = v:null
  var result: any = v:null
  if type(response) != v:t_dict || empty(response)
    err = {message: 'no answer to ' .. method}
  elseif has_key(response, 'error')
    err = response.error
  else
    result = get(response, 'result', v:null)
  endif
  try
    Callback(err, result)
  catch
    Notify(method .. ' answer failed: ' .. v:exception .. ' (' .. v:throwpoint .. ')')
  endtry
enddef

def SendNotification(conn: dict<any>, method: string)
  if !conn.exited && ch_status(conn.channel) == 'open'
    try
      ch_sendexpr(conn.channel, {method: method, params: {}})
    catch
    endtry
  endif
enddef

def Executable(cmd: list<string>): string
  if empty(cmd) || cmd[0] == ''
    return 'g:datasourced_cmd must be a list like [''/path/to/datasourced''], got ' .. string(get(g:, 'datasourced_cmd', v:null))
  endif
  if !executable(cmd[0])
    return printf('cannot start %s: not an executable (g:datasourced_cmd is %s)', cmd[0], string(cmd))
  endif
  return ''
enddef

# Spawns the daemon and sends initialize. Returns the connection, or {problem: TEXT}.
def Spawn(cmd: list<string>, OnNotification: func, OnExit: func): dict<any>
  var problem = Executable(cmd)
  if problem != ''
    return {problem: problem}
  endif
  var conn: dict<any> = {cmd: cmd, log: [], exited: false, stopping: false, exit_code: -1,
    initialized: false, protocol_version: '', capabilities: {}, server_info: {},
    load_state: {}, created: {}, requests: {}, credentials: {}}
  var job: job
  try
    job = job_start(cmd, {in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl', stoponexit: 'term',
      callback: (_, message) => OnNotification(conn, message),
      err_cb: (_, line) => AddLog(conn, line),
      exit_cb: (_, code) => OnExit(conn, code)})
  catch
    return {problem: 'cannot start ' .. cmd[0] .. ': ' .. v:exception}
  endtry
  if job_status(job) != 'run'
    return {problem: 'cannot start ' .. join(cmd) .. ' (job ' .. job_status(job) .. ')'}
  endif
  conn.job = job
  conn.channel = job_getchannel(job)
  conn.pid = job_info(job).process
  Request(conn, 'initialize', {clientInfo: {name: 'datasourced.vim', version: VERSION}, capabilities: {changeValues: true, changeRanges: true}},
    (err, result) => Initialized(conn, err, result))
  return conn
enddef

def Initialized(conn: dict<any>, err: any, result: any)
  if type(err) == v:t_dict
    Notify('the daemon refused initialize: ' .. RpcErrorText(err))
    return
  endif
  conn.initialized = true
  conn.server_info = get(result, 'serverInfo', {})
  conn.protocol_version = Str(get(result, 'protocolVersion', ''))
  conn.capabilities = type(get(result, 'capabilities', {})) == v:t_dict ? result.capabilities : {}
enddef

# Ends the daemon: shutdown, then exit; killed if it does not end. With `wait` (leaving
# Vim, when no callback will run any more) it blocks until the process has ended.
def StopConnection(conn: dict<any>, wait = false)
  for [id, c] in items(connections)
    if c is conn
      remove(connections, id)
    endif
  endfor
  if conn.stopping || conn.exited
    conn.stopping = true
    return
  endif
  conn.stopping = true
  if wait
    try
      ch_evalexpr(conn.channel, {method: 'shutdown', params: {}}, {timeout: 1000})
    catch
    endtry
    SendNotification(conn, 'exit')
    var start = reltime()
    while job_status(conn.job) == 'run' && reltimefloat(reltime(start)) < 1.0
      sleep 5m
    endwhile
    if job_status(conn.job) == 'run'
      job_stop(conn.job)
    endif
  else
    Request(conn, 'shutdown', {}, (_, _) => SendNotification(conn, 'exit'))
    timer_start(2000, (_) => job_status(conn.job) == 'run' ? job_stop(conn.job) : 0)
  endif
enddef

def OnDaemonMessage(conn: dict<any>, message: any)
  if type(message) != v:t_dict || has_key(message, 'id') || type(get(message, 'method', 0)) != v:t_string
    return
  endif
  var kind = matchstr(message.method, '^dataSource/\zs.*')
  var params = get(message, 'params', {})
  if kind == '' || type(params) != v:t_dict || type(get(params, 'source', 0)) != v:t_string
    return
  endif
  var source = params.source
  if kind == 'willLoadData'
    conn.load_state[source] = 'loading'
  elseif kind == 'finishedLoading'
    conn.load_state[source] = 'loaded'
  elseif kind == 'failedWithError'
    conn.load_state[source] = 'failed'
  endif
  var shown = false
  for view in ViewsOf(conn)
    if view.source == source || (kind == 'didChangeFreshness' && has_key(view.under, source))
      shown = shown || view.source == source
      try
        OnEvent(view, kind, params)
      catch
        Notify(message.method .. ' on ' .. view.source .. ' failed: ' .. v:exception .. ' (' .. v:throwpoint .. ')')
      endtry
    endif
  endfor
  if shown && kind == 'failedWithError' && AskCredentials(conn, source, get(params, 'error', {}))
    return  # the person is asked; their no says the failure
  endif
  if shown && kind == 'failedWithError'
    var failure = get(params, 'error', {})
    var cancelled = type(failure) == v:t_dict && get(failure, 'kind', '') == 'cancelled'
    Notify(source .. ': ' .. ErrorText(failure, true), cancelled ? 'warning' : 'error')
  endif
enddef

# Credentials ---------------------------------------------------------------------------
# A header value the daemon reads from its environment or a file ({"env": "GITHUB_TOKEN"},
# {"file": "~/.config/x/token"}) goes only to the origins the user allowed it for. A shown
# list whose load failed for want of that (kind credentialNotAllowed) asks the person,
# once however many lists wait on the same credential and origin; a yes is recorded by
# the daemon (allowCredential) and the lists waiting load again (fetchData).

# The credentials a failure lacked, its children's included (a multi source's failures),
# each once: {kind: 'env' | 'file', name, origin, key}.
export def CredentialRequests(failure: any): list<any>
  var found: list<any> = []
  var seen: dict<any> = {}
  var pending = [failure]
  while !empty(pending)
    var f = remove(pending, 0)
    if type(f) != v:t_dict
      continue
    endif
    var credential = get(f, 'credential', {})
    if get(f, 'kind', '') == 'credentialNotAllowed' && type(credential) == v:t_dict && type(get(f, 'origin', 0)) == v:t_string
      var kind = type(get(credential, 'env', 0)) == v:t_string ? 'env' : type(get(credential, 'file', 0)) == v:t_string ? 'file' : ''
      if kind != ''
        var key = kind .. "\n" .. credential[kind] .. "\n" .. f.origin
        if !has_key(seen, key)
          seen[key] = true
          add(found, {kind: kind, name: credential[kind], origin: f.origin, key: key})
        endif
      endif
    endif
    var failures = get(f, 'failures', [])
    if type(failures) == v:t_list
      extend(pending, mapnew(failures, (_, child) => type(child) == v:t_dict ? get(child, 'error', {}) : {}))
    endif
  endwhile
  return found
enddef

# "the environment variable GITHUB_TOKEN" or "the file ~/.config/x/token".
def CredentialWhat(request: dict<any>): string
  return (request.kind == 'env' ? 'the environment variable ' : 'the file ') .. request.name
enddef

# "Allow the daemon to send the environment variable GITHUB_TOKEN to https://api.github.com?"
export def CredentialQuestion(request: dict<any>): string
  return printf('Allow the daemon to send %s to %s?', CredentialWhat(request), request.origin)
enddef

# The key that loads a list again (what asks again after a no).
def RefreshKey(): string
  var mapped = sort(keys(filter(Keymaps(), (_, action) => action == 'refresh')))
  return empty(mapped) ? ':Datasourced refresh' : mapped[0]
enddef

# The person's answer: g:datasourced_confirm (the name of a function of yours, a
# popup_dialog() say, given the question) when set, else confirm(), No by default.
def Confirm(question: string): bool
  var Ask = get(g:, 'datasourced_confirm', '')
  if type(Ask) == v:t_string && Ask != ''
    # A global function's name, as a vimrc gives it; called from here it needs its g:.
    return !!call(Ask =~ '^g:\|^s:\|^<SNR>\|#' ? Ask : 'g:' .. Ask, [question])
  elseif type(Ask) == v:t_func
    return !!Ask(question)
  endif
  return confirm(question, "&Yes\n&No", 2, 'Question') == 1
enddef

# Asks about one credential (from a timer: not inside the notification's callback); a yes
# is sent to the daemon, then every source waiting on it loads again.
def AskCredential(conn: dict<any>, entry: dict<any>)
  timer_start(0, (_) => {
    if conn.exited || conn.stopping
      return
    endif
    var request = entry.request
    if !Confirm(CredentialQuestion(request))
      entry.state = 'declined'
      entry.sources = {}
      Notify(printf('%s not sent to %s: not allowed (%s asks again)', CredentialWhat(request), request.origin, RefreshKey()), 'warning')
      return
    endif
    entry.state = 'allowing'
    var params = {origin: request.origin}
    params[request.kind] = request.name
    Request(conn, 'allowCredential', params, (err, result) => {
      if type(err) == v:t_dict
        remove(conn.credentials, request.key)
        Notify('allowCredential: ' .. RpcErrorText(err))
        return
      endif
      entry.state = 'allowed'
      var answer = type(result) == v:t_dict ? result : {}
      Notify(printf('allowed %s to be sent to %s (recorded in %s)', CredentialWhat(request),
        Str(get(answer, 'origin', request.origin)), Str(get(answer, 'path', ''))), 'info')
      var waiting = sort(keys(entry.sources))
      entry.sources = {}
      for source in waiting
        Request(conn, 'fetchData', {source: source}, (fetch_err, _) => {
          if type(fetch_err) == v:t_dict
            Notify(source .. ': ' .. RpcErrorText(fetch_err))
          endif
        })
      endfor
    })
  })
enddef

# For a shown list's failure: asks about each credential it lacked that nobody was asked
# about yet, and has `source` load again after a yes. True while a question is open or a
# yes is being recorded for all of them (the failure is then not said); false when the
# person said no (until a refresh), or the credential was allowed and the load still
# failed: the failure is said as any other.
def AskCredentials(conn: dict<any>, source: string, failure: any): bool
  var requests = CredentialRequests(failure)
  if empty(requests)
    return false
  endif
  var waiting = true
  for request in requests
    if !has_key(conn.credentials, request.key)
      conn.credentials[request.key] = {state: 'asking', request: request, sources: {}}
      AskCredential(conn, conn.credentials[request.key])
    endif
    var entry = conn.credentials[request.key]
    if entry.state == 'asking' || entry.state == 'allowing'
      entry.sources[source] = true
    else
      waiting = false
      if entry.state == 'allowed'
        # Allowed, and still refused: said, not asked again at once (no loop); the next
        # failure asks again.
        remove(conn.credentials, request.key)
      endif
    endif
  endfor
  return waiting
enddef

# Forgets the noes said on this connection: the next failure for want of a credential
# asks again (refresh and retry, which the person asks for).
def ForgetDeclined(conn: dict<any>)
  if has_key(conn, 'credentials')
    filter(conn.credentials, (_, entry) => entry.state != 'declined')
  endif
enddef

def OnDaemonExit(conn: dict<any>, code: number)
  conn.exited = true
  conn.exit_code = code
  for [id, c] in items(connections)
    if c is conn
      remove(connections, id)
    endif
  endfor
  for view in ViewsOf(conn)
    SetStatus(view, 'daemon exited')
  endfor
  if conn.stopping
    return
  endif
  var said = empty(conn.log) ? '' : ': ' .. conn.log[-1]
  Notify(printf('the daemon exited (status %d%s); :Datasourced refresh starts it again', code, said))
enddef

# The running connection for g:datasourced_cmd, started on first use; {problem: TEXT}
# when it cannot start.
def Connection(): dict<any>
  var cmd = Cmd()
  var id = join(cmd, "\n")
  var conn = get(connections, id, {})
  if !empty(conn) && !conn.exited && !conn.stopping
    return conn
  endif
  conn = Spawn(cmd, OnDaemonMessage, OnDaemonExit)
  if !has_key(conn, 'problem')
    connections[id] = conn
  endif
  return conn
enddef

def ViewsOf(conn: dict<any>): list<any>
  return filter(values(views), (_, v) => get(v, 'conn', {}) is conn && !v.detached)
enddef

# Lines ---------------------------------------------------------------------------------

def SetStatus(view: dict<any>, state: string)
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
  return StaleMarker(sort(times)[0])
enddef

def SetFreshness(view: dict<any>, source: string, stale: bool, cached_at: any)
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
def Edit(view: dict<any>, first: number, last_given: number, items: list<any>)
  WriteLines(view, first, last_given, mapnew(items, (_, item) => item[0]), items)
enddef

# Edit for lines without highlights (unloaded rows): no [text, group] pair per line.
def EditLines(view: dict<any>, first: number, last_given: number, lines: list<string>)
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
    var notice = view.line_count == 0 ? mapnew(view.notice, (_, t) => [t, GROUPS.error]) : []
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

def SetNotice(view: dict<any>, lines: list<string>)
  view.notice = lines
  if view.line_count == 0
    Edit(view, 0, 0, [])
  endif
enddef

# Where our own edits left each window's cursor: the CursorMoved that follows is not a
# move of the user's.
def NoteCursors(view: dict<any>)
  for win in win_findbuf(view.buf)
    view.cursor_lines[string(win)] = line('.', win)
  endfor
enddef

# Whether section s (0-based) gets a header line: in sectioned and multi lists, unless
# it is titled null and holds only placeholders (a paginated source's trailing row).
def HeaderWanted(view: dict<any>, section: dict<any>): bool
  if !view.show_headers
    return false
  endif
  var pending = get(section, 'title_pending', false)
  if !pending && !IsNull(section.title)
    return true
  endif
  for entry in section.rows
    if get(entry, 'pending', false) || !IsPlaceholder(entry.value)
      return true
    endif
  endfor
  return pending && empty(section.rows)
enddef

def SectionLine(view: dict<any>, s: number): number
  var line = 0
  for i in range(s)
    var section = view.sections[i]
    line += (section.header ? 1 : 0) + len(section.rows)
  endfor
  return line
enddef

def RowLine(view: dict<any>, s: number, i: number): number
  return SectionLine(view, s) + (view.sections[s].header ? 1 : 0) + i
enddef

def SyncHeader(view: dict<any>, s: number)
  var section = view.sections[s]
  var wanted = HeaderWanted(view, section)
  if wanted == section.header
    return
  endif
  var line = SectionLine(view, s)
  if wanted
    Edit(view, line, line, [HeaderItem(section)])
  else
    Edit(view, line, line + 1, [])
  endif
  section.header = wanted
enddef

def AllItems(view: dict<any>): list<any>
  var items = []
  for section in view.sections
    section.header = HeaderWanted(view, section)
    if section.header
      add(items, HeaderItem(section))
    endif
    for entry in section.rows
      add(items, RowItem(view, entry))
    endfor
  endfor
  return items
enddef

# The daemon's [section, item] of a 1-based line; [] for a header or past the end.
def IndexPathAt(view: dict<any>, line: number): list<number>
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

def EntryAt(view: dict<any>, line: number): dict<any>
  var path = IndexPathAt(view, line)
  return empty(path) ? {} : view.sections[path[0]].rows[path[1]]
enddef

# Reading the list -----------------------------------------------------------------------

def Send(view: dict<any>, method: string, params: dict<any>, OnResult: func = null_function)
  var all = extend({source: view.source}, params)
  Request(view.conn, method, all, (err, result) => Sent(view, method, err, result, OnResult))
enddef

def Sent(view: dict<any>, method: string, err: any, result: any, OnResult: func)
  if type(err) == v:t_dict
    Notify(printf('%s: %s failed: %s', view.source, method, RpcErrorText(err)))
  elseif OnResult != null_function
    OnResult(result)
  endif
enddef

# Reads the layout and every row (describeSource, then allObjects) and redraws it all:
# when a list opens, and whenever the copy cannot be trusted. A list of counted
# placeholders reads the layout alone: its rows are read as they show (see UNREAD).
def Reload(view: dict<any>, Done: func = null_function)
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
  Request(conn, 'describeSource', {source: view.source}, (err, description) => {
    if view.conn isnot conn || view.detached
      view.reloading = false
      return
    endif
    if type(err) == v:t_dict
      view.reloading = false
      SetStatus(view, 'error: ' .. RpcErrorText(err))
      SetNotice(view, [TEXTS.error .. view.source .. ': ' .. RpcErrorText(err)])
      Notify(view.source .. ': ' .. RpcErrorText(err))
      return
    endif
    if Counted(description)
      FinishReload(view, description, v:null, get(description, 'revision', -1))
      return
    endif
    Request(conn, 'allObjects', {source: view.source, withRevision: true}, (read_err, answer) => {
      if view.conn isnot conn || view.detached
        view.reloading = false
        return
      endif
      if type(read_err) == v:t_dict
        view.reloading = false
        Notify(view.source .. ': allObjects failed: ' .. RpcErrorText(read_err))
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
    return get(placeholders, 'requested', '') == 'counted' || IsTrue(get(placeholders, 'inForce', false))
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
    SetFreshness(view, view.source, IsTrue(get(description, 'stale', false)), get(description, 'cachedAt', v:null))
  endif
  view.lazy = type(objects) != v:t_list
  var loaded = get(description, 'numberOfObjects', 0)
  view.loaded_objects = type(loaded) == v:t_number ? loaded : 0
  var sections = []
  var next = 0
  var s = 0
  for count in description.counts
    var rows = []
    if view.lazy
      rows = repeat([UNREAD], count)
    elseif count > 0
      rows = mapnew(objects[next : next + count - 1], (_, v) => ({value: v, pending: false}))
    endif
    next += count
    add(sections, {title: description.sectionTitles[s], title_pending: false, header: false, rows: rows})
    s += 1
  endfor
  view.sections = sections
  if view.lazy && len(sections) == 1 && !HeaderWanted(view, sections[0])
    EditLines(view, 0, -1, UnloadedLines(0, len(sections[0].rows)))
  else
    Edit(view, 0, -1, AllItems(view))
  endif
  UpdateLoadedStatus(view)
  if view.lazy
    view.display_after_read = true  # a cursor on an unloaded row (after a jump) shows it
    ReadVisible(view)
  endif
  var Callback = get(view, 'reload_callback', null_function)
  view.reload_callback = null_function
  if Callback != null_function
    Callback(description)
  endif
enddef

def Resync(view: dict<any>, reason: string)
  view.resyncs += 1
  view.last_resync = reason
  Reload(view)
enddef

# Change sets ----------------------------------------------------------------------------

def OnChange(view: dict<any>, params: dict<any>)
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
  NoteCursors(view)
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
    if move.from[0] >= len(view.sections) || move.from[1] >= len(view.sections[move.from[0]].rows)
      throw 'moved.from out of range'
    endif
    if !has_key(removals, string(move.from[0]))
      removals[string(move.from[0])] = []
    endif
    add(removals[string(move.from[0])], [move.from[1], 1])
    moved_entries[Key(move.to[0], move.to[1])] = view.sections[move.from[0]].rows[move.from[1]]
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
      var first = SectionLine(view, s)
      Edit(view, first, first + (section.header ? 1 : 0) + len(section.rows), [])
      remove(view.sections, s)
      continue
    endif
    for run in sort(get(removals, string(s), []), (a, b) => b[0] - a[0])
      var [i, count] = run
      if i + count > len(section.rows)
        throw 'deleted out of range'
      endif
      var line = RowLine(view, s, i)
      Edit(view, line, line + count, [])
      remove(section.rows, i, i + count - 1)
    endfor
  endfor

  # 2. New coordinates, top down: new sections, their headers and titles to come.
  for s in sort(copy(get(changes, 'insertedSections', [])), 'n')
    if s > len(view.sections)
      throw 'insertedSections out of range'
    endif
    insert(view.sections, {title: v:null, title_pending: true, header: false, rows: []}, s)
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
    if s >= len(view.sections) || first > len(view.sections[s].rows)
      throw 'inserted row out of range'
    endif
    var rows = view.sections[s].rows
    var entries: list<any>
    if from < 0
      entries = [moved_entries[Key(s, first)]]
    elseif type(inserted_values) == v:t_list
      entries = mapnew(inserted_values[from : from + count - 1], (_, v) => ({value: v, pending: false}))
    elseif view.lazy
      entries = repeat([UNREAD], count)  # read when they show
    else
      entries = mapnew(range(count), (_, _) => ({value: v:null, pending: true}))
    endif
    if first == len(rows)
      extend(rows, entries)
    else
      extend(rows, entries, first)
    endif
    var line = RowLine(view, s, first)
    if from >= 0 && type(inserted_values) != v:t_list && view.lazy
      EditLines(view, line, line, UnloadedLines(first, count))
    else
      Edit(view, line, line, mapnew(entries, (k, entry) => RowItem(view, entry, first + k)))
    endif
  endfor

  # 4. Updated rows keep their line.
  var updated_values = get(values, 'updated', 0)
  var u = 0
  for [s, first, count] in Runs(get(changes, 'updated', []))
    if s >= len(view.sections) || first + count > len(view.sections[s].rows)
      throw 'updated out of range'
    endif
    var rows = view.sections[s].rows
    for i in range(first, first + count - 1)
      if type(updated_values) == v:t_list
        rows[i] = {value: updated_values[u], pending: false}
      elseif view.lazy
        rows[i] = UNREAD  # read again if it shows
      else
        rows[i] = {value: v:null, pending: true}
      endif
      u += 1
    endfor
    if type(updated_values) == v:t_list || view.lazy
      var line = RowLine(view, s, first)
      Edit(view, line, line + count, mapnew(rows[first : first + count - 1], (k, entry) => RowItem(view, entry, first + k)))
    endif
  endfor

  # 5. Header lines where wanted now.
  for s in range(len(view.sections))
    SyncHeader(view, s)
  endfor
enddef

# Reads what the change sets did not bring: rows without values, titles of new sections.
def ReadPending(view: dict<any>)
  if view.reading || view.reloading
    return
  endif
  if view.lazy
    # Its rows are never pending (UNREAD instead): read as they show, not scanned here.
    ReadVisible(view)
    UpdateLoadedStatus(view)
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
    UpdateLoadedStatus(view)
    HighlightMatches(view)
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
    Request(view.conn, 'sectionTitles', {source: view.source}, (err, titles) => {
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
              var line = SectionLine(view, t)
              Edit(view, line, line + 1, [HeaderItem(section)])
            endif
            SyncHeader(view, t)
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
  Request(view.conn, 'objectsInSection', params, (err, result) => {
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
          var line = RowLine(view, range_.section, i)
          Edit(view, line, line + 1, [RowItem(view, section.rows[i])])
        endif
        offset += 1
      endfor
      SyncHeader(view, range_.section)
    endif
    Done()
  })
enddef

# Lazy lists (counted placeholders) ----------------------------------------------------------

# Reads the rows not read yet (UNREAD) that the list's windows show, and a window's height
# around them, with one objectsInSection; then those lines are written again.
def ReadVisible(view: dict<any>)
  if !view.lazy || !view.known || view.detached || view.reading_visible || !bufexists(view.buf) || len(view.sections) != 1
    return
  endif
  var rows = view.sections[0].rows
  var header = view.sections[0].header ? 1 : 0
  var first = -1
  var last = -1
  for win in win_findbuf(view.buf)
    var height = max([1, winheight(win)])
    var cursor = line('.', win)
    var from = max([0, min([line('w0', win), cursor]) - 1 - header - height])
    var to = min([len(rows) - 1, max([line('w$', win), cursor]) - 1 - header + height])
    for i in range(from, to)
      if rows[i] is UNREAD
        first = first < 0 ? i : min([first, i])
        last = max([last, i])
      endif
    endfor
  endfor
  if first < 0
    if view.display_after_read
      DisplayCursorRows(view)
    endif
    return
  endif
  view.reading_visible = true
  var version = view.version
  var conn = view.conn
  var params = {source: view.source, section: 0, start: first, count: last - first + 1}
  Request(conn, 'objectsInSection', params, (err, result) => {
    view.reading_visible = false
    if view.detached || view.conn isnot conn || !view.lazy || len(view.sections) != 1
      return
    endif
    if type(err) == v:t_dict
      Resync(view, 'objectsInSection failed: ' .. RpcErrorText(err))
      return
    endif
    var revision = get(result, 'revision', -1)
    if revision != view.revision && !(revision < 0 && view.version == version)
      return  # about other rows: the change set still to come reads again
    endif
    var section = view.sections[0]
    var n = first
    for value in result.objects
      if n < len(section.rows) && section.rows[n] is UNREAD
        section.rows[n] = {value: value, pending: false}
      endif
      n += 1
    endfor
    var top = RowLine(view, 0, first)
    var count = min([len(result.objects), len(section.rows) - first])
    Edit(view, top, top + count, mapnew(section.rows[first : first + count - 1], (k, entry) => RowItem(view, entry, first + k)))
    ReadVisible(view)  # the windows may have moved meanwhile
    if view.display_after_read && !view.reading_visible
      DisplayCursorRows(view)
    endif
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
    var entry = EntryAt(view, line)
    if empty(entry) || has_key(asked, string(line))
      continue
    endif
    var kind = PlaceholderKind(entry.value)
    if entry is UNREAD
      view.display_after_read = true
    elseif kind == 'unloaded'
      asked[string(line)] = true
      WillDisplay(view, line)
    endif
  endfor
enddef

# The cursor moved in a lazy list: once it rests (keys held down move it many times),
# the rows shown are read and an unloaded row under the cursor is displayed.
def ScheduleDisplay(view: dict<any>)
  if view.display_timer > 0
    timer_stop(view.display_timer)
  endif
  view.display_timer = timer_start(view.display_debounce_ms, (_) => {
    view.display_timer = 0
    if view.detached || empty(view.conn) || !bufexists(view.buf)
      return
    endif
    view.display_after_read = true
    ReadVisible(view)
  })
enddef

# A lazy list's count of loaded objects, for the status, from the daemon.
def CountLoaded(view: dict<any>)
  var version = view.version
  Request(view.conn, 'describeSource', {source: view.source}, (err, description) => {
    if type(err) != v:t_dict && type(description) == v:t_dict && view.lazy && view.version == version
      var loaded = get(description, 'numberOfObjects', 0)
      view.loaded_objects = type(loaded) == v:t_number ? loaded : 0
      UpdateLoadedStatus(view)
    endif
  })
enddef

# Events ----------------------------------------------------------------------------------

# "loaded N": the objects shown, placeholders left out.
def UpdateLoadedStatus(view: dict<any>)
  if !view.loaded
    return
  endif
  if view.lazy
    # The list has its full size, of which the daemon holds this many objects (most
    # rows were never read here).
    var total = 0
    for section in view.sections
      total += len(section.rows)
    endfor
    SetStatus(view, printf('loaded %d of %d', view.loaded_objects, total))
    return
  endif
  var count = 0
  for section in view.sections
    count += len(filter(copy(section.rows), (_, e) => !e.pending && !IsPlaceholder(e.value)))
  endfor
  SetStatus(view, 'loaded ' .. count)
enddef

def OnEvent(view: dict<any>, kind: string, params: dict<any>)
  if kind == 'didChangeFreshness'
    SetFreshness(view, params.source, IsTrue(get(params, 'stale', false)), get(params, 'cachedAt', v:null))
    return
  endif
  if params.source != view.source
    return
  endif
  if kind == 'didChange'
    OnChange(view, params)
  elseif kind == 'willLoadData'
    view.loaded = false
    view.failure = {}
    SetNotice(view, [])
    SetStatus(view, 'loading')
  elseif kind == 'finishedLoading'
    view.loaded = true
    if view.lazy
      CountLoaded(view)
      ScheduleDisplay(view)  # a cursor still on an unloaded row asks on for its page
    endif
    ReadPending(view)
    ShowFilteredLoadingRow(view)
    Fire('DatasourcedLoaded', view)
  elseif kind == 'failedWithError'
    var failure = type(get(params, 'error', 0)) == v:t_dict ? params.error : {}
    view.loaded = false
    view.failure = {error: failure, sources: FailedSources(view.source, failure)}
    if get(failure, 'kind', '') == 'cancelled'
      SetStatus(view, 'cancelled')
    else
      SetStatus(view, 'error: ' .. ErrorText(failure, true))
    endif
    # Without an error row (the source does not store error placeholders), the error
    # is said in the list itself.
    SetNotice(view, get(failure, 'kind', '') == 'cancelled'
      ? ['  ' .. ErrorText(failure) .. ': :Datasourced refresh loads the list again']
      : [TEXTS.error .. ErrorText(failure)])
    Fire('DatasourcedFailed', view, ErrorText(failure))
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
    var entry = EntryAt(view, lnum)
    if lnum == view.line_count && !empty(entry) && !entry.pending && PlaceholderKind(entry.value) == 'loading'
      WillDisplay(view, lnum)
      return
    endif
  endfor
enddef

def FailedSources(own: string, failure: dict<any>): list<string>
  var failures = get(failure, 'failures', [])
  if type(failures) == v:t_list && !empty(failures)
    return mapnew(failures, (_, f) => type(f) == v:t_dict ? Str(get(f, 'source', own)) : own)
  endif
  var source = get(failure, 'source', own)
  return [type(source) == v:t_string ? source : own]
enddef

def WillDisplay(view: dict<any>, line: number)
  var path = IndexPathAt(view, line)
  if empty(path) || empty(view.conn) || view.conn.exited
    return
  endif
  Send(view, 'willDisplayObjectAtIndexPath', {indexPath: path})
enddef

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
      out ..= (found[1] > 0 ? value[start : found[1] - 1] : '') .. Str(variables[name])
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
    throw 'datasourced-spec: ' .. file .. ': "search" must be an object: {"parameter", "source", "debounceMilliseconds", "keyPaths"}'
  endif
  for member in keys(search)
    if index(['parameter', 'source', 'debounceMilliseconds', 'keyPaths'], member) < 0
      throw printf('datasourced-spec: %s: search.%s is not a member of search (parameter, source, debounceMilliseconds, keyPaths)', file, member)
    endif
  endfor
  return {sources: sources, show: show, columns: columns, title: type(title) == v:t_string ? title : show, search: search}
enddef

def NewView(buf: number, normalized: dict<any>): dict<any>
  return {buf: buf, source: normalized.show, title: normalized.title, columns: normalized.columns,
    create: normalized.sources, conn: {}, sections: [], line_count: 0, notice: [],
    known: false, revision: -1, version: 0, reading: false, reloading: false, reload_again: false,
    reload_callback: null_function, detached: false, loaded: false, failure: {}, resyncs: 0, last_resync: '',
    cursor_lines: {}, user_moved: {}, state: 'starting', status: 'starting', stale: {}, under: {},
    identity_key: '', show_headers: false, kind: '', setup_failed: false,
    lazy: false, loaded_objects: 0, reading_visible: false, display_after_read: false, display_timer: 0,
    display_debounce_ms: DISPLAY_DEBOUNCE_MS,
    search: normalized.search, filter: {}, matches_read: -1, reading_matches: false, prompting: false, searched: '', remote_sources: {}}
enddef

# The buffer of a list titled `title`: the one already showing it, else a new one.
def ListBuffer(title: string): number
  for view in values(views)
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
  setbufvar(buf, '&buflisted', 1)
  setbufvar(buf, '&modifiable', 0)
  setbufvar(buf, '&filetype', 'datasourced')
  for group in PROP_TYPES
    if empty(prop_type_get(group, {bufnr: buf}))
      prop_type_add(group, {bufnr: buf, highlight: group})
    endif
  endfor
  execute 'augroup datasourced_list_' .. buf
    autocmd!
    execute 'autocmd CursorMoved <buffer=' .. buf .. '> OnCursorMoved(' .. buf .. ')'
    execute 'autocmd BufWinEnter <buffer=' .. buf .. '> SetWindowOptions() | ShowAgain(' .. buf .. ')'
    execute 'autocmd BufWipeout <buffer=' .. buf .. '> OnWipeout(' .. buf .. ')'
  augroup END
  return buf
enddef

def SetWindowOptions()
  # One line per row: a long row is cut at the window's edge, not folded.
  &l:wrap = false
  # Unloaded rows of counted lists (see UNREAD): one pattern for a million lines.
  silent! syntax clear DatasourcedUnloaded
  execute 'syntax match DatasourcedUnloaded /^' .. TEXTS.unloaded .. '\d\+$/'
  if get(g:, 'datasourced_statusline', true)
    &l:statusline = STATUSLINE
  endif
enddef

def SetKeymaps(buf: number)
  for [lhs, action] in items(Keymaps())
    if type(action) != v:t_string || action == ''
      continue
    endif
    if !has_key(ACTIONS, action)
      Notify(printf('g:datasourced_keymaps[%s]: no action "%s" (one of %s)', string(lhs), action, join(sort(keys(ACTIONS)), ', ')))
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
    Notify(substitute(v:exception, '^datasourced-spec: ', '', ''))
    return 0
  endtry
  var buf = ListBuffer(normalized.title)
  var view = NewView(buf, normalized)
  views[string(buf)] = view
  if bufnr() != buf
    try
      execute 'buffer ' .. buf
    catch
      execute 'sbuffer ' .. buf
    endtry
  endif
  SetWindowOptions()
  SetKeymaps(buf)
  setbufvar(buf, 'datasourced_source', view.source)
  view.cursor_lines[string(win_getid())] = line('.')
  StartView(view)
  return buf
enddef

export def Open(path: string): number
  if trim(path) == ''
    Notify('open needs a spec file (JSON): :Datasourced open FILE')
    return 0
  endif
  try
    return OpenSpec(ReadSpec(trim(path)), expand(trim(path)))
  catch /^datasourced-spec: /
    Notify(substitute(v:exception, '^datasourced-spec: ', '', ''))
  endtry
  return 0
enddef

def DaemonMissingNotice(problem: string): list<string>
  return [
    TEXTS.error .. 'the daemon did not start: ' .. problem,
    '',
    '  Set g:datasourced_cmd to its command line, in your vimrc:',
    '      let g:datasourced_cmd = [''/path/to/datasourced'']',
    '  then :Datasourced refresh. (`swift build` in the datasourced repository',
    '  makes .build/debug/datasourced.) :Datasourced health checks it.',
  ]
enddef

# Creates the sources the daemon lacks, then reads and loads the list; also what
# starts a list again after its daemon exited or could not start.
def StartView(view: dict<any>)
  var conn = Connection()
  view.conn = {}
  view.sections = []
  Edit(view, 0, -1, [])
  if has_key(conn, 'problem')
    SetNotice(view, DaemonMissingNotice(conn.problem))
    SetStatus(view, 'error: the daemon did not start (see g:datasourced_cmd)')
    Notify(conn.problem)
    Fire('DatasourcedFailed', view, conn.problem)
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
  SetNotice(view, [])
  SetStatus(view, 'starting')
  Request(conn, 'listSources', {}, (err, existing) => {
    if view.detached || view.conn isnot conn
      return
    endif
    if type(err) == v:t_dict
      SetStatus(view, 'error: ' .. RpcErrorText(err))
      SetNotice(view, [TEXTS.error .. RpcErrorText(err)])
      return
    endif
    var have: dict<any> = {}
    for s in existing
      have[s.name] = true
    endfor
    var missing = filter(copy(view.create), (_, p) => !has_key(have, p.name))
    for params in view.create
      if has_key(have, params.name) && has_key(conn.created, params.name) && conn.created[params.name] != params
        Notify(params.name .. ': the daemon already has this source, made with other parameters; the list shows that one', 'warning')
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
  Request(conn, 'createSource', params, (err, _) => {
    state.answers += 1
    if type(err) == v:t_dict && !state.failed
      # The first refusal is the one to read; later ones usually follow from it.
      state.failed = true
      view.setup_failed = true
      var text = printf('the daemon refused source "%s": %s', params.name, RpcErrorText(err))
      SetStatus(view, 'error: ' .. RpcErrorText(err))
      SetNotice(view, [TEXTS.error .. text])
      Notify(text)
      Fire('DatasourcedFailed', view, text)
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
  Reload(view, (description) => {
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
  Request(conn, 'describeSource', {source: name}, (err, description) => {
    if type(err) != v:t_dict && type(description) == v:t_dict
      view.under[name] = true
      walk.kinds[name] = description.kind
      walk.sources[name] = get(description, 'source', '')
      if description.kind == 'remote' || description.kind == 'paginated'
        view.remote_sources[name] = true
        walk.remote += 1
        var state = get(conn.load_state, name, '')
        if state == '' || state == 'failed'
          add(walk.unloaded, name)
        endif
        SetFreshness(view, name, IsTrue(get(description, 'stale', false)), get(description, 'cachedAt', v:null))
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
      Send(view, 'fetchData', {})
    else
      for source in walk.unloaded
        Send(view, 'fetchData', {source: source})
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
    name = Str(get(sources, name, ''))
  endwhile
  var headers = index(['sectioned', 'multi'], get(kinds, name, '')) >= 0
  if headers != view.show_headers
    view.show_headers = headers
    Edit(view, 0, -1, AllItems(view))
  endif
enddef

def AdoptState(view: dict<any>, description: dict<any>)
  if IsTrue(get(description, 'isFetching', false))
    view.loaded = false
    SetStatus(view, 'loading')
  else
    view.loaded = true
    UpdateLoadedStatus(view)
    Fire('DatasourcedLoaded', view)
  endif
enddef

# Buffer events ---------------------------------------------------------------------------

# The cursor reaching the last line shows its row: that is what asks for the next page.
# Only a move of the user's counts (see NoteCursors).
def OnCursorMoved(buf: number)
  var view = get(views, string(buf), {})
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
  var entry = EntryAt(view, line)
  if view.lazy && !(line == view.line_count && !empty(entry) && PlaceholderKind(entry.value) == 'loading')
    ScheduleDisplay(view)
  elseif line == view.line_count
    WillDisplay(view, line)
  endif
enddef

# A list shown in a window again: a lazy list reads the rows it shows now (none were read
# while it was hidden).
def ShowAgain(buf: number)
  var view = get(views, string(buf), {})
  if !empty(view) && !view.detached && view.lazy
    ScheduleDisplay(view)
  endif
enddef

# A list gone: the sources only it used are destroyed, and the daemon stops with the
# last list.
def OnWipeout(buf: number)
  var view = get(views, string(buf), {})
  if empty(view)
    return
  endif
  remove(views, string(buf))
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
  var others = ViewsOf(conn)
  if empty(others)
    StopConnection(conn)
    return
  endif
  if !empty(view.filter) && view.filter.ready
    Request(conn, 'destroySource', {name: view.filter.name}, (_, _) => 0)
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
      Request(conn, 'destroySource', {name: params.name}, (_, _) => 0)
    endif
  endfor
enddef

# Commands ----------------------------------------------------------------------------------

def ViewFor(buf: number = 0): dict<any>
  var view = get(views, string(buf == 0 ? bufnr() : buf), {})
  if empty(view)
    Notify('this buffer is not a datasourced list (:Datasourced open FILE opens one)', 'warning')
  endif
  return view
enddef

def NeedsStart(view: dict<any>): bool
  return empty(view.conn) || view.conn.exited || view.conn.stopping || view.setup_failed
enddef

def RunningView(buf: number = 0): dict<any>
  var view = ViewFor(buf)
  if !empty(view) && NeedsStart(view)
    Notify(view.source .. ': the daemon is not running (:Datasourced refresh starts it)', 'warning')
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
  NoteCursors(view)
  if NeedsStart(view)
    StartView(view)
    return
  endif
  ForgetDeclined(view.conn)
  Send(view, 'fetchData', {})
enddef

export def Cancel(buf: number = 0)
  var view = RunningView(buf)
  if empty(view)
    return
  endif
  Send(view, 'cancelFetch', {}, (result) => {
    if type(result) == v:t_dict && !IsTrue(get(result, 'cancelled', false))
      Notify(view.source .. ' is not loading: nothing to cancel', 'info')
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
    StartView(view)
    return
  endif
  if empty(view.failure)
    Notify(view.source .. ': nothing failed, nothing to retry (:Datasourced refresh loads again)', 'info')
    return
  endif
  ForgetDeclined(view.conn)
  var targets = view.failure.sources
  var state: dict<any> = {answers: 0, next_page: true}
  for name in targets
    Request(view.conn, 'describeSource', {source: name}, (err, d) => {
      state.answers += 1
      state.next_page = state.next_page && type(err) != v:t_dict && d.kind == 'paginated'
        && get(d, 'numberOfObjects', 0) > 0 && IsTrue(get(d, 'hasMorePages', false))
      if state.answers < len(targets)
        return
      endif
      if !state.next_page
        Send(view, 'fetchData', {})
        return
      endif
      for target in targets
        Send(view, 'fetchNextPage', {source: target})
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
  var entry = EntryAt(view, line('.'))
  if empty(entry) || entry.pending
    return
  endif
  var kind = PlaceholderKind(entry.value)
  if kind == 'error'
    Retry(view.buf)
  elseif kind == 'loading' || kind == 'unloaded'
    WillDisplay(view, line('.'))
  elseif kind == ''
    var OnSelect = get(g:, 'datasourced_on_select', null_function)
    if type(OnSelect) == v:t_func
      OnSelect(entry.value, {buf: view.buf, line: line('.'), index_path: IndexPathAt(view, line('.')), source: view.source})
    else
      popup_atcursor(Pretty(entry.value), {border: [], padding: [0, 1, 0, 1], moved: 'any'})
    endif
  endif
enddef

export def Help(): list<string>
  var lines = []
  var keymaps = Keymaps()
  for lhs in sort(keys(keymaps))
    var action = keymaps[lhs]
    if type(action) == v:t_string && has_key(ACTIONS, action)
      add(lines, printf('%-7s %s: %s', lhs, action, ACTIONS[action]))
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
    Filter()
  elseif name == 'help'
    Help()
  endif
enddef

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
  var value = AtKeyPath(object, Str(get(match, 'keyPath', '')))
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
    prop_remove({type: MATCH_GROUP, bufnr: view.buf, all: true}, 1, view.line_count)
  endif
enddef

# Reads the match positions of every row (objectsInSection withMatches, protocol 1.4) and
# highlights them, when the list shows a filter with a query; clears them otherwise. Once
# per revision; an answer about another revision is dropped (the next change reads again).
def HighlightMatches(view: dict<any>)
  if view.detached || !bufexists(view.buf)
    return
  endif
  var filter = view.filter
  if empty(filter) || !filter.ready || filter.query == '' || view.source != filter.name
    ClearMatches(view)
    view.matches_read = -1
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
  Request(view.conn, 'objectsInSection', {source: view.source, section: s, withMatches: true}, (err, result) => {
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
    ReadPending(view)  # the rows changed meanwhile: read again once their values are in
    return
  endif
  ClearMatches(view)
  var complete = true
  for [key, result] in items(state.found)
    var s = str2nr(key)
    var i = 0
    for match in get(result, 'matches', [])
      if s < len(view.sections) && i < len(view.sections[s].rows)
        var entry = view.sections[s].rows[i]
        if entry.pending
          complete = false  # its line is not written yet: highlighted on the next read
        elseif type(match) == v:t_dict
          HighlightRow(view, RowLine(view, s, i) + 1, result.objects[i], match)
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
  var paths = mapnew(view.columns, (_, c) => type(c) == v:t_dict ? Str(get(c, 'key', '')) : Str(c))
  if !empty(paths)
    return paths
  endif
  for section in view.sections
    for entry in section.rows
      if !entry.pending && type(entry.value) == v:t_dict && !IsPlaceholder(entry.value)
        var strings = sort(filter(keys(entry.value), (_, k) => type(entry.value[k]) == v:t_string))
        if !empty(strings)
          return strings
        endif
      endif
    endfor
  endfor
  return [view.identity_key == '' ? 'id' : view.identity_key]
enddef

# Sends the filter's query (setFilter with a match over its key paths; none for ''), once
# the filtered source exists. Answers come in order, each after its change set.
def SendQuery(view: dict<any>)
  var filter = view.filter
  if empty(filter) || !filter.ready || filter.sent == filter.query
    return
  endif
  filter.sent = filter.query
  var match: any = filter.query == '' ? v:null : {query: filter.query, keyPaths: filter.key_paths}
  Send(view, 'setFilter', {source: filter.name, match: match}, (_) => {
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
  Request(conn, 'createSource', {name: filter.name, kind: 'filtered', source: filter.base}, (err, _) => {
    if view.filter isnot filter || view.conn isnot conn
      return
    endif
    if type(err) == v:t_dict
      view.filter = {}
      Notify(printf('%s: the daemon refused the filter: %s', filter.base, RpcErrorText(err)))
      return
    endif
    filter.ready = true
    view.source = filter.name
    view.under[filter.name] = true
    Reload(view, (_) => SendQuery(view))
  })
enddef

# Filters the list by `query`, a fuzzy match over its shown key paths ('' shows every row).
export def SetFilter(query: string, buf: number = 0)
  var view = RunningView(buf)
  if empty(view)
    return
  endif
  if empty(view.filter)
    if query == ''
      return
    endif
    if view.lazy
      # A filtered source over it is read whole (allObjects): a million rows would hang Vim.
      Notify(view.source .. ': a counted list cannot be filtered here: the filter would read every row; use a search (:Datasourced search) instead', 'warning')
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
  var view = RunningView(buf)
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
  if type(get(view.search, 'parameter', 0)) != v:t_string
    Notify(view.source .. ': the list spec names no search parameter (add "search": {"parameter": "q"})')
    return ''
  endif
  if type(get(view.search, 'source', 0)) == v:t_string
    return view.search.source
  endif
  var remote = sort(keys(view.remote_sources))
  if len(remote) == 1
    return remote[0]
  endif
  Notify(printf('%s: %s remote sources; name the one to search in the spec''s search.source', view.source,
    empty(remote) ? 'no' : 'several'))
  return ''
enddef

# Searches the server: updateSource sets the spec's search parameter of the list's remote
# source to `text` ('' removes it), its other query parameters kept. The rows stay (the
# status says [updating]) until the new query's rows replace them in one change set.
export def Search(text: string, buf: number = 0)
  var view = RunningView(buf)
  if empty(view)
    return
  endif
  var target = SearchTarget(view)
  if target == ''
    return
  endif
  view.searched = text
  Send(view, 'describeSource', {source: target}, (description) => {
    if view.searched != text
      return  # a newer search sends its own update
    endif
    var query = type(get(description, 'queryParameters', 0)) == v:t_dict ? copy(description.queryParameters) : {}
    if text == ''
      if has_key(query, view.search.parameter)
        remove(query, view.search.parameter)
      endif
    else
      query[view.search.parameter] = text
    endif
    var params: dict<any> = {source: target, queryParameters: query}
    if has_key(view.search, 'debounceMilliseconds')
      params.debounceMilliseconds = view.search.debounceMilliseconds
    endif
    Send(view, 'updateSource', params)
  })
enddef

# `:Datasourced search` alone: a prompt that searches as you type (the spec's
# debounceMilliseconds merges a burst of keys into one request); <Esc> goes back to the
# search shown before.
export def SearchPrompt(buf: number = 0)
  var view = RunningView(buf)
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

# :Datasourced sources: each open list, its sources, and what its daemon has.
export def Sources(): list<string>
  var lines = []
  for view in sort(values(views), (a, b) => a.buf - b.buf)
    var conn = view.conn
    var daemon = empty(conn) ? 'no daemon' : printf('daemon pid %d%s', conn.pid, conn.exited ? ' (exited)' : '')
    add(lines, printf('datasourced://%s (buffer %d): shows %s, made of %s; %s; %s', view.title, view.buf, view.source,
      join(mapnew(view.create, (_, p) => p.name), ', '), view.status, daemon))
  endfor
  for conn in values(connections)
    var listed: any = {}
    try
      listed = ch_evalexpr(conn.channel, {method: 'listSources', params: {}}, {timeout: 2000})
    catch
    endtry
    var names = type(listed) == v:t_dict && type(get(listed, 'result', 0)) == v:t_list
      ? mapnew(listed.result, (_, s) => s.name .. ' (' .. s.kind .. ')') : ['?']
    add(lines, printf('daemon pid %d (%s): %s', conn.pid, join(conn.cmd), empty(names) ? 'no sources' : join(names, ', ')))
  endfor
  if empty(lines)
    lines = ['no lists open (:Datasourced open FILE)']
  endif
  return lines
enddef

def Scratch(name: string, lines: list<string>): number
  var buf = bufnr('^' .. name .. '$')
  if buf > 0 && !empty(win_findbuf(buf))
    win_gotoid(win_findbuf(buf)[0])
  else
    execute 'silent new ' .. fnameescape(name)
    setlocal buftype=nofile bufhidden=wipe noswapfile
    buf = bufnr()
  endif
  setlocal modifiable
  silent deletebufline(buf, 1, '$')
  setline(1, lines)
  setlocal nomodifiable
  return buf
enddef

# :Datasourced health: Vim's features, the daemon found, a round trip to it.
export def Health(show = true): list<string>
  var lines = ['datasourced: Vim']
  var Ok = (text) => add(lines, '  OK ' .. text)
  var Bad = (text) => add(lines, '  ERROR ' .. text)
  var vim_version = printf('%d.%d', v:version / 100, v:version % 100)
  if has('channel') && has('job') && has('patch-8.2.4648')
    Ok('Vim ' .. vim_version .. ' with +channel, +job and the lsp channel mode')
  else
    Bad('Vim ' .. vim_version .. ' lacks +channel, +job or the lsp channel mode (8.2.4648): install vim-nox')
  endif
  add(lines, 'datasourced: the daemon')
  var cmd = Cmd()
  var problem = Executable(cmd)
  if problem != ''
    Bad(problem)
    add(lines, '    Set g:datasourced_cmd = [''/path/to/datasourced''] (swift build makes .build/debug/datasourced)')
  else
    Ok('found, executable: ' .. exepath(cmd[0]))
    add(lines, '  command line: ' .. join(cmd))
    var started = reltime()
    var job = job_start(cmd, {in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl', err_cb: (_, _) => 0})
    var init: any = {}
    var pong: any = {}
    if job_status(job) == 'run'
      init = ch_evalexpr(job, {method: 'initialize', params: {clientInfo: {name: 'datasourced.vim health', version: VERSION}}}, {timeout: 5000})
      pong = ch_evalexpr(job, {method: 'ping', params: {}}, {timeout: 5000})
    endif
    var elapsed = reltimefloat(reltime(started)) * 1000
    if type(init) != v:t_dict || type(get(init, 'result', 0)) != v:t_dict || type(pong) != v:t_dict || !has_key(pong, 'result')
      Bad(printf('no round trip: no answer to initialize and ping within 5 s (job %s)', job_status(job)))
    else
      var info = get(init.result, 'serverInfo', {})
      Ok(printf('%s %s, protocol %s', Str(get(info, 'name', 'datasourced')), Str(get(info, 'version', '?')), Str(get(init.result, 'protocolVersion', '?'))))
      Ok(printf('round trip (start, initialize, ping): %.1f ms', elapsed))
    endif
    if job_status(job) == 'run'
      ch_evalexpr(job, {method: 'shutdown', params: {}}, {timeout: 1000})
      ch_sendexpr(job, {method: 'exit', params: {}})
      var stop = reltime()
      while job_status(job) == 'run' && reltimefloat(reltime(stop)) < 1.0
        sleep 5m
      endwhile
      if job_status(job) == 'run'
        job_stop(job)
      endif
    endif
  endif
  add(lines, 'datasourced: lists')
  extend(lines, mapnew(Sources(), (_, l) => '  ' .. l))
  if show
    Scratch('datasourced://health', lines)
  endif
  return lines
enddef

# :Datasourced log: what the daemons wrote on stderr.
export def Log(): list<string>
  var lines = []
  for conn in values(connections)
    add(lines, printf('== daemon pid %d (%s)', conn.pid, join(conn.cmd)))
    extend(lines, conn.log)
  endfor
  if empty(lines)
    lines = ['no daemon running']
  endif
  Scratch('datasourced://log', lines)
  return lines
enddef

export def Command(args: string)
  var sub = matchstr(args, '^\s*\zs\S*')
  var rest = trim(matchstr(args, '^\s*\S*\s*\zs.*'))
  if sub == 'open'
    Open(rest)
  elseif sub == 'filter' && rest != ''
    SetFilter(rest)
  elseif sub == 'search'
    if rest == ''
      SearchPrompt()
    else
      Search(rest)
    endif
  elseif index(SUBCOMMANDS, sub) >= 0 && rest == ''
    if sub == 'sources'
      for line in Sources()
        echo line
      endfor
    elseif sub == 'health'
      Health()
    elseif sub == 'log'
      Log()
    else
      Action(sub)
    endif
  else
    Notify(printf('usage: :Datasourced {%s} (got "%s")', join(SUBCOMMANDS, '|'), args))
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
  return []
enddef

# For statuslines and tests -----------------------------------------------------------------

export def Status(buf: number = 0): string
  return get(get(views, string(buf == 0 ? bufnr() : buf), {}), 'status', '')
enddef

# The list of a buffer (the live state; for tests and statusline plugins), or {}.
export def View(buf: number = 0): dict<any>
  return get(views, string(buf == 0 ? bufnr() : buf), {})
enddef

export def Messages(): list<any>
  return messages
enddef

export def ClearMessages()
  messages = []
enddef

export def LastEvent(): dict<any>
  return last_event
enddef

# Stops every daemon (shutdown, then exit), waiting: when Vim exits.
export def Stop()
  for conn in values(connections)
    StopConnection(conn, true)
  endfor
enddef

augroup datasourced_autoload
  autocmd!
  autocmd VimLeavePre * Stop()
augroup END
