-- Headless tests of datasourced.nvim against the real daemon ($DATASOURCED) and the
-- fixture API of Clients/fixtures.json (shared with the Python client's tests). Run by
-- tests/run.sh on each Neovim; prints PASS/FAIL per test and "tests: N passed, M failed",
-- and exits non-zero on any failure.
--   test_list.lua       lists: loading, paging, change sets, errors, the daemon's life
--   test_interface.lua  what users touch: commands, keys, highlights, help, health, setup
--   test_freshness.lua  protocol 1.2: lists opened from the persisted cache, live lists
--   test_listspec.lua   the list spec shared by every client (Clients/specs)
--   test_rough_edges.lua  what a new user hit (issue 32): reopened failures, messages...
--   test_filter.lua     issue 30: `/` filters as you type, :Datasourced search
--   test_paging.lua     issue 31: paging backwards, load states, retry, counted placeholders
--   test_credentials.lua  a credential sent only once allowed: the question, allowCredential
--   test_graphql.lua    a GraphQL list (Clients/specs/graphql-books.json) and its search, and
--                       a list paged by POST bodies (Clients/specs/search-books.json)
--   test_actions.lua    actions on rows (protocol 1.9): the books spec's edit, delete and add

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local H = dofile(here .. '/harness.lua')
local ctx = {
  daemon = os.getenv('DATASOURCED'),
  here = here,
  root = vim.fn.fnamemodify(here, ':h'), -- the plugin's folder
}

H.run(function()
  if not ctx.daemon or vim.fn.executable(ctx.daemon) ~= 1 then
    H.out('no daemon: set $DATASOURCED to the datasourced executable (got ' .. tostring(ctx.daemon) .. ')')
    return vim.cmd('cquit 1')
  end
  local fixtures = vim.fn.fnamemodify(here .. '/../../fixtures.json', ':p')
  local stop_fixtures = H.start_fixtures(ctx.daemon, fixtures)
  if not stop_fixtures then
    H.out('the fixture server did not start: ' .. ctx.daemon .. ' fixtures ' .. fixtures)
    return vim.cmd('cquit 1')
  end
  local v = vim.version()
  H.out(string.format('Neovim %d.%d.%d, daemon %s', v.major, v.minor, v.patch, ctx.daemon))
  local ds = require('datasourced')
  ds.setup({ cmd = { ctx.daemon } })

  dofile(here .. '/test_list.lua')(H, ds, ctx)
  dofile(here .. '/test_interface.lua')(H, ds, ctx)
  dofile(here .. '/test_freshness.lua')(H, ds, ctx)
  dofile(here .. '/test_listspec.lua')(H, ds, ctx)
  dofile(here .. '/test_rough_edges.lua')(H, ds, ctx)
  dofile(here .. '/test_filter.lua')(H, ds, ctx)
  dofile(here .. '/test_paging.lua')(H, ds, ctx)
  dofile(here .. '/test_credentials.lua')(H, ds, ctx)
  dofile(here .. '/test_graphql.lua')(H, ds, ctx)
  dofile(here .. '/test_actions.lua')(H, ds, ctx)

  -- The lists again, as with a 1.0 daemon (no revisions, no change values): the fallback
  -- stays tested while the daemon speaks 1.1. A fresh daemon, as source names repeat,
  -- and a fresh fixture server, as a route answers a set number of times.
  stop_fixtures()
  H.base_url = nil
  stop_fixtures = H.start_fixtures(ctx.daemon, fixtures)
  if not stop_fixtures then
    H.out('the fixture server did not start again')
    return vim.cmd('cquit 1')
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if ds.view(buf) then
      vim.cmd('bwipeout! ' .. buf)
    end
  end
  ds.stop()
  local Connection = require('datasourced.connection')
  Connection.protocol_additions, H.prefix = false, '[1.0 fallback] '
  dofile(here .. '/test_list.lua')(H, ds, ctx)
  Connection.protocol_additions, H.prefix = true, ''

  H.test('quitting stops the daemon cleanly', function()
    local conn = ds.connection()
    ds.stop()
    H.wait_until(function()
      return conn.exited
    end)
    H.expect_equal(0, conn.exit_code, 'exit status')
  end)
  stop_fixtures()
end)
