vim9script
# datasourced/credentials.vim: the question asked before a credential is first sent to
# an origin (confirm(), or g:datasourced_confirm), and the daemon told the answer.

import autoload 'datasourced/core.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

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
  var mapped = sort(keys(filter(core.Keymaps(), (_, action) => action == 'refresh')))
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
      core.Notify(printf('%s not sent to %s: not allowed (%s asks again)', CredentialWhat(request), request.origin, RefreshKey()), 'warning')
      return
    endif
    entry.state = 'allowing'
    var params = {origin: request.origin}
    params[request.kind] = request.name
    rpc.Request(conn, 'allowCredential', params, (err, result) => {
      if type(err) == v:t_dict
        remove(conn.credentials, request.key)
        core.Notify('allowCredential: ' .. render.RpcErrorText(err))
        return
      endif
      entry.state = 'allowed'
      var answer = type(result) == v:t_dict ? result : {}
      core.Notify(printf('allowed %s to be sent to %s (recorded in %s)', CredentialWhat(request),
        core.Str(get(answer, 'origin', request.origin)), core.Str(get(answer, 'path', ''))), 'info')
      var waiting = sort(keys(entry.sources))
      entry.sources = {}
      for source in waiting
        rpc.Request(conn, 'fetchData', {source: source}, (fetch_err, _) => {
          if type(fetch_err) == v:t_dict
            core.Notify(source .. ': ' .. render.RpcErrorText(fetch_err))
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
export def AskCredentials(conn: dict<any>, source: string, failure: any): bool
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
export def ForgetDeclined(conn: dict<any>)
  if has_key(conn, 'credentials')
    filter(conn.credentials, (_, entry) => entry.state != 'declined')
  endif
enddef
