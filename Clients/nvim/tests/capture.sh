#!/usr/bin/env bash
# Prints a screen capture of the plugin at work, for Clients/README.md: a real (not
# headless) Neovim in a detached 80x20 tmux session, on the fixture API
# (Clients/fixtures.json). Scenes:
#   books (default)  the books by genre (tests/demo_session.lua), after the cursor went
#                    to the last line once (G), so that page two arrived;
#   error            `:Datasourced open broken.json`, a list of an endpoint that answers
#                    500 with {"error": "the database is on fire"} (in a 100x6 pane,
#                    where the message fits on one line);
#   cached           the books kept in the daemon's persisted cache (a file of this run):
#                    a first Neovim loads every page and quits; a second opens the list
#                    from the cache while the server's answer is held (it never comes),
#                    so the statusline marks the rows [cached HH:MM] (80x14);
#   filter           the books scene, then `/` and "ar" typed at its prompt, still open:
#                    the rows matching, ranked, shown while the user types (page three
#                    loaded for its match, to fill the window);
#   counted          a list of 1,000,000 rows of counted placeholders after G: the last
#                    page, loaded alone, below unloaded rows drawn dim (Comment); the
#                    capture fails if they are drawn as the loaded rows are.
#   credential       `:Datasourced open echo.json`, a list whose request carries a token
#                    from the daemon's environment ({"env": "DATASOURCED_TEST_TOKEN"}): the
#                    question on the command line, "y" typed, then the list's one row, the
#                    headers /_echo/headers saw, the token among them (130x8).
# The daemon is $DATASOURCED, else the repository's debug build; Neovim is
# $DATASOURCED_NVIM, else the current one of setup-current-nvim.sh. With
# DATASOURCED_CAPTURE_ESCAPES=1 the capture keeps its colours (the matched characters of
# the filter scene are highlighted). Exits non-zero
# (showing the screen on stderr) if the screen never gets there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/daemon.sh" capture.sh
scene="${1:-books}"
case "$scene" in books|error|cached|filter|counted|credential) ;; *) echo "usage: capture.sh [books|error|cached|filter|counted|credential]" >&2; exit 2 ;; esac
command -v tmux >/dev/null || { echo "capture.sh: tmux is not installed" >&2; exit 1; }
nvim="${DATASOURCED_NVIM:-$(bash "$here/setup-current-nvim.sh")}"

. "$here/../../tests/tmux-screen.sh" datasourced-capture

session="luafile $here/demo_session.lua" width=80 height=20
if [ "$scene" = error ]; then
  width=100 height=6
  session="lua require('datasourced').setup({ cmd = { vim.env.DATASOURCED } })"
  printf '{"name": "broken", "kind": "remote", "apiPath": "/v1/broken", "remoteConfiguration": {"baseURL": "%s"},\n "placeholderStorageOptions": ["loading", "noResults", "errors"]}\n' \
    "$base_url" >"$work/broken.json"
fi
if [ "$scene" = cached ]; then
  width=80 height=14
fi
if [ "$scene" = credential ]; then
  width=130 height=8
  session="lua require('datasourced').setup({ cmd = { vim.env.DATASOURCED } })"
  printf '{"sources": [{"name": "echo", "kind": "remote", "apiPath": "/_echo/headers",
  "remoteConfiguration": {"baseURL": "%s",
    "headers": {"Authorization": {"env": "DATASOURCED_TEST_TOKEN", "prefix": "Bearer "}}}}],
 "columns": ["authorization"]}\n' "$base_url" >"$work/echo.json"
fi

start_nvim() {
  "${tmux[@]}" new-session -d -s capture -x "$width" -y "$height" -c "$work" \
    "DATASOURCED='$DATASOURCED' DATASOURCED_BASE_URL='$base_url' DATASOURCED_SCENE='$scene' \
     DATASOURCED_TEST_TOKEN=s3cret-token \
     DATASOURCED_CACHE_PATH='$work/cache.sqlite' '$nvim' --clean -u NONE \
       --cmd 'set runtimepath^=$plugin' --cmd 'runtime plugin/datasourced.lua' \
       --cmd 'set laststatus=2 noruler noshowcmd' -c \"$session\""
}

# Quits Neovim (which stops its daemon) and lets it finish before the session goes.
quit_nvim() {
  "${tmux[@]}" send-keys -t capture Escape ":qa!" Enter
  for _ in $(seq 100); do "${tmux[@]}" has-session -t capture 2>/dev/null || break; sleep 0.05; done
}

start_nvim
if [ "$scene" = cached ]; then
  # The first Neovim loads every page (its daemon stores them), then quits.
  wait_for "loaded 4"
  "${tmux[@]}" send-keys -t capture G
  wait_for "loaded 8"
  "${tmux[@]}" send-keys -t capture G
  wait_for "loaded 10"
  quit_nvim
  ! "${tmux[@]}" has-session -t capture 2>/dev/null || { echo "capture.sh: the first Neovim did not quit" >&2; exit 1; }
  start_nvim
  wait_for "[cached "
elif [ "$scene" = books ]; then
  wait_for "loaded 4"
  "${tmux[@]}" send-keys -t capture G
  wait_for "loaded 8"
elif [ "$scene" = filter ]; then
  wait_for "loaded 4"
  "${tmux[@]}" send-keys -t capture G
  wait_for "loaded 8"
  "${tmux[@]}" send-keys -t capture gg / a r
  # The list behind the open prompt: Solaris and Ariel, ranked, the others gone, and page
  # three's Leaves of Grass, loaded to fill the window (fill: its height).
  wait_for_without "loaded 3" "The Big Sleep" # Solaris, Ariel, Leaves of Grass behind the prompt
  wait_for "/ar"
elif [ "$scene" = counted ]; then
  wait_for "loaded 100 of 1000000"
  "${tmux[@]}" send-keys -t capture G
  wait_for "1000000   Row 1000000"
  # Rows 999893 to 999910 on screen, the cursor on a loaded one: the screen's top rows are
  # of the page before, not loaded.
  "${tmux[@]}" send-keys -t capture 999910G zb
  wait_for "… row 999900"
  # The unloaded rows are dim, the loaded ones are not: in the capture with its escapes, an
  # unloaded row's text follows a colour change, a loaded row's starts its line. (Waited
  # for, as the text: the screen may be caught between two redraws.)
  wait_for_escapes "the unloaded rows are not drawn dim, or the loaded ones are" \
    $'\e\[[0-9;]*m *… row 999900' '^999905    Row 999905'
elif [ "$scene" = credential ]; then
  wait_for "~" # Neovim is up
  "${tmux[@]}" send-keys -t capture ":Datasourced open echo.json" Enter
  wait_for "Allow the daemon to send the environment variable DATASOURCED_TEST_TOKEN to $base_url?"
  "${tmux[@]}" send-keys -t capture y
  wait_for "Bearer s3cret-token"
  [ -s "$XDG_CONFIG_HOME/datasourced/allowed-credentials.json" ] ||
    { echo "capture.sh: the yes was not recorded in $XDG_CONFIG_HOME/datasourced" >&2; exit 1; }
else
  wait_for "~" # Neovim is up
  "${tmux[@]}" send-keys -t capture ":Datasourced open broken.json" Enter
  wait_for "error: $base_url/v1/broken: HTTP status 500"
fi
"${tmux[@]}" capture-pane -p ${DATASOURCED_CAPTURE_ESCAPES:+-e} -t capture
quit_nvim
