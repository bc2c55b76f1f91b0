-- How rows, placeholders and section titles look as lines. The texts are settable
-- through require('datasourced').setup{ placeholders = {...} }.

local M = {}

M.texts = {
  loading = '  ⋯ loading…',
  noResults = '  (no results)',
  error = '  ✗ error: %s',
  pending = '  …',
  header = '## %s',
}

function M.is_placeholder(value)
  return type(value) == 'table' and value['$placeholder'] ~= nil
end

local function one_line(text)
  return (tostring(text):gsub('[\r\n]+', ' '))
end

function M.default_format(value)
  if type(value) == 'string' then
    return value
  end
  local ok, encoded = pcall(vim.fn.json_encode, value)
  return ok and encoded or vim.inspect(value)
end

function M.error_text(failure)
  failure = failure or {}
  local text = failure.message or failure.kind or 'unknown error'
  if failure.kind and failure.message then
    text = failure.kind .. ': ' .. failure.message
  end
  return one_line(text)
end

function M.row_text(value, format)
  if M.is_placeholder(value) then
    local kind = value['$placeholder']
    if kind == 'error' then
      return string.format(M.texts.error, M.error_text(value.error))
    end
    return M.texts[kind] or ('  <' .. tostring(kind) .. '>')
  end
  local ok, text = pcall(format, value)
  if not ok then
    return '  <format failed: ' .. one_line(text) .. '>'
  end
  return one_line(text)
end

function M.pending_text()
  return M.texts.pending
end

function M.header_text(title, pending)
  if pending then
    return string.format(M.texts.header, '…')
  end
  if title == nil or title == vim.NIL then
    title = 'null'
  elseif type(title) ~= 'string' then
    title = M.default_format(title)
  end
  return string.format(M.texts.header, one_line(title))
end

return M
