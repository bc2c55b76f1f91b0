vim9script
# A source's actions on rows (Clients/specs/books.json's "books": edit, delete, add)
# against the fixture API: committed, rolled back with the server's words, queued and
# left pending, dim and marked. The prompts are answered by g:datasourced_input. In
# order: the tests use the list of the first one.
import './harness.vim' as H

const Row = H.Row
const LOADING = H.LOADING
const PAGE1 = ['## science fiction', Row(1, 'Dune', 1950), Row(4, 'Solaris', 1959),
  '## mystery', Row(2, 'Gaudy Night', 1953), '## poetry', Row(3, 'Ariel', 1956), LOADING]
const MARK = '  ⋯ pending'

var books = 0
var answers: list<string> = []
var prompts: list<any> = []

# Answers the prompts in turn, noting what each asked.
def Answer(prompt: string, default: string, choices: list<string>): any
  add(prompts, [prompt, default, choices])
  return empty(answers) ? v:null : remove(answers, 0)
enddef

const SID = expand('<SID>')

def Act(line: number, command: string, given: list<string>)
  answers = copy(given)
  prompts = []
  cursor(line, 1)
  execute command
enddef

# Closes every list, and waits for their daemons to end: the actions' list starts on a
# daemon of its own, its rows as the fixture API has them.
def CloseAll()
  var jobs = []
  for buf in range(1, bufnr('$'))
    var view = datasourced#View(buf)
    if !empty(view)
      if !empty(view.conn) && index(jobs, view.conn.job) < 0
        add(jobs, view.conn.job)
      endif
      datasourced#Close(buf)
    endif
  endfor
  H.Expect(H.WaitUntil(() => empty(filter(copy(jobs), (_, j) => job_status(j) == 'run'))), 'the daemons ended')
enddef

# Opens the books, page one shown and its source's actions known.
def OpenBooks(): number
  CloseAll()
  var buf = datasourced#Open('specs/books.json')
  H.ExpectLines(buf, PAGE1, 'page one')
  H.Expect(H.WaitUntil(() => datasourced#View(buf).action_source != ''), 'the source''s actions known')
  return buf
enddef

# A counted list of /v1/million's rows whose "edit" is sent to the fixture API's
# PATCH /v1/books/3, which answers 503 with Retry-After 3600: the daemon keeps the edit
# queued, its row pending, until it is cancelled.
def EditableMillion(): dict<any>
  return {name: 'editableMillion', kind: 'paginated', identityKey: 'id', keyPath: 'rows', pageSize: 100,
    placeholders: 'counted', jumpThreshold: 300, apiPath: '/v1/million',
    remoteConfiguration: {baseURL: H.base_url}, columns: ['title'],
    actions: {edit: {method: 'PATCH', path: '/v1/books/3', body: {title: '{$values.title}'},
      values: {title: {type: 'string', required: true}}, optimistic: 'update'}}}
enddef

def Settled(buf: number): bool
  return empty(datasourced#View(buf).mutations)
enddef

# The status of each mutation the daemon holds pending for a source (describeSource).
def DaemonPending(buf: number, source: string): list<string>
  var state: dict<any> = {answer: v:null}
  ch_sendexpr(datasourced#View(buf).conn.channel, {method: 'describeSource', params: {source: source}},
    {callback: (_, response) => {
      state.answer = get(response, 'result', {})
    }})
  H.Expect(H.WaitUntil(() => type(state.answer) == v:t_dict), 'an answer to describeSource')
  return mapnew(get(state.answer, 'pendingMutations', []), (_, m) => m.status)
enddef

# Requests of a method the list's daemon was sent by the plugin.
def Requests(buf: number, method: string): number
  return get(datasourced#View(buf).conn.requests, method, 0)
enddef

export def Run(daemon: string)
  # This script's function, by name: the tests leave no global function behind.
  g:datasourced_input = SID .. 'Answer'

  H.Test('actions: :Datasourced action completes the names the source declares', () => {
    books = OpenBooks()
    H.ExpectEqual(['add', 'delete', 'edit'], getcompletion('Datasourced action ', 'cmdline'), 'completion')
    H.ExpectEqual(['delete'], getcompletion('Datasourced action d', 'cmdline'), 'completion of d')
    H.ExpectEqual('books', datasourced#View(books).action_source, 'the source that declares them')
  })

  H.Test('actions: edit of id 1 to "Dune Messiah", asked with its title, is committed', () => {
    Act(2, 'Datasourced action edit', ['Dune Messiah'])
    H.ExpectEqual([['edit title (string): ', 'Dune', []]], prompts, 'the prompt and the title shown first')
    H.ExpectLines(books, PAGE1[: 0] + [Row(1, 'Dune Messiah', 1950)] + PAGE1[2 :], 'the new title')
    H.Expect(H.WaitUntil(() => Settled(books)), 'the mutation settled')
    H.ExpectLines(books, PAGE1[: 0] + [Row(1, 'Dune Messiah', 1950)] + PAGE1[2 :], 'the title, committed, no mark')
    H.ExpectEqual([], prop_list(2, {bufnr: books}), 'no DatasourcedPending on the row')
    H.ExpectEqual([], datasourced#Messages(), 'no message')
  })

  H.Test('actions: edit of id 2 to "" is rolled back: the old title, the server''s words', () => {
    Act(5, 'Datasourced action edit', [''])
    H.ExpectMessage('error', ['datasourced: books: edit rolled back: title: This field may not be blank.'])
    H.ExpectLines(books, PAGE1[: 0] + [Row(1, 'Dune Messiah', 1950)] + PAGE1[2 :], 'Gaudy Night again')
    H.Expect(Settled(books), 'no mutation pending')
    H.ExpectEqual([], prop_list(5, {bufnr: books}), 'no DatasourcedPending on the row')
  })

  H.Test('actions: a value of the wrong type is refused, nothing sent', () => {
    Act(2, 'Datasourced action add', ['Beloved', 'fiction', 'nineteen'])
    H.ExpectEqual(['add title (string): ', 'add genre (string, optional): ', 'add year (integer, optional): '],
      mapnew(copy(prompts), (_, p) => p[0]), 'the prompts, required first')
    H.ExpectMessage('error', ['datasourced: add not sent: year must be an integer (got "nineteen")'])
    H.Settle(books)
    H.ExpectEqual(PAGE1[: 0] + [Row(1, 'Dune Messiah', 1950)] + PAGE1[2 :], getbufline(books, 1, '$'), 'no change')
  })

  H.Test('actions: add of Beloved, chosen from the list, is inserted and committed as id 99', () => {
    Act(2, 'Datasourced action', ['add', 'Beloved', 'fiction', '1987'])
    H.ExpectEqual(['Action:', '', ['add', 'delete', 'edit']], prompts[0], 'the choice')
    H.Expect(H.WaitUntil(() => Settled(books)), 'the mutation settled')
    H.ExpectLines(books, ['## fiction', Row(99, 'Beloved', 1987)] + PAGE1[: 0] + [Row(1, 'Dune Messiah', 1950)] + PAGE1[2 :], 'Beloved, id 99')
    H.ExpectEqual([], datasourced#Messages(), 'no message')
  })

  H.Test('actions: delete of id 3 by <Plug>(datasourced-action) removes its row', () => {
    answers = ['delete']
    prompts = []
    cursor(index(getbufline(books, 1, '$'), Row(3, 'Ariel', 1956)) + 1, 1)
    execute "normal \<Plug>(datasourced-action)"
    H.Expect(H.WaitUntil(() => Settled(books)), 'the mutation settled')
    H.ExpectLines(books, ['## fiction', Row(99, 'Beloved', 1987)] + PAGE1[: 0] + [Row(1, 'Dune Messiah', 1950)] + PAGE1[2 : 4] + [LOADING], 'Ariel and poetry gone')
    H.ExpectEqual([], datasourced#Messages(), 'no message')
  })

  H.Test('actions: a queued edit (503) stays shown, dim and marked as pending', () => {
    books = OpenBooks()
    Act(7, 'Datasourced action edit', ['Ariel II'])
    H.ExpectMessage('warning', ['datasourced: books: edit not sent yet, to be sent again: Down for maintenance.'])
    H.ExpectLines(books, PAGE1[: 5] + [Row(3, 'Ariel II', 1956) .. MARK, LOADING], 'the new title, marked')
    H.ExpectEqual('DatasourcedPending', get(get(prop_list(7, {bufnr: books}), 0, {}), 'type', ''), 'the row''s text property')
    H.ExpectEqual('Comment', synIDattr(synIDtrans(hlID('DatasourcedPending')), 'name'), 'DatasourcedPending links to Comment')
    H.ExpectEqual(1, len(datasourced#View(books).mutations), 'one mutation pending')
  })

  H.Test('actions: the list opened again marks the row still pending (describeSource''s pendingMutations)', () => {
    var again = datasourced#Open('specs/books.json')
    H.ExpectEqual(books, again, 'the same buffer')
    H.Expect(H.WaitUntil(() => len(datasourced#View(again).mutations) == 1), 'the pending mutation known')
    H.ExpectLines(again, PAGE1[: 5] + [Row(3, 'Ariel II', 1956) .. MARK, LOADING], 'the new title, marked')
    H.ExpectEqual('DatasourcedPending', get(get(prop_list(7, {bufnr: again}), 0, {}), 'type', ''), 'the row''s text property')
    H.ExpectEqual([true, true, true, true], H.RowTablesTyped(again), 'typed row tables of the sections read again')
  })

  H.Test('actions: :Datasourced cancel-action on a row with nothing pending says so and sends nothing', () => {
    var before = Requests(books, 'cancelMutation')
    Act(2, 'Datasourced cancel-action', [])
    H.ExpectMessage('info', ['datasourced: no action pending on this row: nothing to cancel'])
    H.ExpectEqual(before, Requests(books, 'cancelMutation'), 'cancelMutation requests')
    H.ExpectEqual(['queued'], DaemonPending(books, 'books'), 'Ariel''s edit, still queued by the daemon')
    H.ExpectLines(books, PAGE1[: 5] + [Row(3, 'Ariel II', 1956) .. MARK, LOADING], 'Ariel II, still marked')
  })

  H.Test('actions: :Datasourced cancel-action on the queued edit rolls it back: Ariel as it was, unmarked', () => {
    H.ExpectEqual(['cancel', 'cancel-action'], getcompletion('Datasourced canc', 'cmdline'), 'completion')
    Act(7, 'Datasourced cancel-action', [])
    H.ExpectLines(books, PAGE1, 'Ariel again, no mark')
    H.Expect(H.WaitUntil(() => Settled(books)), 'the mutation settled')
    H.ExpectEqual([], prop_list(7, {bufnr: books}), 'no DatasourcedPending on the row')
    H.ExpectEqual([], DaemonPending(books, 'books'), 'the daemon''s pending mutations')
    H.ExpectMessage('info', ['datasourced: books: edit cancelled: the change is undone'])
    H.ExpectEqual([], H.MessagesWith('error', []), 'no error')
  })

  H.Test('actions: in a counted list, pending rows are dim and marked until they settle; cancel-action by its key', () => {
    CloseAll()
    g:datasourced_keymaps = {C: 'cancel-action'}
    var million = datasourced#OpenSpec(EditableMillion(), 'the editable million')
    unlet g:datasourced_keymaps
    H.ExpectEqual('<Plug>(datasourced-cancel-action)', maparg('C', 'n'), 'C, from g:datasourced_keymaps')
    H.Expect(H.WaitUntil(() => getbufline(million, 3) == ['Row 3'] && datasourced#View(million).action_source != ''),
      'row 3 read, the source''s actions known', getbufline(million, 1, 4))
    H.Expect(datasourced#View(million).lazy, 'a counted list, read where it shows')
    Act(3, 'Datasourced action edit', ['Row 3, renamed'])
    H.ExpectMessage('warning', ['datasourced: editableMillion: edit not sent yet, to be sent again: Down for maintenance.'])
    H.Expect(H.WaitUntil(() => getbufline(million, 3) == ['Row 3, renamed' .. MARK]), 'the row marked', getbufline(million, 3))
    # A second edit of the row waits behind the queued one.
    Act(3, 'Datasourced action edit', ['Row 3, again'])
    H.Expect(H.WaitUntil(() => len(datasourced#View(million).mutations) == 2), 'two mutations pending')
    H.ExpectEqual(['queued', 'waiting'], DaemonPending(million, 'editableMillion'), 'the daemon''s pending mutations')
    H.Expect(H.WaitUntil(() => getbufline(million, 3) == ['Row 3, again' .. MARK]), 'the row marked', getbufline(million, 3))
    H.ExpectEqual(['DatasourcedPending'], mapnew(prop_list(3, {bufnr: million}), (_, p) => p.type), 'the row''s text properties')
    H.ExpectEqual(['Row 2', 'Row 4'], getbufline(million, 2) + getbufline(million, 4), 'the rows beside it, unmarked')

    datasourced#ClearMessages()
    cursor(3, 1)
    feedkeys('C', 'xt')
    H.Expect(H.WaitUntil(() => Settled(million)), 'both mutations settled')
    H.Expect(H.WaitUntil(() => getbufline(million, 3) == ['Row 3']), 'Row 3 as it was, unmarked', getbufline(million, 3))
    H.ExpectEqual([], prop_list(3, {bufnr: million}), 'no DatasourcedPending on the row')
    H.ExpectEqual([], DaemonPending(million, 'editableMillion'), 'the daemon''s pending mutations')
    H.Expect(len(H.MessagesWith('info', ['datasourced: editableMillion: edit cancelled: the change is undone'])) == 2,
      'each cancellation said', datasourced#Messages())
    H.ExpectEqual([], H.MessagesWith('warning', []), 'nothing refused (the newer one cancelled first)')
  })

  H.Test('actions: :Datasourced cancel-action on a list whose sources declare no actions says so and sends nothing', () => {
    CloseAll()
    var flat = datasourced#Open('specs/books-flat.json')
    H.ExpectStatus(flat, 'loaded 4')
    Act(1, 'Datasourced cancel-action', [])
    H.ExpectMessage('warning', ['datasourced: booksFlat: its sources declare no actions'])
    H.ExpectEqual(0, Requests(flat, 'cancelMutation'), 'cancelMutation requests')
  })

  CloseAll()
  unlet g:datasourced_input
enddef
