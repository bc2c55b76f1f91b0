#!/usr/bin/env bash
# Prints a screen capture of the plugin: Neovim (not headless) in an 80x16 tmux pane,
# showing the fixture API's books list after the cursor went to its last line once (G),
# so page two arrived. Used for Clients/README.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
export DATASOURCED="${DATASOURCED:-$here/../../../.build/debug/datasourced}"
session="datasourced-capture-$$"

# The fixture API on a free port (it serves until its stdin closes or it is killed).
announce="$(mktemp)"
sleep infinity | "$DATASOURCED" fixtures "$root/../fixtures.json" >"$announce" &
fixtures_pid=$!
cleanup() { tmux kill-session -t "$session" 2>/dev/null || true; pkill -P $$ sleep 2>/dev/null || true; kill "$fixtures_pid" 2>/dev/null || true; rm -f "$announce"; }
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$announce" ] && break; sleep 0.05; done
base_url="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["baseURL"])' "$announce")"

# Waits (bounded) until the pane shows TEXT.
wait_for() {
  for _ in $(seq 200); do
    tmux capture-pane -p -t "$session" | grep -qF "$1" && return 0
    sleep 0.05
  done
  echo "capture.sh: the screen never showed '$1'" >&2; tmux capture-pane -p -t "$session" >&2; return 1
}

tmux new-session -d -s "$session" -x 80 -y 16 \
  "DATASOURCED='$DATASOURCED' DATASOURCED_BASE_URL='$base_url' nvim --clean -u NONE \
     --cmd 'set runtimepath^=$root' --cmd 'runtime plugin/datasourced.lua' --cmd 'set laststatus=2' \
     -c 'luafile $here/demo_session.lua'"
wait_for "4   Solaris"
tmux send-keys -t "$session" G
wait_for "8   Rebecca"
tmux capture-pane -p -t "$session"
tmux send-keys -t "$session" ":qa!" Enter
