vim9script
# datasourced/actions.vim: a source's actions on the row under the cursor
# (:Datasourced action NAME, <Plug>(datasourced-action)). The action is chosen among
# those its source declares, each declared value is asked for and checked, and
# performAction is sent to the source that declares it (the spec's source with
# "actions", even when the list shows a source built on it), with the row's identity.
# Rows with a mutation not settled yet show dim with a mark until didSettleMutation;
# a rollback says the action and the server's words. :Datasourced cancel-action
# cancels the row's mutations not settled yet (cancelMutation), which roll back.

import autoload 'datasourced/buflines.vim'
import autoload 'datasourced/core.vim'
import autoload 'datasourced/render.vim'
import autoload 'datasourced/rpc.vim'

const CANCELLED = "\<Esc>"  # what the prompt answers when the person cancels it

# What describeSource said of the source with actions under a list (opening.vim's walk):
# its name, its actions as declared and its identity key.
export def Note(view: dict<any>, name: string, description: dict<any>)
  var declared = get(description, 'actions', {})
  if type(declared) != v:t_dict || empty(declared)
    return
  endif
  # The first met from the shown source down: the shown one when it declares actions.
  if view.action_source != ''
    return
  endif
  view.action_source = name
  view.actions = declared
  var key = get(description, 'identityKey', '')
  view.action_key = type(key) == v:t_string ? key : ''
  # Mutations made before the list (re)opened, not settled yet: their rows are marked too.
  var pending = get(description, 'pendingMutations', [])
  for mutation in type(pending) == v:t_list ? pending : []
    if type(mutation) == v:t_dict && type(get(mutation, 'mutation', 0)) == v:t_string
      var identity = has_key(mutation, 'identity') ? mutation.identity : 'pending:' .. mutation.mutation
      view.mutations[mutation.mutation] = {action: core.Str(get(mutation, 'action', '')), identity: json_encode(identity)}
      Redraw(view, json_encode(identity))
    endif
  endfor
enddef

export def Names(view: dict<any>): list<string>
  return empty(view) ? [] : sort(keys(get(view, 'actions', {})))
enddef

# The person's answer to a prompt: g:datasourced_input (the name of a function of
# yours, or a funcref, given the prompt, the text shown first and, for the choice of an
# action, the names to choose from) when set, else inputdialog() (or inputlist() for a
# choice). v:null when the person cancelled.
def Ask(prompt: string, default: string, choices: list<string> = []): any
  var Given = get(g:, 'datasourced_input', '')
  var answer: any
  if type(Given) == v:t_string && Given != ''
    answer = call(Given =~ '^g:\|^s:\|^<SNR>\|#' ? Given : 'g:' .. Given, [prompt, default, choices])
  elseif type(Given) == v:t_func
    answer = Given(prompt, default, choices)
  elseif !empty(choices)
    var picked = inputlist([prompt] + mapnew(choices, (i, c) => printf('%d. %s', i + 1, c)))
    return picked >= 1 && picked <= len(choices) ? choices[picked - 1] : v:null
  else
    answer = inputdialog(prompt, default, CANCELLED)
  endif
  return type(answer) == v:t_string && answer != CANCELLED ? answer : v:null
enddef

# A value typed for a declared type: [value, ''], or [v:none, what is wrong].
export def Parse(text: string, type_: string): list<any>
  var trimmed = trim(text)
  if type_ == 'integer'
    return trimmed =~ '^[-+]\=\d\+$' ? [str2nr(trimmed), ''] : [v:none, 'an integer']
  elseif type_ == 'number'
    if trimmed =~ '^[-+]\=\d\+$'
      return [str2nr(trimmed), '']
    endif
    return trimmed =~ '^[-+]\=\(\d\+\.\=\d*\|\.\d\+\)\([eE][-+]\=\d\+\)\=$' ? [str2float(trimmed), ''] : [v:none, 'a number']
  elseif type_ == 'boolean'
    var word = tolower(trimmed)
    if index(['true', 'yes', 'y', '1'], word) >= 0
      return [true, '']
    elseif index(['false', 'no', 'n', '0'], word) >= 0
      return [false, '']
    endif
    return [v:none, 'true or false']
  elseif type_ == 'object' || type_ == 'array'
    try
      var decoded = json_decode(trimmed)
      if type(decoded) == (type_ == 'object' ? v:t_dict : v:t_list)
        return [decoded, '']
      endif
    catch
    endtry
    return [v:none, type_ == 'object' ? 'a JSON object' : 'a JSON array']
  endif
  return [text, '']
enddef

# :Datasourced action [NAME] and <Plug>(datasourced-action): the action on the row under
# the cursor. Without NAME, the source's actions to choose from.
export def Perform(view: dict<any>, given: string)
  if empty(view)
    return
  endif
  var names = Names(view)
  if empty(names)
    core.Notify(view.source .. ': its sources declare no actions', 'warning')
    return
  endif
  var name = given
  if name == ''
    var picked = Ask('Action:', '', names)
    if type(picked) != v:t_string
      return
    endif
    name = picked
  endif
  if index(names, name) < 0
    core.Notify(printf('%s: no action "%s" (%s)', view.action_source, name, join(names, ', ')))
    return
  endif
  var declared = type(view.actions[name]) == v:t_dict ? view.actions[name] : {}
  var optimistic = core.Str(get(declared, 'optimistic', 'none'))
  var entry = buflines.EntryAt(view, line('.'))
  var row = !empty(entry) && !entry.pending && type(entry.value) == v:t_dict && !core.IsPlaceholder(entry.value) ? entry.value : {}
  var params: dict<any> = {source: view.action_source, action: name}
  if !empty(row) && view.action_key != '' && has_key(row, view.action_key)
    params.identity = row[view.action_key]
  elseif optimistic == 'update' || optimistic == 'remove'
    core.Notify(printf('%s needs a row: put the cursor on one', name), 'warning')
    return
  endif
  var values: dict<any> = {}
  var wanted = type(get(declared, 'values', 0)) == v:t_dict ? declared.values : {}
  for value_name in sort(keys(wanted), (a, b) => ValueOrder(wanted, a, b))
    var spec = type(wanted[value_name]) == v:t_dict ? wanted[value_name] : {}
    var type_ = core.Str(get(spec, 'type', 'string'))
    var required = core.IsTrue(get(spec, 'required', false))
    var current = get(row, value_name, v:none)
    var default = type(current) == v:t_none || core.IsNull(current) ? '' : core.Str(current)
    var text = Ask(printf('%s %s (%s%s): ', name, value_name, type_, required ? '' : ', optional'), default)
    if type(text) != v:t_string
      core.Notify(name .. ' not sent: cancelled', 'info')
      return
    endif
    if text == '' && (!required || type_ != 'string')
      if required
        core.Notify(printf('%s not sent: %s is required (%s)', name, value_name, ArticleFor(type_)))
        return
      endif
      continue
    endif
    var [value, wrong] = Parse(text, type_)
    if wrong != ''
      core.Notify(printf('%s not sent: %s must be %s (got "%s")', name, value_name, wrong, text))
      return
    endif
    values[value_name] = value
  endfor
  if !empty(wanted)
    params.values = values
  endif
  var conn = view.conn
  rpc.Request(conn, 'performAction', params, (err, answer) => {
    if type(err) == v:t_dict
      core.Notify(printf('%s: %s failed: %s', view.action_source, name, render.RpcErrorText(err)))
      return
    endif
    if type(answer) != v:t_dict || type(get(answer, 'mutation', 0)) != v:t_string
      return
    endif
    var identity = get(params, 'identity', v:none)
    if optimistic == 'insert'
      identity = has_key(values, view.action_key) ? values[view.action_key] : 'pending:' .. answer.mutation
    endif
    if type(identity) == v:t_none
      return
    endif
    # The answer comes after the optimistic change's didChange: the row is shown, and
    # now marked. Every list over that source marks it.
    for other in ListsOver(conn, view.action_source)
      other.mutations[answer.mutation] = {action: name, identity: json_encode(identity)}
      Redraw(other, json_encode(identity))
    endfor
  })
enddef

# :Datasourced cancel-action and <Plug>(datasourced-cancel-action): the mutations not
# settled yet of the row under the cursor are cancelled (cancelMutation); each rolls
# back, and its didSettleMutation takes the mark away.
export def CancelPending(view: dict<any>)
  if empty(view)
    return
  endif
  if empty(Names(view))
    core.Notify(view.source .. ': its sources declare no actions', 'warning')
    return
  endif
  var entry = buflines.EntryAt(view, line('.'))
  var row = !empty(entry) && !entry.pending && type(entry.value) == v:t_dict && !core.IsPlaceholder(entry.value) ? entry.value : {}
  if empty(row) || view.action_key == '' || !has_key(row, view.action_key)
    core.Notify('cancel-action needs a row: put the cursor on one', 'warning')
    return
  endif
  var identity = json_encode(row[view.action_key])
  var ids = keys(filter(copy(view.mutations), (_, m) => m.identity == identity))
  if empty(ids)
    core.Notify('no action pending on this row: nothing to cancel', 'info')
    return
  endif
  # Newest first: cancelling an older one first would let the daemon send the next one
  # waiting behind it, which, on its way to the server, could no longer be cancelled.
  sort(ids, (a, b) => MutationNumber(b) - MutationNumber(a))
  for id in ids
    CancelOne(view.conn, view.action_source, id, view.mutations[id].action)
  endfor
enddef

def CancelOne(conn: dict<any>, source: string, id: string, action: string)
  rpc.Request(conn, 'cancelMutation', {source: source, mutation: id}, (err, _) => {
    if type(err) != v:t_dict
      return  # its didSettleMutation (rolledBack, kind cancelled) follows
    endif
    var text = render.RpcErrorText(err)
    if text =~ 'in flight'
      text = 'it is on its way to the server, whose answer settles it'
    endif
    core.Notify(printf('%s: %s not cancelled: %s', source, action, text), 'warning')
  })
enddef

# The order the daemon made a mutation in: the number of its ID ("m12": 12).
def MutationNumber(id: string): number
  return str2nr(matchstr(id, '\d\+$'))
enddef

# Required values first, then in name order.
def ValueOrder(wanted: dict<any>, a: string, b: string): number
  var ra = type(wanted[a]) == v:t_dict && core.IsTrue(get(wanted[a], 'required', false))
  var rb = type(wanted[b]) == v:t_dict && core.IsTrue(get(wanted[b], 'required', false))
  if ra != rb
    return ra ? -1 : 1
  endif
  return a < b ? -1 : a > b ? 1 : 0
enddef

def ArticleFor(type_: string): string
  return type_ == 'integer' ? 'an integer' : 'a ' .. type_
enddef

def ListsOver(conn: dict<any>, source: string): list<any>
  return filter(values(core.Views()), (_, v) => v.conn is conn && !v.detached
    && (v.source == source || has_key(v.under, source)) && v.action_source == source)
enddef

# Whether a row has a mutation not settled yet.
export def IsPending(view: dict<any>, value: any): bool
  var mutations = get(view, 'mutations', {})
  if empty(mutations) || type(value) != v:t_dict || view.action_key == '' || !has_key(value, view.action_key)
    return false
  endif
  var identity = json_encode(value[view.action_key])
  for mutation in values(mutations)
    if mutation.identity == identity
      return true
    endif
  endfor
  return false
enddef

# Draws again the rows of an identity (JSON-encoded): their mark comes or goes. A
# counted list's section holds only the rows read (buflines.LazySection), keyed by their
# item: those are drawn again; the others get their mark when they are read.
def Redraw(view: dict<any>, identity: string)
  var key = view.action_key
  if key == ''
    return
  endif
  var s = 0
  for section in view.sections
    # [item, entry]: every row of an ordinary list, the rows read of a counted one.
    var held = buflines.IsLazy(section)
      ? mapnew(items(section.loaded), (_, pair) => [str2nr(pair[0]), pair[1]])
      : mapnew(section.rows, (i, entry) => [i, entry])
    for [i, entry] in held
      if !entry.pending && type(entry.value) == v:t_dict && has_key(entry.value, key)
          && json_encode(entry.value[key]) == identity
        var line = buflines.RowLine(view, s, i)
        buflines.Edit(view, line, line + 1, [render.RowItem(view, entry, i)])
      endif
    endfor
    s += 1
  endfor
enddef

# dataSource/didSettleMutation: committed and rolled back mutations leave their rows'
# marks; a rollback says why; a queued one stays marked, to be sent again.
export def OnSettle(conn: dict<any>, params: dict<any>)
  var mutation = core.Str(get(params, 'mutation', ''))
  var status = core.Str(get(params, 'status', ''))
  var action = core.Str(get(params, 'action', ''))
  var lists = ListsOver(conn, params.source)
  if status == 'committed' || status == 'rolledBack'
    for view in lists
      if has_key(view.mutations, mutation)
        var identity = remove(view.mutations, mutation).identity
        Redraw(view, identity)
      endif
    endfor
  endif
  var failure = type(get(params, 'error', 0)) == v:t_dict ? params.error : {}
  var words = core.Str(get(failure, 'serverMessage', ''))
  if words == ''
    words = core.Str(get(failure, 'message', get(failure, 'kind', 'unknown error')))
  endif
  if status == 'rolledBack' && get(failure, 'kind', '') == 'cancelled'
    # Asked for (cancel-action): no failure to report, only what became of the change.
    core.Notify(printf('%s: %s cancelled: the change is undone', params.source, action), 'info')
  elseif status == 'rolledBack'
    core.Notify(printf('%s: %s rolled back: %s', params.source, action, words))
  elseif status == 'queued'
    core.Notify(printf('%s: %s not sent yet, to be sent again: %s', params.source, action, words), 'warning')
  endif
enddef
