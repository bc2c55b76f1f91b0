vim9script
# datasourced.vim: list buffers over the data sources of a datasourced daemon.
#
# The functions people and the plugin/ file call (datasourced#Command, #Action,
# #Complete, #Open, #Status, #LastEvent, ...), each handing over to the part of the
# plugin it belongs to, under autoload/datasourced/:
#   core.vim         settings (g:datasourced_*), the open lists, messages, User events
#   rpc.vim          the daemon: a job on Vim's JSON-RPC ("lsp") channel mode
#   render.vim       how rows, placeholders, headers and failures look
#   buflines.vim     a list buffer's lines, the model they show, its status
#   model.vim        reading a list, and its change sets
#   lazy.vim         counted lists (a million rows), read where they show
#   events.vim       the daemon's notifications about a list
#   opening.vim      spec files, opening a list
#   windows.vim      list windows, the list buffer's events (cursor, shown, wiped out)
#   commands.vim     refresh, retry, cancel, close, select, help; :Datasourced parsed
#   actions.vim      a source's actions on a row, and its rows waiting for the server
#   filters.vim      `/` filters as you type, and searches of the server
#   credentials.vim  the question before a credential is first sent to an origin
#   health.vim       :Datasourced sources, health and log
# Everything else is script-local; the plugin/ file defines the one command, the <Plug>
# maps and the highlight links. See :help datasourced.

import autoload 'datasourced/commands.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/credentials.vim'
import autoload 'datasourced/filters.vim'
import autoload 'datasourced/health.vim'
import autoload 'datasourced/opening.vim'
import autoload 'datasourced/rpc.vim'

# Opening a list ------------------------------------------------------------------------------

# Opens a list from a parsed spec in the current window (a split when the current
# buffer cannot be left). Returns the buffer, or 0.
export def OpenSpec(spec: dict<any>, file = 'the spec'): number
  return opening.OpenSpec(spec, file)
enddef

# Opens a list from a spec file (JSON). Returns the buffer, or 0.
export def Open(path: string): number
  return opening.Open(path)
enddef

# Commands ----------------------------------------------------------------------------------

export def Command(args: string)
  commands.Command(args)
enddef

export def Complete(arglead: string, cmdline: string, cursor: number): list<string>
  return commands.Complete(arglead, cmdline, cursor)
enddef

# What <Plug>(datasourced-ACTION) does: select, refresh, retry, cancel, close, filter,
# action (a source's action on the row), help.
export def Action(name: string)
  commands.Action(name)
enddef

export def Refresh(buf: number = 0)
  commands.Refresh(buf)
enddef

export def Cancel(buf: number = 0)
  commands.Cancel(buf)
enddef

export def Retry(buf: number = 0)
  commands.Retry(buf)
enddef

export def Close(buf: number = 0)
  commands.Close(buf)
enddef

export def Select(buf: number = 0)
  commands.Select(buf)
enddef

export def Help(): list<string>
  return commands.Help()
enddef

# Filters and searches ------------------------------------------------------------------------

# Filters the list by `query`, a fuzzy match over its shown key paths ('' shows every row).
export def SetFilter(query: string, buf: number = 0)
  filters.SetFilter(query, buf)
enddef

export def Filter(buf: number = 0)
  filters.Filter(buf)
enddef

export def Search(text: string, buf: number = 0)
  filters.Search(text, buf)
enddef

export def SearchPrompt(buf: number = 0)
  filters.SearchPrompt(buf)
enddef

# Credentials ---------------------------------------------------------------------------

# The credentials a failure lacked: [{kind: 'env' | 'file', name, origin, key}].
export def CredentialRequests(failure: any): list<any>
  return credentials.CredentialRequests(failure)
enddef

export def CredentialQuestion(request: dict<any>): string
  return credentials.CredentialQuestion(request)
enddef

# Sources, health, log ------------------------------------------------------------------------

export def Sources(): list<string>
  return health.Sources()
enddef

export def Health(show = true): list<string>
  return health.Health(show)
enddef

export def Log(): list<string>
  return health.Log()
enddef

# For statuslines and tests -----------------------------------------------------------------

export def Status(buf: number = 0): string
  return get(get(core.Views(), string(buf == 0 ? bufnr() : buf), {}), 'status', '')
enddef

# The list of a buffer (the live state; for tests and statusline plugins), or {}.
export def View(buf: number = 0): dict<any>
  return get(core.Views(), string(buf == 0 ? bufnr() : buf), {})
enddef

export def Messages(): list<any>
  return core.Messages()
enddef

export def ClearMessages()
  core.ClearMessages()
enddef

export def LastEvent(): dict<any>
  return core.LastEvent()
enddef

# Stops every daemon (shutdown, then exit), waiting: when Vim exits.
export def Stop()
  rpc.StopAll()
enddef

augroup datasourced_autoload
  autocmd!
  autocmd VimLeavePre * Stop()
augroup END
