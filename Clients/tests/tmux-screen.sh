# Sourced by the editors' capture.sh (Clients/nvim/tests, Clients/vim/tests) and timing.sh
# (Clients/nvim/tests, Clients/vim/tests, Clients/emacs/tests): what a screen capture needs
# before its scene. It makes a work folder (the daemon's persisted cache and its allowed
# credentials in it, never the user's), a tmux server of its own (its own socket: the user's
# sessions are never touched), the fixture API of Clients/fixtures.json on a free port
# ($base_url), a cleanup on exit, and the waits on the screen (wait_until, and wait_for,
# wait_for_without and wait_for_escapes built on it). For timing.sh, the timing of the
# screen and the reports (timing_settings, time_until, time_ex_command, quit_vi,
# check_floors... at the end); run.sh reports timing.sh through timing-report.sh.
# Takes the tmux socket's name; needs $DATASOURCED set.
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

# The timing scripts' share (each editor's tests/timing.sh): their settings, the clock,
# the screen polled against it, the editor's memory, the daemon's share that an editor's
# session notes, and the medians with their floors. Times are in microseconds.

# The settings every timing.sh reads from the environment: the trials of each list, and
# the floors of check_floors (the one of the jump to the end is each editor's own).
timing_settings() {
  trials="${DATASOURCED_TIMING_TRIALS:-3}"
  max_ratio="${DATASOURCED_TIMING_RATIO:-1.5}"
  max_rss_mb="${DATASOURCED_TIMING_RSS_MB:-50}"
  whole="${DATASOURCED_TIMING_WHOLE:-0}"
  slack_ms="${DATASOURCED_TIMING_SLACK_MS:-20}"
}

now_us() { echo "${EPOCHREALTIME/./}"; }
ms() { echo $(($1 / 1000)); }

# The editor's resident memory in kB (its session writes its pid to $work/pid).
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$(cat "$work/pid")/status"; }

# Polls the screen until `grep FLAG` (-F: text, -E: a pattern) finds WANTED on it, at most
# 20 s; then prints the time since START. Else says that it never showed WHAT, with the
# last screen. No pause between captures: a capture takes a few ms, which the figures
# include, and a pause would add its own.
#   screen_time FLAG WANTED WHAT START
screen_time() {
  local flag="$1" wanted="$2" what="$3" start="$4" screen deadline
  deadline=$(($(now_us) + 20000000))
  while :; do
    screen="$("${tmux[@]}" capture-pane -p -t capture)" || screen=""
    if grep -q "$flag" -- "$wanted" <<<"$screen"; then
      echo $(($(now_us) - start))
      return 0
    fi
    if [ "$(now_us)" -gt "$deadline" ]; then
      echo "timing.sh: the screen never showed $what:" >&2
      cat <<<"$screen" >&2
      return 1
    fi
  done
}

# Vim's and Neovim's: ends the editor with :qa! and waits until its session is gone.
quit_vi() {
  "${tmux[@]}" send-keys -t capture Escape ":qa!" Enter
  for _ in $(seq 100); do "${tmux[@]}" has-session -t capture 2>/dev/null || break; sleep 0.05; done
  "${tmux[@]}" kill-session -t capture 2>/dev/null || true
}

# Vim's and Neovim's: types the Ex command COMMAND (":call ..."), waits until the command
# line shows it, then times its Enter to the window's first screen of rows (80x20, less
# the status and command lines: rows 1 to 18).
#   time_ex_command COMMAND
time_ex_command() {
  local start
  "${tmux[@]}" send-keys -t capture "$1"
  wait_for "${1#:}"
  start=$(now_us)
  "${tmux[@]}" send-keys -t capture Enter
  time_until "18        Row 18" "$start"
}

# The time from START until the screen shows TEXT.
#   time_until TEXT START
time_until() { screen_time -F "$1" "'$1'" "$2"; }

# The time from START until a line of the screen matches PATTERN (grep -E).
#   time_until_line PATTERN START
time_until_line() { screen_time -E "$1" "a line matching '$1'" "$2"; }

# The daemon's share of the last open of KIND: the line "KIND MS" that the editor's timing
# session adds to $work/marks once it knows it (it may come after the screen: at most 10 s).
#   marked_daemon_share KIND
marked_daemon_share() {
  local ms
  for _ in $(seq 200); do
    ms="$(sed -n "s/^$1 \([0-9]*\)$/\1/p" "$work/marks" 2>/dev/null | tail -n 1)"
    [ -n "$ms" ] && break
    sleep 0.05
  done
  [ -n "$ms" ] || { echo "timing.sh: no mark of the daemon's share of the $1 list" >&2; return 1; }
  echo $((ms * 1000))
}

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v m="$1" -v h="$2" 'BEGIN { printf "%.2f", (h > 0 ? m / h : 999) }'; }
# M at most max_ratio times H, give or take slack_ms.
within() { awk -v m="$1" -v h="$2" -v r="$max_ratio" -v slack="$((slack_ms * 1000))" 'BEGIN { exit !(m <= r * h + slack) }'; }

# Checks the medians against their floors: the million's open less the daemon's share
# (REST_M) at most max_ratio times the hundred's (REST_H), give or take slack_ms, and with
# whole=1 the whole opens (OPEN_M, OPEN_H) too; the jump to the end (KEY, such as G) at
# most MAX_KEY_MS; the EDITOR's growth (RSS_KB) at most max_rss_mb. Says each figure
# outside its floor on stderr and returns 3 if any is, else 0.
#   check_floors EDITOR KEY KEY_US MAX_KEY_MS REST_M REST_H OPEN_M OPEN_H RSS_KB
check_floors() {
  local editor="$1" key="$2" key_us="$3" max_key_ms="$4" rest_m="$5" rest_h="$6" open_m="$7" open_h="$8" rss="$9"
  local outside=0
  within "$rest_m" "$rest_h" ||
    { echo "timing.sh: opening 1,000,000 rows took $(ratio "$rest_m" "$rest_h")x the time of 100, the daemon's share left out (at most ${max_ratio}x, give or take $slack_ms ms)" >&2; outside=3; }
  if [ "$whole" = 1 ]; then
    within "$open_m" "$open_h" ||
      { echo "timing.sh: opening 1,000,000 rows took $(ratio "$open_m" "$open_h")x the time of 100 (at most ${max_ratio}x, give or take $slack_ms ms)" >&2; outside=3; }
  fi
  [ "$(ms "$key_us")" -le "$max_key_ms" ] ||
    { echo "timing.sh: $key took $(ms "$key_us") ms (at most $max_key_ms)" >&2; outside=3; }
  [ $((rss / 1024)) -le "$max_rss_mb" ] ||
    { echo "timing.sh: $editor grew by $((rss / 1024)) MB (at most $max_rss_mb)" >&2; outside=3; }
  return $outside
}
