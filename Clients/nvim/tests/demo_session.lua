-- The session of tests/capture.sh (a real Neovim in tmux): the books list of the fixture
-- API, whose base URL comes in $DATASOURCED_BASE_URL, as an aligned table.
local ds = require('datasourced')
ds.setup({ cmd = { os.getenv('DATASOURCED') } })
ds.open({
  name = 'books', kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
  remoteConfiguration = { baseURL = os.getenv('DATASOURCED_BASE_URL') }, apiPath = '/v1/books',
  format = function(book)
    return string.format('%-3d %-18s %-16s %d', book.id, book.title, book.genre, book.year)
  end,
})
