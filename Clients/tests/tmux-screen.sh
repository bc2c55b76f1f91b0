# Sourced by the editors' capture.sh (Clients/nvim/tests, Clients/vim/tests): what a screen
# capture needs before its scene. It makes a work folder (the daemon's persisted cache in it,
# never the user's), a tmux server of its own (its own socket: the user's sessions are never
# touched), the fixture API of Clients/fixtures.json on a free port ($base_url), a cleanup on
# exit, and wait_for. Takes the tmux socket's name; needs $DATASOURCED set.
#   . tmux-screen.sh SOCKET-NAME
socket_name="$1"
work="$(mktemp -d)"
export XDG_CACHE_HOME="$work/cache"
tmux=(tmux -L "$socket_name-$$" -f /dev/null)
fixtures_pid=""
cleanup() {
  "${tmux[@]}" kill-server 2>/dev/null || true
  exec 3>&- 2>/dev/null || true # the fixture server serves until its stdin closes
  if [ -n "$fixtures_pid" ]; then
    kill "$fixtures_pid" 2>/dev/null || true
    wait "$fixtures_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The fixture API on a free port; its stdin is a FIFO held open on fd 3.
mkfifo "$work/stdin"
"$DATASOURCED" fixtures "$(dirname "${BASH_SOURCE[0]}")/../fixtures.json" <"$work/stdin" >"$work/announce" 2>"$work/fixtures.log" &
fixtures_pid=$!
exec 3>"$work/stdin"
for _ in $(seq 200); do [ -s "$work/announce" ] && break; sleep 0.05; done
base_url="$(sed -n 's/.*"baseURL" *: *"\([^"]*\)".*/\1/p' "$work/announce")"
[ -n "$base_url" ] || { echo "capture.sh: the fixture server did not start:" >&2; cat "$work/fixtures.log" >&2; exit 1; }

# Waits (at most 10 s) until the screen shows TEXT.
wait_for() {
  for _ in $(seq 200); do
    "${tmux[@]}" capture-pane -p -t capture | grep -qF -- "$1" && return 0
    sleep 0.05
  done
  echo "capture.sh: the screen never showed '$1':" >&2
  "${tmux[@]}" capture-pane -p -t capture >&2
  return 1
}

# Waits (at most 10 s) until one screen shows TEXT and not GONE: a screen caught between
# two redraws may show one without the other.
wait_for_without() {
  local screen
  for _ in $(seq 200); do
    screen="$("${tmux[@]}" capture-pane -p -t capture)"
    if grep -qF -- "$1" <<<"$screen" && ! grep -qF -- "$2" <<<"$screen"; then return 0; fi
    sleep 0.05
  done
  echo "capture.sh: the screen never showed '$1' without '$2':" >&2
  "${tmux[@]}" capture-pane -p -t capture >&2
  return 1
}
