vim9script
# What users touch: specs and their variables, commands and completion, keys,
# highlights, the daemon missing, the health report, nothing global.
import './harness.vim' as H

export def Run(daemon: string)
  H.Test('an unknown ${NAME} is an error naming it and the file; no list opens', () => {
    var before = len(getbufinfo())
    Datasourced open specs/unknown-variable.json
    H.ExpectMessage('error', ['unknown-variable.json', 'unknown variable ${serverURL}', 'g:datasourced_variables'])
    H.ExpectEqual(before, len(getbufinfo()), 'buffers')
  })

  H.Test('a TOML spec is refused, naming the file', () => {
    var file = tempname() .. '.toml'
    writefile(['name = "books"'], file)
    execute 'Datasourced open ' .. fnameescape(file)
    H.ExpectMessage('error', [file, 'TOML', 'JSON'])
  })

  H.Test('without the daemon, the list says so and how to set g:datasourced_cmd', () => {
    g:datasourced_cmd = ['/nonexistent/datasourced']
    var buf = datasourced#Open('specs/books-flat.json')
    var lines = getbufline(buf, 1, '$')
    H.ExpectEqual('  ✗ error: the daemon did not start: cannot start /nonexistent/datasourced: not an executable (g:datasourced_cmd is [''/nonexistent/datasourced''])', lines[0], 'the first line')
    H.Expect(index(lines, "      let g:datasourced_cmd = ['/path/to/datasourced']") >= 0, 'the line that sets it', lines)
    H.ExpectStatus(buf, 'error: the daemon did not start (see g:datasourced_cmd)')
    H.ExpectEqual('DatasourcedFailed', datasourced#LastEvent().event, 'the last User event')
    g:datasourced_cmd = [daemon]
    Datasourced refresh
    H.ExpectLines(buf, ['1  Dune', '2  Gaudy Night', '3  Ariel', '4  Solaris', H.LOADING], 'loaded once it is set')
  })

  H.Test(':Datasourced health reports Vim, the daemon and a round trip', () => {
    Datasourced health
    H.ExpectEqual('datasourced://health', bufname(), 'the report''s buffer')
    var lines = getline(1, '$')
    close
    H.Expect(index(lines, '  OK Vim 9.0 with +channel, +job and the lsp channel mode') >= 0, 'Vim', lines)
    H.Expect(index(lines, '  OK found, executable: ' .. exepath(daemon)) >= 0, 'the daemon found', lines)
    H.Expect(len(filter(copy(lines), (_, l) => l =~ '^  OK datasourced \S\+, protocol 1\.\d\+$')) == 1, 'its version and protocol', lines)
    H.Expect(len(filter(copy(lines), (_, l) => l =~ '^  OK round trip (start, initialize, ping): [0-9.]\+ ms$')) == 1, 'the round trip', lines)
    H.Expect(len(filter(copy(lines), (_, l) => l =~ 'datasourced://Books (buffer \d\+): shows booksFlat')) == 1, 'the open list', lines)
    g:datasourced_cmd = ['/nonexistent/datasourced']
    var missing = datasourced#Health(false)
    g:datasourced_cmd = [daemon]
    H.Expect(index(missing, "  ERROR cannot start /nonexistent/datasourced: not an executable (g:datasourced_cmd is ['/nonexistent/datasourced'])") >= 0,
      'the missing daemon', missing)
  })

  H.Test(':Datasourced completes its subcommands and spec files', () => {
    H.ExpectEqual(['open', 'refresh', 'retry', 'cancel', 'close', 'filter', 'search', 'action', 'cancel-action', 'sources', 'health', 'log'],
      getcompletion('Datasourced ', 'cmdline'), 'subcommands')
    H.ExpectEqual(['refresh', 'retry'], getcompletion('Datasourced re', 'cmdline'), 'subcommands starting with re')
    H.ExpectEqual(['specs/books-flat.json', 'specs/books.json', 'specs/broken-rows.json'],
      getcompletion('Datasourced open specs/b', 'cmdline'), 'spec files')
    Datasourced frobnicate
    H.ExpectMessage('error', ['usage: :Datasourced {open|refresh|retry|cancel|close|filter|search|action|cancel-action|sources|health|log}', 'frobnicate'])
  })

  H.Test('keys: the defaults, g:datasourced_keymaps over them, <Plug> maps', () => {
    g:datasourced_keymaps = {x: 'refresh', q: ''}
    var buf = datasourced#Open('specs/books.json')
    H.ExpectStatus(buf, 'loaded 4')
    H.ExpectEqual('<Plug>(datasourced-refresh)', maparg('x', 'n'), 'x')
    H.ExpectEqual('<Plug>(datasourced-refresh)', maparg('r', 'n'), 'r')
    H.ExpectEqual('<Plug>(datasourced-cancel)', maparg('<C-c>', 'n'), '<C-c>')
    H.ExpectEqual('<Plug>(datasourced-select)', maparg('<CR>', 'n'), '<CR>')
    H.ExpectEqual('', maparg('q', 'n'), 'q (turned off)')
    H.ExpectEqual(1, maparg('x', 'n', 0, 1).buffer, 'buffer-local')
    H.Expect(maparg('<Plug>(datasourced-close)', 'n') =~ "datasourced#Action('close')", '<Plug>(datasourced-close)')
    H.ExpectLines(buf, ['## science fiction'] + getbufline(buf, 2, '$'), 'a list')
    H.Press('G')
    H.ExpectStatus(buf, 'loaded 8')
    feedkeys('x', 'xt')  # refresh, through the <Plug> map
    H.ExpectStatus(buf, 'loaded 4')
    var help = datasourced#Help()
    H.Expect(index(help, 'x       refresh: ' .. 'load again (a paginated source from page one); starts the daemon again if it is gone') >= 0, 'g? lists x', help)
    unlet g:datasourced_keymaps
    popup_clear()
  })

  H.Test('highlight groups link to standard ones by default, and may be relinked', () => {
    for [group, link] in items({DatasourcedSection: 'Title', DatasourcedLoading: 'Comment', DatasourcedNoResults: 'Comment', DatasourcedError: 'ErrorMsg'})
      H.ExpectEqual(link, synIDattr(synIDtrans(hlID(group)), 'name'), group)
    endfor
    highlight link DatasourcedSection Statement
    H.ExpectEqual('Statement', synIDattr(synIDtrans(hlID('DatasourcedSection')), 'name'), 'relinked')
    colorscheme default  # clears every group: the default links come back
    H.ExpectEqual('Title', synIDattr(synIDtrans(hlID('DatasourcedSection')), 'name'), 'after a colour scheme')
  })

  H.Test('nothing global but :Datasourced, g:datasourced_* settings, <Plug> maps, autoload functions', () => {
    H.ExpectEqual(['Datasourced'], getcompletion('Datasource', 'command'), 'commands')
    # Vim's own functions start with a lower-case letter; global user functions do not.
    var functions = filter(getcompletion('', 'function'), (_, f) => f =~ '^[A-Z]' || f =~ '#' && f !~ '^datasourced#')
    H.ExpectEqual([], functions, 'global functions')
    var globals = filter(keys(g:), (_, k) => k =~? 'datasourced' && k !~ '^datasourced_')
    H.ExpectEqual([], globals, 'global variables')
  })

  H.Test(':help datasourced opens the shipped doc; doc/tags is up to date', () => {
    help datasourced
    H.ExpectEqual('datasourced.txt', expand('%:t'), 'the help file')
    H.ExpectEqual('*datasourced*', matchstr(getline('.'), '\*datasourced\*'), 'the tag''s line')
    helpclose
    var dir = tempname()
    mkdir(dir)
    writefile(readfile('../doc/datasourced.txt'), dir .. '/datasourced.txt')
    execute 'helptags ' .. fnameescape(dir)
    H.ExpectEqual(readfile(dir .. '/tags'), readfile('../doc/tags'), 'doc/tags against helptags (vim -u NONE -es -c "helptags doc" -c q)')
  })

  H.Test('the README shows how to open the million-row spec, which is a counted list', () => {
    var readme = readfile('../README.md')
    var opens = filter(copy(readme), (_, l) => l =~ '^:Datasourced open \S*tests/specs/million\.json$')
    H.ExpectEqual(1, len(opens), 'README lines opening tests/specs/million.json')
    var spec = json_decode(join(readfile('specs/million.json'), "\n"))
    H.ExpectEqual(['counted', '/v1/million'], [get(spec, 'placeholders', ''), get(spec, 'apiPath', '')], 'the spec')
  })

  H.Test(':Datasourced sources lists each list and what its daemon has', () => {
    var lines = datasourced#Sources()
    H.Expect(len(filter(copy(lines), (_, l) => l =~ '^datasourced://Books by genre (buffer \d\+): shows byGenre, made of books, byGenre; loaded 4; daemon pid \d\+$')) == 1,
      'the books by genre', lines)
    H.Expect(len(filter(copy(lines), (_, l) => l =~ '^daemon pid \d\+ (.*): booksFlat (paginated), books (paginated), byGenre (sectioned)$')) == 1,
      'the daemon''s sources', lines)
  })
enddef
