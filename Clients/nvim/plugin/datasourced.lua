-- Commands of datasourced.nvim. Nothing is loaded, and no daemon started, until a list
-- is opened.
if vim.g.loaded_datasourced then
  return
end
vim.g.loaded_datasourced = true

local function ds()
  return require('datasourced')
end

local command = vim.api.nvim_create_user_command

command('DatasourcedOpen', function(opts)
  ds().open_file(opts.args)
end, { nargs = 1, complete = 'file', desc = 'Open a datasourced list from a spec file (JSON or Lua)' })
command('DatasourcedRefresh', function()
  ds().refresh()
end, { desc = 'Load the list again (fetchData)' })
command('DatasourcedCancel', function()
  ds().cancel()
end, { desc = 'Cancel the load in flight (cancelFetch)' })
command('DatasourcedRetry', function()
  ds().retry()
end, { desc = 'After an error: the failed page again, or the whole load' })
command('DatasourcedReload', function()
  ds().reload()
end, { desc = 'Read every row again from the daemon and redraw' })

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = vim.api.nvim_create_augroup('datasourced', { clear = true }),
  callback = function()
    -- Only if a list was opened: quitting must not load the plugin (or start a daemon).
    if package.loaded['datasourced'] then
      require('datasourced').stop()
    end
  end,
})
