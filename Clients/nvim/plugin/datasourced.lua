-- Commands, <Plug> mappings and highlight groups of datasourced.nvim. Nothing else is
-- loaded, and no daemon started, until a list is opened.
if vim.g.loaded_datasourced then
  return
end
vim.g.loaded_datasourced = true

local function ds()
  return require('datasourced')
end

local command = vim.api.nvim_create_user_command

command('Datasourced', function(opts)
  ds().command(opts.args)
end, {
  nargs = '*',
  complete = function(arglead, cmdline)
    return ds().complete(arglead, cmdline)
  end,
  desc = 'datasourced lists: open FILE | refresh | cancel | retry | reload | close | refresh-interval N|off | filter [TEXT] | search [TEXT] | action [NAME] | cancel-action | sources | log',
})

-- <Plug>(datasourced-ACTION) for each action of a list, to map keys of one's own (say,
-- in after/ftplugin/datasourced.lua, with setup{ keymaps = false }). They act on the
-- current buffer's list.
for _, action in ipairs({ 'select', 'refresh', 'retry', 'cancel', 'reload', 'close', 'filter', 'action', 'cancel-action', 'help' }) do
  vim.keymap.set('n', '<Plug>(datasourced-' .. action .. ')', function()
    ds().action(action)
  end, { silent = true, desc = 'datasourced: ' .. action })
end

-- The commands of earlier versions, kept as aliases.
command('DatasourcedOpen', function(opts)
  ds().open_file(opts.args)
end, { nargs = 1, complete = 'file', desc = 'Open a datasourced list from a spec file (JSON or Lua)' })
for _, name in ipairs({ 'Refresh', 'Cancel', 'Retry', 'Reload' }) do
  command('Datasourced' .. name, function()
    ds()[name:lower()]()
  end, { desc = 'Same as :Datasourced ' .. name:lower() })
end

local group = vim.api.nvim_create_augroup('datasourced', { clear = true })
-- Default links to standard groups; a colour scheme's :highlight clear drops them.
require('datasourced.render').highlights()
vim.api.nvim_create_autocmd('ColorScheme', {
  group = group,
  callback = function()
    require('datasourced.render').highlights()
  end,
})

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = group,
  callback = function()
    -- Only if a list was opened: quitting must not load the plugin (or start a daemon).
    if package.loaded['datasourced'] then
      require('datasourced').stop()
    end
  end,
})
