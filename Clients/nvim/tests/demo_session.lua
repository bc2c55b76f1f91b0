-- The session of tests/capture.sh (a real Neovim in tmux): the books of the fixture API,
-- whose base URL comes in $DATASOURCED_BASE_URL, by genre, in columns.
local ds = require('datasourced')
ds.setup({ cmd = { os.getenv('DATASOURCED') } })
ds.open({
  sources = {
    { name = 'books', kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
      remoteConfiguration = { baseURL = os.getenv('DATASOURCED_BASE_URL') }, apiPath = '/v1/books' },
    { name = 'byGenre', kind = 'sectioned', source = 'books', sectioningKey = 'genre' },
  },
  show = 'byGenre',
  title = 'Books by genre',
  columns = { { key = 'id', width = 3 }, { key = 'title', width = 18 }, 'year' },
})
