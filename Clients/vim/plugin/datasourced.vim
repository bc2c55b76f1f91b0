" datasourced.vim: list buffers over the data sources of a datasourced daemon.
" The one command, the <Plug> maps and the highlight links; the rest is in
" autoload/datasourced.vim and autoload/datasourced/*.vim, loaded when first used
" (the daemon starts when a list is opened).
" Needs Vim 9 with +channel and +job (the "lsp" channel mode). See :help datasourced.
if has('nvim') || v:version < 900 || !has('channel') || !has('job') || exists(':Datasourced') == 2
  finish
endif

command -nargs=* -complete=customlist,datasourced#Complete Datasourced call datasourced#Command(<q-args>)

nnoremap <silent> <Plug>(datasourced-select) <Cmd>call datasourced#Action('select')<CR>
nnoremap <silent> <Plug>(datasourced-refresh) <Cmd>call datasourced#Action('refresh')<CR>
nnoremap <silent> <Plug>(datasourced-retry) <Cmd>call datasourced#Action('retry')<CR>
nnoremap <silent> <Plug>(datasourced-cancel) <Cmd>call datasourced#Action('cancel')<CR>
nnoremap <silent> <Plug>(datasourced-close) <Cmd>call datasourced#Action('close')<CR>
nnoremap <silent> <Plug>(datasourced-filter) <Cmd>call datasourced#Action('filter')<CR>
nnoremap <silent> <Plug>(datasourced-action) <Cmd>call datasourced#Action('action')<CR>
nnoremap <silent> <Plug>(datasourced-cancel-action) <Cmd>call datasourced#Action('cancel-action')<CR>
nnoremap <silent> <Plug>(datasourced-help) <Cmd>call datasourced#Action('help')<CR>

" Default links to standard groups; a colour scheme's :highlight clear drops them, so
" they are made again after one is loaded.
function s:highlights() abort
  highlight default link DatasourcedSection Title
  highlight default link DatasourcedLoading Comment
  highlight default link DatasourcedNoResults Comment
  highlight default link DatasourcedError ErrorMsg
  highlight default link DatasourcedMatch Search
  " Comment has no colours before `syntax on` (syncolor.vim) or a colour scheme gives it
  " some: unloaded rows are then drawn as the filler lines are (NonText), still dim.
  if hlexists('Comment') && execute('highlight Comment') !~# 'cleared'
    highlight default link DatasourcedUnloaded Comment
  else
    highlight default link DatasourcedUnloaded NonText
  endif
  highlight default link DatasourcedPending Comment
endfunction
call s:highlights()
augroup datasourced_plugin
  autocmd!
  autocmd ColorScheme * call s:highlights()
augroup END
