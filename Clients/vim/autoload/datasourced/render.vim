vim9script
# datasourced/render.vim: how rows, placeholders and section titles look. Each line is a
# text and a highlight group (a text property type); what failed is said as people read
# it; <CR>'s JSON; the "[cached 16:41]" mark.

import autoload 'datasourced/actions.vim'
import autoload 'datasourced/core.vim'

# Placeholder rows and headers as lines, with their highlight groups.
const TEXTS = {
  loading: '  ⋯ loading…',
  noResults: '  (no results)',
  error: '  ✗ error: ',
  pending: '  …',
  unloaded: '  … row ',
  pendingMark: '  ⋯ pending',
  header: '## ',
}
const GROUPS = {
  header: 'DatasourcedSection',
  loading: 'DatasourcedLoading',
  noResults: 'DatasourcedNoResults',
  error: 'DatasourcedError',
  pending: 'DatasourcedLoading',
  unloaded: 'DatasourcedUnloaded',
  pendingRow: 'DatasourcedPending',
}
const PROP_TYPES = ['DatasourcedSection', 'DatasourcedLoading', 'DatasourcedNoResults', 'DatasourcedError', 'DatasourcedMatch', 'DatasourcedPending', 'DatasourcedUnloaded']

export def Texts(): dict<string>
  return TEXTS
enddef

export def Groups(): dict<string>
  return GROUPS
enddef

# The text property types of a list buffer (one per highlight group).
export def PropTypes(): list<string>
  return PROP_TYPES
enddef

# A JSON-RPC error as people read it: no code number, no "Invalid params" prefix.
export def RpcErrorText(err: any): string
  if type(err) != v:t_dict
    return string(err)
  endif
  var text = type(get(err, 'message', '')) == v:t_string ? err.message : string(get(err, 'message', ''))
  text = substitute(text, '^Invalid params: ', '', '')
  return core.OneLine(text != '' ? text : 'unknown error')
enddef

# What failed, for people: where (unless short), what happened, what the server said.
export def ErrorText(failure: any, short = false): string
  if type(failure) != v:t_dict
    return 'unknown error'
  endif
  var text = core.Str(get(failure, 'message', get(failure, 'kind', 'unknown error')))
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
  return core.OneLine(text)
enddef

def Pad(text: string, width: number): string
  var fitted = core.Fit(text, width)
  return fitted .. repeat(' ', width - strdisplaywidth(fitted))
enddef

# An object as "key: value" pairs, the identity key first, then the others sorted.
def DefaultFormat(value: any, identity_key: string): string
  if type(value) != v:t_dict
    return core.Str(value)
  endif
  var keys = sort(filter(keys(value), (_, k) => k != identity_key))
  if identity_key != '' && has_key(value, identity_key)
    insert(keys, identity_key)
  endif
  return join(mapnew(keys, (_, k) => k .. ': ' .. core.Str(value[k])), '  ')
enddef

# Columns: key paths, or {key, width}; two spaces apart, the last one not padded.
def ColumnsFormat(value: any, columns: list<any>): string
  if type(value) != v:t_dict
    return core.Str(value)
  endif
  var cells = []
  var n = 0
  for column in columns
    n += 1
    var path = type(column) == v:t_dict ? core.Str(get(column, 'key', '')) : core.Str(column)
    var width = type(column) == v:t_dict ? get(column, 'width', 0) : 0
    var found = core.AtKeyPath(value, path)
    var text = core.IsNull(found) ? '' : core.OneLine(core.Str(found))
    if type(width) == v:t_number && width > 0 && n < len(columns)
      text = Pad(text, width)
    endif
    add(cells, text)
  endfor
  return substitute(join(cells, '  '), '\s\+$', '', '')
enddef

# JSON over several lines, members sorted: what <CR> shows of a row.
export def Pretty(value: any, indent = '', prefix = '', suffix = ''): list<string>
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

# The text and group of a row (`index`: its item, for an unloaded row not read yet). An
# unloaded row of a counted list is an empty line, its text drawn over it as it shows
# (buflines.Decorate); elsewhere (a sectioned view over a counted source) it has its
# text, highlighted by a window's match (windows.vim).
export def RowItem(view: dict<any>, entry: dict<any>, index = -1): list<string>
  if get(entry, 'pending', false)
    return [TEXTS.pending, GROUPS.pending]
  endif
  var value = entry.value
  var kind = core.PlaceholderKind(value)
  if kind == 'unloaded' && view.lazy
    return ['', '']
  elseif kind == 'unloaded'
    var at = get(value, 'index', index)
    return [UnloadedText(type(at) == v:t_number ? at : index), '']
  elseif kind == 'error'
    return [TEXTS.error .. ErrorText(get(value, 'error', {})), GROUPS.error]
  elseif kind != ''
    return [get(TEXTS, kind, '  <' .. kind .. '>'), get(GROUPS, kind, '')]
  endif
  try
    var text = empty(view.columns) ? DefaultFormat(value, view.identity_key) : ColumnsFormat(value, view.columns)
    if actions.IsPending(view, value)
      # A mutation not settled yet: dim, marked, until didSettleMutation.
      return [core.OneLine(text) .. TEXTS.pendingMark, GROUPS.pendingRow]
    endif
    return [core.OneLine(text), '']
  catch
    return ['  <format failed: ' .. core.OneLine(v:exception) .. '>', GROUPS.error]
  endtry
enddef

export def HeaderItem(section: dict<any>): list<string>
  if get(section, 'title_pending', false)
    return [TEXTS.header .. '…', GROUPS.header]
  endif
  return [TEXTS.header .. core.OneLine(core.Str(section.title)), GROUPS.header]
enddef

# "[cached 16:41]" for an RFC 3339 UTC time (local time; the date when not today).
export def StaleMarker(cached_at: any): string
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
