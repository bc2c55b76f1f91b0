-- How rows, placeholders and section titles look as lines. The texts can be changed
-- with require('datasourced').setup({ placeholders = {...} }).

local M = {}

M.texts = {
  loading = '  ⋯ loading…',
  noResults = '  (no results)',
  error = '  ✗ error: %s', -- %s: the error's kind and message
  pending = '  …', -- a row whose value is being read (for a moment)
  header = '## %s', -- %s: the section title
}

function M.is_placeholder(value)
  return type(value) == 'table' and value['$placeholder'] ~= nil
end

-- A buffer line cannot hold a line break (nvim_buf_set_lines refuses it).
local function one_line(text)
  return (tostring(text):gsub('[\r\n]+', ' '))
end

--- The default formatter: the object as compact JSON.
function M.default_format(value)
  local ok, encoded = pcall(vim.fn.json_encode, value)
  return ok and encoded or vim.inspect(value)
end

--- "kind: message" of a fetch error (Protocol.md, "Fetch errors").
function M.error_text(failure)
  failure = type(failure) == 'table' and failure or {}
  local text = failure.message or failure.kind or 'unknown error'
  if failure.kind and failure.message then
    text = failure.kind .. ': ' .. failure.message
  end
  return one_line(text)
end

--- The line of a row: a placeholder's text, else the formatter's (a formatter that
--- fails shows why on its row rather than raising).
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

--- A section's header line. Titles are JSON values: null (objects lacking the
--- sectioning key) shows as "null", other non-strings as JSON.
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
