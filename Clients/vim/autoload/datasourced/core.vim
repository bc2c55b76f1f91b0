vim9script
# datasourced/core.vim: what every part of the plugin shares. The settings read from
# g:datasourced_* (the daemon's command line, the keymaps and their actions), the lists
# open (one view per list buffer), the messages echoed and the User events fired, and
# JSON values as Vim script sees them.

const VERSION = '0.1.0'

# What each action does: keymaps, <Plug>(datasourced-ACTION) and the g? help.
const ACTIONS = {
  select: 'the row: g:datasourced_on_select (default: its JSON); an error row retries, a loading row loads',
  refresh: 'load again (a paginated source from page one); starts the daemon again if it is gone',
  retry: 'after an error: the failed page again, or the whole load',
  cancel: 'cancel the load in flight',
  close: 'close the list',
  filter: 'filter the rows as you type (<CR> keeps the filter, <Esc> clears it)',
  action: 'one of the source''s actions on the row (its values asked for), shown at once, dim until the server answers',
  'cancel-action': 'cancel the row''s actions the server has not answered yet: the change is undone',
  help: 'show these keys',
}
const DEFAULT_KEYMAPS = {'<CR>': 'select', r: 'refresh', R: 'retry', '<C-c>': 'cancel', q: 'close', '/': 'filter', 'g?': 'help'}

var views: dict<any> = {}        # string(buffer number) -> view
var messages: list<any> = []     # what was echoed, for :messages-like checks in tests
var last_event: dict<any> = {}   # what the last User autocommand was about

# The plugin's version, as the daemon is told it (clientInfo).
export def Version(): string
  return VERSION
enddef

export def Actions(): dict<string>
  return ACTIONS
enddef

# Every list: string(buffer number) -> view (the live state). Exported variables of an
# autoload script would be global (g:datasourced#core#views): a function hands it out.
export def Views(): dict<any>
  return views
enddef


# Settings -----------------------------------------------------------------------------

export def Cmd(): list<string>
  var cmd = get(g:, 'datasourced_cmd', ['datasourced'])
  if type(cmd) == v:t_string
    return [cmd]
  endif
  return type(cmd) == v:t_list ? mapnew(cmd, (_, v) => type(v) == v:t_string ? v : string(v)) : []
enddef

export def Keymaps(): dict<any>
  var keymaps = copy(DEFAULT_KEYMAPS)
  var given = get(g:, 'datasourced_keymaps', {})
  if type(given) == v:t_dict
    extend(keymaps, given)
  endif
  return keymaps
enddef

# Messages -------------------------------------------------------------------------------

# One line, cut to `width` display cells with "…".
export def Fit(text: string, width: number): string
  if strdisplaywidth(text) <= width
    return text
  endif
  var cut = text
  while strdisplaywidth(cut) > width - 1 && cut != ''
    cut = strcharpart(cut, 0, strchars(cut) - 1)
  endwhile
  return cut .. '…'
enddef

export def OneLine(text: string): string
  return substitute(text, '[\r\n]\+', ' ', 'g')
enddef

# Echoes "datasourced: TEXT", cut to fit the command line (a longer message would ask
# for Enter). level: 'error', 'warning' or 'info'.
export def Notify(text: string, level = 'error')
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

export def Fire(event: string, view: dict<any>, detail = '')
  last_event = {event: event, buf: view.buf, title: view.title, source: view.source, status: view.status, detail: detail}
  if exists('#User#' .. event)
    execute 'doautocmd <nomodeline> User ' .. event
  endif
enddef

# Values as text ---------------------------------------------------------------------------

export def Str(value: any): string
  return type(value) == v:t_string ? value : json_encode(value)
enddef

export def IsTrue(value: any): bool
  return type(value) == v:t_bool && value
enddef

export def IsNull(value: any): bool
  return type(value) == v:t_none
enddef

export def IsPlaceholder(value: any): bool
  return type(value) == v:t_dict && has_key(value, '$placeholder')
enddef

export def PlaceholderKind(value: any): string
  return IsPlaceholder(value) ? Str(value['$placeholder']) : ''
enddef

export def AtKeyPath(value: any, path: string): any
  var found = value
  for part in split(path, '\.')
    if type(found) != v:t_dict || !has_key(found, part)
      return v:none
    endif
    found = found[part]
  endfor
  return found
enddef

# For tests and statusline plugins --------------------------------------------------------

export def Messages(): list<any>
  return messages
enddef

export def ClearMessages()
  messages = []
enddef

export def LastEvent(): dict<any>
  return last_event
enddef
