vim9script
# The test harness of the headless tests (tests/main.vim runs them). Vim in Ex mode
# (-es) runs the tests as one script; the daemon's answers and notifications are handled
# whenever a test waits (:sleep lets channel callbacks run), as they would between a
# user's keys. Waits poll a condition up to a generous deadline: the deadline is for
# failure, never a pause.

export const TIMEOUT = 10000  # ms
export var passed = 0
export var failed = 0
export var base_url = ''
var fixtures_job: any = v:null
var fixtures_announce = ''

export const LOADING = '  ⋯ loading…'

export def Out(text: string)
  writefile([text], '/dev/stdout', 'a')
enddef

# Waits until Pred() is true (an error counts as false); false after timeout_ms.
export def WaitUntil(Pred: func(): bool, timeout_ms = TIMEOUT): bool
  var start = reltime()
  while true
    try
      if Pred()
        return true
      endif
    catch
    endtry
    if reltimefloat(reltime(start)) * 1000 > timeout_ms
      return false
    endif
    sleep 10m
  endwhile
  return false
enddef

export def Fail(message: string)
  throw 'test failure: ' .. message
enddef

export def ExpectEqual(expected: any, got: any, what: string)
  if type(expected) != type(got) || expected != got
    Fail(printf("%s:\n    expected %s\n    got      %s", what, string(expected), string(got)))
  endif
enddef

export def Expect(condition: bool, what: string, got: any = '')
  if !condition
    Fail(what .. (type(got) == v:t_string && got == '' ? '' : "\n    got " .. string(got)))
  endif
enddef

export def ExpectLines(buf: number, expected: list<string>, what: string)
  WaitUntil(() => getbufline(buf, 1, '$') == expected)
  ExpectEqual(expected, getbufline(buf, 1, '$'), what)
enddef

export def ExpectStatus(buf: number, expected: string)
  WaitUntil(() => getbufvar(buf, 'datasourced_status', '') == expected)
  ExpectEqual(expected, getbufvar(buf, 'datasourced_status', ''), 'b:datasourced_status')
enddef

# The messages echoed at `level` ('' for any) holding every one of `words`.
export def MessagesWith(level: string, words: list<string>): list<any>
  return filter(copy(datasourced#Messages()), (_, m) => (level == '' || m.level == level)
    && len(filter(copy(words), (_, w) => stridx(m.text, w) < 0)) == 0)
enddef

export def ExpectMessage(level: string, words: list<string>)
  WaitUntil(() => !empty(MessagesWith(level, words)))
  if empty(MessagesWith(level, words))
    Fail(printf("a message at level %s holding %s\n    got %s", level, string(words), string(datasourced#Messages())))
  endif
enddef

# $DATASOURCED_TEST_FILTER (plain text) runs only the tests whose names hold it: for a
# developer running one test, never set by run.sh.
const filter_text = getenv('DATASOURCED_TEST_FILTER') == v:null ? '' : getenv('DATASOURCED_TEST_FILTER')

export def Test(name: string, Body: func())
  if filter_text != '' && stridx(name, filter_text) < 0
    return
  endif
  datasourced#ClearMessages()
  v:errmsg = ''
  var problem = ''
  try
    Body()
  catch
    problem = v:exception =~ '^test failure: ' ? v:exception[14 :] : v:exception .. ' (' .. v:throwpoint .. ')'
  endtry
  # An error message anywhere (a callback, an autocommand) is never allowed.
  if problem == '' && v:errmsg != ''
    problem = 'an error message was shown: ' .. v:errmsg
  endif
  if problem == ''
    passed += 1
    Out('PASS ' .. name)
  else
    failed += 1
    Out('FAIL ' .. name .. "\n  " .. problem)
  endif
enddef

# Types keys as a user does, in Normal mode. Ex mode has no main loop, which is what
# fires CursorMoved after the keys a user types; it is fired here as that loop would.
export def Press(keys: string)
  feedkeys(keys, 'xt')
  doautocmd <nomodeline> CursorMoved
enddef

# Waits until the daemon of a list has answered a ping sent now: every message it sent
# before (the events of what the list asked for) has been handled by then.
export def Settle(buf: number)
  var conn = datasourced#View(buf).conn
  var state = {answered: false}
  ch_sendexpr(conn.channel, {method: 'ping', params: {}}, {callback: (_, _) => {
    state.answered = true
  }})
  Expect(WaitUntil(() => state.answered), 'an answer to ping')
enddef

# Starts the fixture API (`datasourced fixtures FILE` prints its base URL once
# listening and serves until its stdin closes); sets base_url.
export def StartFixtures(daemon: string, file: string): bool
  base_url = ''
  fixtures_job = job_start([daemon, 'fixtures', file], {out_mode: 'nl', err_io: 'null',
    out_cb: (_, line) => {
      try
        var announced = json_decode(line)
        if type(announced) == v:t_dict && has_key(announced, 'baseURL')
          base_url = announced.baseURL
        endif
      catch
      endtry
    }})
  return WaitUntil(() => base_url != '')
enddef

export def StopFixtures()
  if type(fixtures_job) == v:t_job
    ch_close_in(fixtures_job)
    WaitUntil(() => job_status(fixtures_job) != 'run')
    if job_status(fixtures_job) == 'run'
      job_stop(fixtures_job)
    endif
  endif
enddef

# Starts the GraphQL API of Tests/Frameworks/graphqlapi.py (Strawberry) and the
# Elasticsearch-shaped search of Tests/Frameworks/postapis.py: Clients/tests/graphql-server.py
# serves both, prints their base URLs as `datasourced fixtures` does and serves until its
# stdin closes. Returns the GraphQL API's base URL, '' if it did not start; SearchURL()
# gives the search's.
var graphql_job: any = v:null
var search_url = ''
export def StartGraphQL(repo: string): string
  var url = ''
  graphql_job = job_start(['python3', repo .. '/Clients/tests/graphql-server.py'], {out_mode: 'nl', err_io: 'null',
    out_cb: (_, line) => {
      try
        var announced = json_decode(line)
        if type(announced) == v:t_dict && has_key(announced, 'baseURL')
          url = announced.baseURL
          search_url = get(announced, 'searchURL', '')
        endif
      catch
      endtry
    }})
  WaitUntil(() => url != '')
  return url
enddef

# The base URL of the search StartGraphQL() started ('' before, or if it did not say).
export def SearchURL(): string
  return search_url
enddef

export def StopGraphQL()
  if type(graphql_job) == v:t_job
    ch_close_in(graphql_job)
    WaitUntil(() => job_status(graphql_job) != 'run')
    if job_status(graphql_job) == 'run'
      job_stop(graphql_job)
    endif
  endif
enddef

# For each section of a list: whether its row table is typed (list<dict<any>>), which a
# list holding many rows needs (model.vim): a typed table refuses a row that is no dict.
export def RowTablesTyped(buf: number): list<bool>
  return mapnew(copy(datasourced#View(buf).sections), (_, section) => {
    try
      add(section.rows, 0)
    catch /E1012/
      return true
    endtry
    remove(section.rows, -1)
    return false
  })
enddef

# A row of a list with the columns id (4 wide), title (18 wide) and year.
export def Row(id: number, title: string, year: number): string
  return printf('%-4s  %-18s  %d', id, title, year)
enddef
