-- Commands of datasourced.nvim; the plugin does nothing until one is used.
if vim.g.loaded_datasourced then
  return
end
vim.g.loaded_datasourced = true

local function ds()
  return require('datasourced')
end

vim.api.nvim_create_user_command('DatasourcedOpen', function(opts)
  ds().open_file(opts.args)
end, { nargs = 1, complete = 'file', desc = 'Open a datasourced list from a JSON spec file' })
vim.api.nvim_create_user_command('DatasourcedRefresh', function()
  ds().refresh()
end, { desc = 'Reload the list (fetchData)' })
vim.api.nvim_create_user_command('DatasourcedCancel', function()
  ds().cancel()
end, { desc = 'Cancel the load in flight (cancelFetch)' })
vim.api.nvim_create_user_command('DatasourcedRetry', function()
  ds().retry()
end, { desc = 'Retry after an error: the failed page, or the whole load' })
vim.api.nvim_create_user_command('DatasourcedReload', function()
  ds().reload()
end, { desc = 'Read the whole list again from the daemon' })

vim.api.nvim_create_autocmd('VimLeavePre', {
  callback = function()
    if package.loaded['datasourced'] then
      require('datasourced').stop()
    end
  end,
})
