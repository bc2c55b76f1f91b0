vim9script
# datasourced/rpc.vim: the daemon, a job on Vim's own JSON-RPC channel mode ("lsp"): Vim
# does the Content-Length framing, numbers the requests and calls each answer's
# callback; the daemon's notifications come to the channel callback, in the order it
# wrote them. One daemon per command line (g:datasourced_cmd) serves every list; it
# starts with the first and stops (shutdown, then exit) with the last.

import autoload 'datasourced/actions.vim'
import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/credentials.vim'
import autoload 'datasourced/events.vim'
import autoload 'datasourced/render.vim'

var connections: dict<any> = {}  # the command line, joined -> connection

# The running daemons: the command line, joined -> connection.
export def Connections(): dict<any>
  return connections
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
export def Request(conn: dict<any>, method: string, params: dict<any>, Callback: func)
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
    core.Notify(method .. ' answer failed: ' .. v:exception .. ' (' .. v:throwpoint .. ')')
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

export def Executable(cmd: list<string>): string
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
    load_state: {}, created: {}, destroying: {}, requests: {}, credentials: {}}
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
  Request(conn, 'initialize', {clientInfo: {name: 'datasourced.vim', version: core.Version()}, capabilities: {changeValues: true, changeRanges: true}},
    (err, result) => Initialized(conn, err, result))
  return conn
enddef

def Initialized(conn: dict<any>, err: any, result: any)
  if type(err) == v:t_dict
    core.Notify('the daemon refused initialize: ' .. render.RpcErrorText(err))
    return
  endif
  conn.initialized = true
  conn.server_info = get(result, 'serverInfo', {})
  conn.protocol_version = core.Str(get(result, 'protocolVersion', ''))
  conn.capabilities = type(get(result, 'capabilities', {})) == v:t_dict ? result.capabilities : {}
enddef

# Ends the daemon: shutdown, then exit; killed if it does not end. With `wait` (leaving
# Vim, when no callback will run any more) it blocks until the process has ended.
export def StopConnection(conn: dict<any>, wait = false)
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
  if has_key(conn.destroying, source)
    return  # the end of a source being destroyed (its load cancelled), not of one made anew
  endif
  if kind == 'didSettleMutation'
    actions.OnSettle(conn, params)
    return
  endif
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
        events.OnEvent(view, kind, params)
      catch
        core.Notify(message.method .. ' on ' .. view.source .. ' failed: ' .. v:exception .. ' (' .. v:throwpoint .. ')')
      endtry
    endif
  endfor
  if shown && kind == 'failedWithError' && credentials.AskCredentials(conn, source, get(params, 'error', {}))
    return  # the person is asked; their no says the failure
  endif
  if shown && kind == 'failedWithError'
    var failure = get(params, 'error', {})
    var cancelled = type(failure) == v:t_dict && get(failure, 'kind', '') == 'cancelled'
    core.Notify(source .. ': ' .. render.ErrorText(failure, true), cancelled ? 'warning' : 'error')
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
    buflines.SetStatus(view, 'daemon exited')
  endfor
  if conn.stopping
    return
  endif
  var said = empty(conn.log) ? '' : ': ' .. conn.log[-1]
  core.Notify(printf('the daemon exited (status %d%s); :Datasourced refresh starts it again', code, said))
enddef

# The running connection for g:datasourced_cmd, started on first use; {problem: TEXT}
# when it cannot start.
export def Connection(): dict<any>
  var cmd = core.Cmd()
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

export def ViewsOf(conn: dict<any>): list<any>
  return filter(values(core.Views()), (_, v) => get(v, 'conn', {}) is conn && !v.detached)
enddef

# Stops every daemon (shutdown, then exit), waiting: when Vim exits.
export def StopAll()
  for conn in values(connections)
    StopConnection(conn, true)
  endfor
enddef
