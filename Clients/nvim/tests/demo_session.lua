-- Opens the books list of the fixture API for tests/capture.sh (a real, non-headless
-- Neovim in tmux). The fixture API's base URL comes in $DATASOURCED_BASE_URL.
local ds = require('datasourced')
ds.setup({ cmd = { os.getenv('DATASOURCED') } })
ds.open({
  sources = {
    { name = 'books', kind = 'paginated', identityKey = 'id', keyPath = 'books', pageSize = 4,
      remoteConfiguration = { baseURL = os.getenv('DATASOURCED_BASE_URL') }, apiPath = '/v1/books' },
  },
  format = function(book)
    return string.format('%-3d %-18s %-16s %d', book.id, book.title, book.genre, book.year)
  end,
})
