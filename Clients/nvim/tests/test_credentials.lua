-- A credential sent only where the person allowed it: a list whose source has a header
-- value from the daemon's environment ({"env": NAME}) fails its load with kind
-- credentialNotAllowed until allowed; the plugin asks (confirm()), and a yes is recorded
-- with allowCredential and the list loads again. Run by tests/main.lua.
--
-- The fixture API's /_echo/headers answers the request's headers: the row shows whether
-- the credential was sent. Each test's daemon has the token in its environment and an
-- $XDG_CONFIG_HOME of its own (a new folder), where its allowances are recorded: never
-- the user's. confirm() is answered by the test (headless Neovim has no one to ask);
-- tests/capture.sh's credential scene answers the real prompt on a real screen.

return function(H, ds, ctx)
  local test, expect, expect_equal = H.test, H.expect, H.expect_equal
  local expect_lines, expect_note, LEVELS = H.expect_lines, H.expect_note, H.LEVELS
  local TOKEN, SECRET = 'DATASOURCED_TEST_TOKEN', 's3cret-token'

  -- A tree from before allowCredential (neither the daemon nor Protocol/openrpc.json has
  -- it) skips these tests; once either has it, they run.
  local openrpc = table.concat(vim.fn.readfile(ctx.root .. '/../../Protocol/openrpc.json'), '\n')
  local conn = ds.connection()
  H.wait_until(function()
    return conn.initialized
  end)
  if not (conn:serves('allowCredential') or openrpc:find('"allowCredential"', 1, true)) then
    H.out('SKIP the credential tests: neither the daemon nor Protocol/openrpc.json has allowCredential')
    return
  end

  --- A daemon command line with the token in its environment and a new config folder.
  local function daemon_with_token()
    local home = vim.fn.tempname()
    return { 'env', TOKEN .. '=' .. SECRET, 'XDG_CONFIG_HOME=' .. home, ctx.daemon }, home
  end

  local function echo(name)
    return {
      name = name, kind = 'remote', apiPath = '/_echo/headers',
      remoteConfiguration = { baseURL = H.base_url,
        headers = { Authorization = { env = TOKEN, prefix = 'Bearer ' } } },
      format = function(headers)
        return 'authorization: ' .. tostring(headers.authorization)
      end,
    }
  end

  -- Room on the command line for the messages whole (they are cut to fit it).
  local columns = vim.o.columns
  vim.o.columns = 220

  local SENT = { 'authorization: ' .. 'Bearer ' .. SECRET }
  local QUESTION = 'Allow the daemon to send the environment variable ' .. TOKEN .. ' to ' .. H.base_url .. '?'

  --- confirm() answers `answer` (1: Yes, 2: No) from now on; returns the questions asked.
  local function answering(answer)
    local asked = {}
    vim.fn.confirm = function(question, choices, default)
      table.insert(asked, { question = question, choices = choices, default = default })
      return answer
    end
    return asked
  end

  local function restore_confirm()
    vim.fn.confirm = nil -- vim.fn makes the real one again when next asked
  end

  local function allowances(home)
    return home .. '/datasourced/allowed-credentials.json'
  end

  test('a list that needs a credential asks, and a yes allows it and loads the list', function()
    local asked = answering(1)
    local cmd, home = daemon_with_token()
    local buf = ds.open(echo('echoYes'), { cmd = cmd })
    expect_lines(buf, SENT, 'the row: the headers sent, the credential among them')
    restore_confirm()
    expect_equal(1, #asked, 'questions asked')
    expect_equal(QUESTION, asked[1].question, 'the question')
    expect_equal({ '&Yes\n&No', 2 }, { asked[1].choices, asked[1].default }, 'the choices, No by default')
    expect_note(LEVELS.INFO, 'allowed the environment variable ' .. TOKEN .. ' to be sent to ' .. H.base_url)
    expect(vim.fn.filereadable(allowances(home)) == 1, 'the allowance recorded in the daemon\'s config folder')
    expect(not vim.fn.readfile(allowances(home))[1]:find(SECRET, 1, true), 'the variable named, not its value')
    H.expect_status(buf, 'loaded 1')
    expect_equal({}, H.notes_with(LEVELS.ERROR), 'error messages')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('a no leaves the failure shown and nothing recorded; refresh asks again', function()
    local asked = answering(2)
    local cmd, home = daemon_with_token()
    local buf = ds.open(echo('echoNo'), { cmd = cmd })
    expect_note(LEVELS.WARN, 'the environment variable ' .. TOKEN .. ' not sent to ' .. H.base_url
      .. ': not allowed (r asks again)')
    expect_equal(1, #asked, 'questions asked')
    H.wait_until(function()
      return vim.startswith(ds.status(buf), 'error: ')
    end)
    expect(vim.startswith(ds.status(buf), 'error: '), 'the status says the load failed', ds.status(buf))
    expect(vim.fn.filereadable(allowances(home)) == 0, 'nothing recorded')
    asked = answering(1)
    ds.refresh(buf)
    expect_lines(buf, SENT, 'the rows after the yes')
    restore_confirm()
    expect_equal(1, #asked, 'questions asked by the refresh')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('two lists waiting on one credential ask once, and both load after the yes', function()
    local asked = answering(1)
    local cmd = daemon_with_token()
    local first = ds.open(echo('echoFirst'), { cmd = cmd })
    local second = ds.open(echo('echoSecond'), { cmd = cmd })
    expect_lines(first, SENT, 'the first list')
    expect_lines(second, SENT, 'the second list')
    restore_confirm()
    expect_equal(1, #asked, 'questions asked')
    vim.cmd('bwipeout! ' .. first .. ' ' .. second)
  end)

  test('an allowance outlives its daemon: the next one loads without asking', function()
    local cmd, home = daemon_with_token()
    answering(1)
    local buf = ds.open(echo('echoKept'), { cmd = cmd })
    expect_lines(buf, SENT, 'the first daemon\'s list')
    vim.cmd('bwipeout! ' .. buf)
    local asked = answering(2)
    -- Another command line: another daemon, with the same config folder.
    buf = ds.open(echo('echoKept'), { cmd = { 'env', TOKEN .. '=' .. SECRET, 'XDG_CONFIG_HOME=' .. home, ctx.daemon,
      '--log-level', 'info' } })
    expect_lines(buf, SENT, 'the second daemon\'s list')
    restore_confirm()
    expect_equal(0, #asked, 'questions asked')
    vim.cmd('bwipeout! ' .. buf)
  end)

  test('the question and the requests come from the failure, a multi source\'s children included', function()
    local lacked = { kind = 'credentialNotAllowed', message = 'm', credential = { file = '~/.config/x/token' },
      origin = 'https://api.example.com:8443' }
    local requests = ds.credential_requests({ kind = 'children', message = 'm',
      failures = { { source = 'a', error = lacked }, { source = 'b', error = lacked },
        { source = 'c', error = { kind = 'http', message = 'HTTP status 500' } } } })
    expect_equal(1, #requests, 'one request for the one credential and origin')
    expect_equal('Allow the daemon to send the file ~/.config/x/token to https://api.example.com:8443?',
      ds.credential_question(requests[1]), 'the question')
    expect_equal({}, ds.credential_requests({ kind = 'http', message = 'HTTP status 500' }), 'another failure')
  end)

  vim.o.columns = columns
end
