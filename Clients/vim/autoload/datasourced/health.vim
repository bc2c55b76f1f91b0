vim9script
# datasourced/health.vim: what the plugin can say about itself: :Datasourced sources (the
# lists and what each daemon has), health (Vim's features, the daemon, a round trip) and
# log (what the daemons wrote on stderr).

import autoload 'datasourced/core.vim'
import autoload 'datasourced/rpc.vim'

# :Datasourced sources: each open list, its sources, and what its daemon has.
export def Sources(): list<string>
  var lines = []
  for view in sort(values(core.Views()), (a, b) => a.buf - b.buf)
    var conn = view.conn
    var daemon = empty(conn) ? 'no daemon' : printf('daemon pid %d%s', conn.pid, conn.exited ? ' (exited)' : '')
    add(lines, printf('datasourced://%s (buffer %d): shows %s, made of %s; %s; %s', view.title, view.buf, view.source,
      join(mapnew(view.create, (_, p) => p.name), ', '), view.status, daemon))
  endfor
  for conn in values(rpc.Connections())
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
  var cmd = core.Cmd()
  var problem = rpc.Executable(cmd)
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
      init = ch_evalexpr(job, {method: 'initialize', params: {clientInfo: {name: 'datasourced.vim health', version: core.Version()}}}, {timeout: 5000})
      pong = ch_evalexpr(job, {method: 'ping', params: {}}, {timeout: 5000})
    endif
    var elapsed = reltimefloat(reltime(started)) * 1000
    if type(init) != v:t_dict || type(get(init, 'result', 0)) != v:t_dict || type(pong) != v:t_dict || !has_key(pong, 'result')
      Bad(printf('no round trip: no answer to initialize and ping within 5 s (job %s)', job_status(job)))
    else
      var info = get(init.result, 'serverInfo', {})
      Ok(printf('%s %s, protocol %s', core.Str(get(info, 'name', 'datasourced')), core.Str(get(info, 'version', '?')), core.Str(get(init.result, 'protocolVersion', '?'))))
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
  for conn in values(rpc.Connections())
    add(lines, printf('== daemon pid %d (%s)', conn.pid, join(conn.cmd)))
    extend(lines, conn.log)
  endfor
  if empty(lines)
    lines = ['no daemon running']
  endif
  Scratch('datasourced://log', lines)
  return lines
enddef
