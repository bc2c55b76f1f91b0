-- The sessions of tests/capture.sh (a real Neovim in tmux), on the fixture API whose
-- base URL comes in $DATASOURCED_BASE_URL. $DATASOURCED_SCENE picks one:
--   books (default)  the books by genre, in columns;
--   cached           the books, kept in the persisted cache at $DATASOURCED_CACHE_PATH
--                    (the /v1/held routes: the second time, the server never answers);
--   counted          /v1/million, 1,000,000 rows of counted placeholders (issue 31).
local ds = require('datasourced')
ds.setup({ cmd = { os.getenv('DATASOURCED') } })
local base_url = os.getenv('DATASOURCED_BASE_URL')

if os.getenv('DATASOURCED_SCENE') == 'counted' then
  -- Comment, which dims unloaded rows, has a GUI colour alone in Neovim's default scheme.
  vim.o.termguicolors = true
  ds.open({
    name = 'million', kind = 'paginated', identityKey = 'id', keyPath = 'rows', pageSize = 100,
    placeholders = 'counted', jumpThreshold = 300, remoteConfiguration = { baseURL = base_url },
    apiPath = '/v1/million', title = 'A million rows', columns = { { key = 'id', width = 8 }, 'title' },
  })
  return
end

if os.getenv('DATASOURCED_SCENE') == 'cached' then
  ds.open({
    name = 'books', kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
    remoteConfiguration = { baseURL = base_url }, apiPath = '/v1/held', cache = { enabled = true },
    title = 'Books',
    columns = { { key = 'id', width = 3 }, { key = 'title', width = 18 }, { key = 'genre', width = 16 }, 'year' },
  }, { cmd = { os.getenv('DATASOURCED'), '--cache-path', os.getenv('DATASOURCED_CACHE_PATH') } })
  return
end

ds.open({
  sources = {
    { name = 'books', kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
      remoteConfiguration = { baseURL = base_url }, apiPath = '/v1/books' },
    { name = 'byGenre', kind = 'sectioned', source = 'books', sectioningKey = 'genre' },
  },
  show = 'byGenre',
  title = 'Books by genre',
  columns = { { key = 'id', width = 3 }, { key = 'title', width = 18 }, 'year' },
})
