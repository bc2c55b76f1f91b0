# Sourced by the editors' capture.sh (Clients/nvim/tests, Clients/vim/tests): what a screen
# capture needs before its scene. It makes a work folder (the daemon's persisted cache and its
# allowed credentials in it, never the user's), a tmux server of its own (its own socket: the user's sessions are never
# touched), the fixture API of Clients/fixtures.json on a free port ($base_url), a cleanup on
# exit, and the waits on the screen (wait_until, and wait_for, wait_for_without and
# wait_for_escapes built on it). Takes the tmux socket's name; needs $DATASOURCED set.
#   . tmux-screen.sh SOCKET-NAME
socket_name="$1"
work="$(mktemp -d)"
export XDG_CACHE_HOME="$work/cache"
export XDG_CONFIG_HOME="$work/config" # credentials allowed (allowCredential) are recorded here
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

# Captures the screen until CHECK (a function given the capture) holds for one capture, at
# most 10 s: a screen caught between two redraws may show part of a change. FLAGS: capture-
# pane's (-e keeps colours and attributes). Else says WHAT and shows the last capture.
#   wait_until WHAT FLAGS CHECK
wait_until() {
  local what="$1" flags="$2" check="$3" screen
  for _ in $(seq 200); do
    # A capture that fails (the editor's session gone) is an empty screen: the reason below
    # is still said.
    screen="$("${tmux[@]}" capture-pane -p $flags -t capture)" || screen=""
    "$check" "$screen" && return 0
    sleep 0.05
  done
  echo "capture.sh: $what:" >&2
  if [ -n "$flags" ]; then cat -v <<<"$screen" >&2; else cat <<<"$screen" >&2; fi
  return 1
}

# Waits until the screen shows TEXT.
wait_for() {
  local text="$1"
  shows_text() { grep -qF -- "$text" <<<"$1"; }
  wait_until "the screen never showed '$text'" "" shows_text
}

# Waits until one screen shows TEXT and not GONE.
wait_for_without() {
  local text="$1" gone="$2"
  shows_text_only() { grep -qF -- "$text" <<<"$1" && ! grep -qF -- "$gone" <<<"$1"; }
  wait_until "the screen never showed '$text' without '$gone'" "" shows_text_only
}

# Waits until one capture with its escape sequences matches every REGEX (grep's basic
# syntax); else says WHAT is wrong.
#   wait_for_escapes WHAT REGEX...
wait_for_escapes() {
  local what="$1"
  shift
  local patterns=("$@")
  matches_all() {
    local pattern
    for pattern in "${patterns[@]}"; do grep -q -- "$pattern" <<<"$1" || return 1; done
  }
  wait_until "$what" -e matches_all
}
