vim9script
# A credential sent only where the person allowed it: a list whose source has a header
# value from the daemon's environment ({"env": NAME}) fails its load with kind
# credentialNotAllowed until allowed; the plugin asks (confirm(), or g:datasourced_confirm),
# and a yes is recorded with allowCredential and the list loads again.
#
# The fixture API's /_echo/headers answers the request's headers: the row shows whether
# the credential was sent. Each test's daemon has the token in its environment and an
# $XDG_CONFIG_HOME of its own (a new folder), where its allowances are recorded: never
# the user's. Vim in Ex mode cannot ask (confirm() answers its default, No): the tests
# answer through g:datasourced_confirm; tests/capture.sh's credential scene answers the
# real confirm() on a real screen.
import './harness.vim' as H

const TOKEN = 'DATASOURCED_TEST_TOKEN'
const SECRET = 's3cret-token'

var asked: list<string> = []
var answer = false

def TestConfirm(question: string): bool
  add(asked, question)
  return answer
enddef
const SID = expand('<SID>')

# g:datasourced_confirm answers `yes` from now on, noting each question. (This script's
# function: the tests leave no global function behind.)
def Answering(yes: bool)
  asked = []
  answer = yes
  g:datasourced_confirm = SID .. 'TestConfirm'
enddef

# The daemon's command line: the token in its environment, a new config folder.
def DaemonWithToken(daemon: string, home: string): list<string>
  return ['env', TOKEN .. '=' .. SECRET, 'XDG_CONFIG_HOME=' .. home, daemon]
enddef

def Echo(name: string): dict<any>
  return {title: name, columns: ['authorization'], sources: [{name: name, kind: 'remote', apiPath: '/_echo/headers',
    remoteConfiguration: {baseURL: H.base_url, headers: {Authorization: {env: TOKEN, prefix: 'Bearer '}}}}]}
enddef

def Sent(buf: number): bool
  return getbufline(buf, 1, '$') == ['Bearer ' .. SECRET]
enddef

def Allowances(home: string): string
  return home .. '/datasourced/allowed-credentials.json'
enddef

export def Run(daemon: string)
  # A tree from before allowCredential (neither the daemon nor Protocol/openrpc.json has
  # it) skips these tests; once either has it, they run.
  var documented = join(readfile('../../../Protocol/openrpc.json'), "\n") =~ '"allowCredential"'
  var initialize = '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}'
  var served = system(shellescape(daemon) .. ' 2>/dev/null',
    printf("Content-Length: %d\r\n\r\n%s", len(initialize), initialize)) =~ '"allowCredential"'
  if !documented && !served
    H.Out('SKIP the credential tests: neither the daemon nor Protocol/openrpc.json has allowCredential')
    return
  endif
  const question = printf('Allow the daemon to send the environment variable %s to %s?', TOKEN, H.base_url)

  H.Test('a list that needs a credential asks, and a yes allows it and loads the list', () => {
    var home = tempname()
    g:datasourced_cmd = DaemonWithToken(daemon, home)
    Answering(true)
    var buf = datasourced#OpenSpec(Echo('echoYes'))
    H.Expect(H.WaitUntil(() => Sent(buf)), 'the row: the headers sent, the credential among them', getbufline(buf, 1, '$'))
    H.ExpectEqual([question], asked, 'the questions asked')
    H.ExpectMessage('info', ['allowed the environment variable ' .. TOKEN .. ' to be sent to ' .. H.base_url, home])
    H.Expect(filereadable(Allowances(home)), 'the allowance recorded in the daemon''s config folder')
    H.Expect(join(readfile(Allowances(home))) !~ SECRET, 'the variable named, not its value')
    H.ExpectStatus(buf, 'loaded 1')
    H.ExpectEqual([], H.MessagesWith('error', []), 'error messages')
    execute 'bwipeout! ' .. buf
  })

  H.Test('a no leaves the failure shown and nothing recorded; refresh asks again', () => {
    var home = tempname()
    g:datasourced_cmd = DaemonWithToken(daemon, home)
    Answering(false)
    var buf = datasourced#OpenSpec(Echo('echoNo'))
    H.ExpectMessage('warning', ['the environment variable ' .. TOKEN .. ' not sent to ' .. H.base_url
      .. ': not allowed (r asks again)'])
    H.ExpectEqual([question], asked, 'the questions asked')
    H.Expect(H.WaitUntil(() => getbufvar(buf, 'datasourced_status', '') =~ '^error: '), 'the status says the load failed',
      getbufvar(buf, 'datasourced_status', ''))
    H.Expect(!filereadable(Allowances(home)), 'nothing recorded')
    Answering(true)
    datasourced#Refresh(buf)
    H.Expect(H.WaitUntil(() => Sent(buf)), 'the row after the yes', getbufline(buf, 1, '$'))
    H.ExpectEqual([question], asked, 'the questions asked by the refresh')
    execute 'bwipeout! ' .. buf
  })

  H.Test('without g:datasourced_confirm, confirm() asks (No, in Ex mode, where nobody can answer)', () => {
    var home = tempname()
    g:datasourced_cmd = DaemonWithToken(daemon, home)
    unlet! g:datasourced_confirm
    var buf = datasourced#OpenSpec(Echo('echoConfirm'))
    H.ExpectMessage('warning', ['not sent to ' .. H.base_url])
    H.Expect(!filereadable(Allowances(home)), 'nothing recorded')
    execute 'bwipeout! ' .. buf
  })

  H.Test('two lists waiting on one credential ask once, and both load after the yes', () => {
    g:datasourced_cmd = DaemonWithToken(daemon, tempname())
    Answering(true)
    var first = datasourced#OpenSpec(Echo('echoFirst'))
    var second = datasourced#OpenSpec(Echo('echoSecond'))
    H.Expect(H.WaitUntil(() => Sent(first) && Sent(second)), 'both lists loaded',
      [getbufline(first, 1, '$'), getbufline(second, 1, '$')])
    H.ExpectEqual([question], asked, 'the questions asked')
    execute 'bwipeout! ' .. first .. ' ' .. second
  })

  H.Test('an allowance outlives its daemon: the next one loads without asking', () => {
    var home = tempname()
    g:datasourced_cmd = DaemonWithToken(daemon, home)
    Answering(true)
    var buf = datasourced#OpenSpec(Echo('echoKept'))
    H.Expect(H.WaitUntil(() => Sent(buf)), 'the first daemon''s list', getbufline(buf, 1, '$'))
    execute 'bwipeout! ' .. buf
    Answering(false)
    g:datasourced_cmd = DaemonWithToken(daemon, home) + ['--log-level', 'info']  # another daemon
    buf = datasourced#OpenSpec(Echo('echoKept'))
    H.Expect(H.WaitUntil(() => Sent(buf)), 'the second daemon''s list', getbufline(buf, 1, '$'))
    H.ExpectEqual([], asked, 'the questions asked')
    execute 'bwipeout! ' .. buf
  })

  H.Test('the question comes from the failure, a multi source''s children included', () => {
    var lacked = {kind: 'credentialNotAllowed', message: 'm', credential: {file: '~/.config/x/token'},
      origin: 'https://api.example.com:8443'}
    var requests = datasourced#CredentialRequests({kind: 'children', message: 'm', failures: [
      {source: 'a', error: lacked}, {source: 'b', error: lacked},
      {source: 'c', error: {kind: 'http', message: 'HTTP status 500'}}]})
    H.ExpectEqual(1, len(requests), 'one request for the one credential and origin')
    H.ExpectEqual('Allow the daemon to send the file ~/.config/x/token to https://api.example.com:8443?',
      datasourced#CredentialQuestion(requests[0]), 'the question')
    H.ExpectEqual([], datasourced#CredentialRequests({kind: 'http', message: 'HTTP status 500'}), 'another failure')
  })

  unlet! g:datasourced_confirm
  g:datasourced_cmd = [daemon]
enddef
