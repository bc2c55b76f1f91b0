vim9script
# Headless tests of datasourced.vim against the real daemon ($DATASOURCED) and the
# fixture API of Clients/fixtures.json (shared with the other clients' tests). Run by
# tests/run.sh: prints PASS/FAIL per test and "tests: N passed, M failed", and exits
# non-zero on any failure.
#   test_list.vim       lists: loading, paging, change sets, errors, cancel, close
#   test_interface.vim  what users touch: specs, commands, keys, highlights, health
#   test_filter.vim     `/` filters as you type, :Datasourced search
#   test_paging.vim     counted placeholders (a million rows) and jumps
#   test_credentials.vim  a credential sent only once allowed: the question, allowCredential
#   test_actions.vim    a source's actions on rows: committed, rolled back, queued and marked
#   test_graphql.vim    a GraphQL list (Clients/specs/graphql-books.json) and its search, and
#                       a list paged by POST bodies (Clients/specs/search-books.json)
import './harness.vim' as H
import './test_list.vim' as TL
import './test_interface.vim' as TI
import './test_filter.vim' as TF
import './test_paging.vim' as TP
import './test_credentials.vim' as TC
import './test_graphql.vim' as TG
import './test_actions.vim' as TA

const here = expand('<sfile>:p:h')
const daemon = getenv('DATASOURCED') == v:null ? '' : getenv('DATASOURCED')

def Main()
  if daemon == '' || !executable(daemon)
    H.Out('no daemon: set $DATASOURCED to the datasourced executable (got "' .. daemon .. '")')
    cquit 1
  endif
  var fixtures = fnamemodify(here .. '/../../fixtures.json', ':p')
  if !H.StartFixtures(daemon, fixtures)
    H.Out('the fixture server did not start: ' .. daemon .. ' fixtures ' .. fixtures)
    cquit 1
  endif
  H.Out(printf('Vim %d.%d (patch %s), daemon %s', v:version / 100, v:version % 100,
    matchstr(execute('version'), 'Included patches: \zs[0-9-]*'), daemon))
  g:datasourced_cmd = [daemon]
  g:datasourced_variables = {baseURL: H.base_url}
  execute 'cd ' .. fnameescape(here)
  TL.Run(daemon)
  TI.Run(daemon)
  TF.Run(daemon)
  TP.Run(daemon)
  TC.Run(daemon)
  TG.Run(daemon)
  TA.Run(daemon)
  H.Test('quitting Vim stops the daemon cleanly', () => {
    var buf = datasourced#Open('specs/books-flat.json')
    H.ExpectStatus(buf, 'loaded 4')
    var job = datasourced#View(buf).conn.job
    datasourced#Stop()
    H.Expect(H.WaitUntil(() => job_status(job) == 'dead'), 'the daemon ended', job_status(job))
    H.ExpectEqual(0, job_info(job).exitval, 'exit status')
  })
  H.StopFixtures()
  H.Out(printf('tests: %d passed, %d failed', H.passed, H.failed))
  if H.failed > 0
    cquit 1
  endif
  qall!
enddef

try
  Main()
catch
  H.Out('test harness error: ' .. v:exception .. ' (' .. v:throwpoint .. ')')
  cquit 1
endtry
