#!/usr/bin/env bash
# Prints a screen capture of the plugin at work: a real (not headless) Vim in a detached
# tmux session, on the fixture API (Clients/fixtures.json). Scenes:
#   books (default)  `:Datasourced open tests/specs/books.json` in 80x20, after the cursor
#                    went to the last line once (G, which fires CursorMoved for real), so
#                    that page two arrived: the sections and the status line (Vim's
#                    default 'laststatus', 1, and one window: the list's own status line);
#   error            `:Datasourced open tests/specs/failing.json` in 100x6: the error in
#                    the list, the short message below;
#   filter           the books scene, then `/` and "ar" typed at its prompt, still open:
#                    the rows behind it filtered as the keys come, the window filled
#                    from page three; then <Esc>, and every row is back (checked, not
#                    printed);
#   search           `:Datasourced open tests/specs/search.json` in 80x20, then
#                    `:Datasourced search` and "dune" typed at its prompt, still open:
#                    the rows behind it are the server's answer as the keys come; then
#                    <CR>, and they stay;
#   million          `:Datasourced open tests/specs/million.json` in 80x20: a
#                    counted list of 1,000,000 rows; G jumps to its last page, then the
#                    window shows the rows just above it, unloaded ("… row N", dim,
#                    with syntax off, then after `:syntax on`);
#   credential       `:Datasourced open tests/specs/credential.json` in 130x8: a list whose
#                    request carries a token from the daemon's environment; confirm()'s
#                    question, "y" typed, then the list's one row: the headers
#                    /_echo/headers saw, the token among them.
# The daemon is $DATASOURCED, else the repository's debug build; Vim is $DATASOURCED_VIM,
# else vim on $PATH. Exits non-zero (showing the screen on stderr) if the screen never
# gets there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
plugin="$(cd "$here/.." && pwd)"
repo="$(cd "$plugin/../.." && pwd)"
DATASOURCED="${DATASOURCED:-$repo/.build/debug/datasourced}"
case "$DATASOURCED" in /*) ;; *) DATASOURCED="$PWD/$DATASOURCED" ;; esac
[ -x "$DATASOURCED" ] || { echo "capture.sh: no daemon at $DATASOURCED (build it, or set \$DATASOURCED)" >&2; exit 1; }
scene="${1:-books}"
case "$scene" in books|error|filter|search|million|credential) ;; *) echo "usage: capture.sh [books|error|filter|search|million|credential]" >&2; exit 2 ;; esac
command -v tmux >/dev/null || { echo "capture.sh: tmux is not installed" >&2; exit 1; }
vim="${DATASOURCED_VIM:-$(command -v vim)}"

. "$here/../../tests/tmux-screen.sh" datasourced-vim-capture

width=80 height=20 spec=books.json syntax=off
if [ "$scene" = error ]; then
  width=100 height=6 spec=failing.json
elif [ "$scene" = search ]; then
  spec=search.json
elif [ "$scene" = million ]; then
  spec=million.json
elif [ "$scene" = credential ]; then
  width=130 height=8 spec=credential.json
fi
"${tmux[@]}" new-session -d -s capture -x "$width" -y "$height" -c "$here" \
  "DATASOURCED_TEST_TOKEN=s3cret-token '$vim' -Nu NONE -i NONE --cmd 'set runtimepath^=$plugin' --cmd 'runtime plugin/datasourced.vim' \
     --cmd 'set noruler noshowcmd shortmess+=I' --cmd 'syntax $syntax' \
     --cmd \"let g:datasourced_cmd = ['$DATASOURCED']\" \
     --cmd \"let g:datasourced_variables = {'baseURL': '$base_url'}\""
wait_for "~" # Vim is up
"${tmux[@]}" send-keys -t capture ":Datasourced open specs/$spec" Enter
if [ "$scene" = books ] || [ "$scene" = filter ]; then
  wait_for "loaded 4"
  "${tmux[@]}" send-keys -t capture G
  wait_for "loaded 8"
  wait_for "## science fiction"
  wait_for "datasourced://Books by genre  loaded 8"
fi
if [ "$scene" = filter ]; then
  "${tmux[@]}" send-keys -t capture gg / a r
  # Solaris and Ariel behind the prompt, and Leaves of Grass: the filter fills the window
  # from page three (its fill); the others gone.
  wait_for_without "loaded 3" "The Big Sleep"
  wait_for "Leaves of Grass"
  wait_for "/ar"
  "${tmux[@]}" capture-pane -p -t capture >"$work/filtered"
  "${tmux[@]}" send-keys -t capture Escape
  wait_for "The Big Sleep" # <Esc>: every row again, page three's too
  wait_for "loaded 10"
  cat "$work/filtered"
elif [ "$scene" = search ]; then
  wait_for "loaded 4"
  wait_for "4  Solaris"
  "${tmux[@]}" send-keys -t capture ":Datasourced search" Enter
  wait_for "search:"
  "${tmux[@]}" send-keys -t capture d u n e
  # The server's answer to q=dune behind the prompt, before <CR>: Dune alone.
  wait_for_without "search: dune" "Gaudy Night"
  wait_for "1  Dune"
  "${tmux[@]}" capture-pane -p -t capture >"$work/searched"
  "${tmux[@]}" send-keys -t capture Enter
  wait_for "loaded 1"
  wait_for_without "1  Dune" "Gaudy Night"
  cat "$work/searched"
elif [ "$scene" = books ]; then
  :
elif [ "$scene" = credential ]; then
  wait_for "Allow the daemon to send the environment variable DATASOURCED_TEST_TOKEN to $base_url?"
  "${tmux[@]}" send-keys -t capture y
  wait_for "Bearer s3cret-token"
  [ -s "$XDG_CONFIG_HOME/datasourced/allowed-credentials.json" ] ||
    { echo "capture.sh: the yes was not recorded in $XDG_CONFIG_HOME/datasourced" >&2; exit 1; }
elif [ "$scene" = million ]; then
  wait_for "loaded 100 of 1000000"
  wait_for "Row 18"
  "${tmux[@]}" send-keys -t capture G
  wait_for "Row 1000000" # the last page alone: the fixture API serves no page between
  wait_for "datasourced://million  loaded 100 of 1000000"
  "${tmux[@]}" send-keys -t capture 999901G zb
  wait_for "  … row 999900"
  wait_for "Row 999901"
  # Dim: the unloaded rows are drawn with the attributes of Comment (an escape sequence
  # before them). Waited for, as the text: the screen may be caught between two redraws.
  wait_for_escapes "the unloaded rows are not highlighted" $'\e\[[0-9;]*m  … row 999900'
  # Still dim once syntax is turned on (which clears a buffer's syntax items); the echo
  # comes after the redraw it makes.
  "${tmux[@]}" send-keys -t capture ":syntax on | echo 'syntax is on'" Enter
  wait_for "syntax is on"
  wait_for_escapes "the unloaded rows are not highlighted after syntax on" $'\e\[[0-9;]*m  … row 999900'
else
  wait_for "error: $base_url/v1/broken: HTTP status 500: the database is on fire"
  wait_for "datasourced: broken: HTTP status 500: the database is on fire"
fi
[ "$scene" = filter ] || [ "$scene" = search ] || "${tmux[@]}" capture-pane -p -t capture
# Quits Vim (which stops its daemon) and lets it finish before the session goes.
"${tmux[@]}" send-keys -t capture Escape ":qa!" Enter
for _ in $(seq 100); do "${tmux[@]}" has-session -t capture 2>/dev/null || break; sleep 0.05; done
