#!/usr/bin/env bash
# Times a counted list of 1,000,000 rows against a list of 100 on a real screen: a real
# `emacs -nw` in a detached 80x20 tmux session (tests/timing-session.el), on the fixture
# API (Clients/fixtures.json). For each trial, in an Emacs of its own whose daemon already
# answers:
#   open  from the RET of `M-: (datasourced-timing "million")' (or "hundred": the first
#         page of the same API, 100 rows, nothing counted) to the screen showing its
#         first 17 rows; of which the daemon's share: from the open to its change set
#         with the rows, and, for the million (whose change set has no values), the
#         waits for the answers to the reads that follow, up to the rows on screen
#         (timing-session.el notes it); the rest is the client's, Emacs's and the
#         screen's;
#   M->   (the million only) from M-> to the screen showing row 1,000,000 loaded (its
#         dim `… row 1000000' comes first: that time is printed too);
#   RSS   Emacs's resident memory once the list has its rows, and after M->, less
#         before the open (/proc/PID/status).
# Prints each trial and the medians, then checks them: the million's open, less the
# daemon's share, at most DATASOURCED_TIMING_RATIO (1.5) times the hundred's, give or
# take DATASOURCED_TIMING_SLACK_MS (20 ms: a few tens of milliseconds, on a shared
# machine, are noise), the whole open too with DATASOURCED_TIMING_WHOLE=1 (a debug build
# of the daemon takes its time to count a million rows, a share no client can take
# away); its M-> at most DATASOURCED_TIMING_END_MS (300 ms); its RSS growth at most
# DATASOURCED_TIMING_RSS_MB (50 MB). The screen is polled as fast as tmux answers (a
# few ms a capture): the figures include that. DATASOURCED_TIMING_TRIALS (3) trials of
# each. Each trial's Emacs with the 100 rows ends by its terminal closing (its tmux
# session killed), the other by `M-: (kill-emacs)': each must end within 5 s. Exits
# non-zero when a screen never comes or an Emacs does not end (1), or a check fails (3:
# a figure outside its floor, which run.sh reports without failing: speed targets are
# benchmarks, not tests); the figures are printed either way.
# datasourced.el is byte-compiled first (in the work folder), as package.el installs it.
# The daemon is $DATASOURCED, else the repository's debug build; Emacs is
# $DATASOURCED_EMACS, else `emacs'.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
client="$(cd "$here/.." && pwd)"
repo="$(cd "$client/../.." && pwd)"
DATASOURCED="${DATASOURCED:-$repo/.build/debug/datasourced}"
case "$DATASOURCED" in /*) ;; *) DATASOURCED="$PWD/$DATASOURCED" ;; esac
export DATASOURCED
[ -x "$DATASOURCED" ] || { echo "timing.sh: no daemon at $DATASOURCED (build it, or set \$DATASOURCED)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "timing.sh: tmux is not installed" >&2; exit 1; }
emacs="${DATASOURCED_EMACS:-$(command -v emacs || true)}"
[ -n "$emacs" ] || { echo "timing.sh: no emacs" >&2; exit 1; }
max_end_ms="${DATASOURCED_TIMING_END_MS:-300}"

. "$repo/Clients/tests/tmux-screen.sh" datasourced-emacs-timing
timing_settings

# datasourced.el byte-compiled, as a package is installed (in the work folder).
mkdir -p "$work/lisp"
cp "$client/datasourced.el" "$work/lisp/"
"$emacs" --batch -Q -L "$work/lisp" -f batch-byte-compile "$work/lisp/datasourced.el" >"$work/compile.log" 2>&1 ||
  { echo "timing.sh: datasourced.el does not byte-compile:" >&2; cat "$work/compile.log" >&2; exit 1; }

# Emacs in the pane: no menu bar, so the window is the header line, 17 rows, the mode line.
start_emacs() {
  rm -f "$work/pid"
  "${tmux[@]}" new-session -d -s capture -x 80 -y 20 -c "$work" \
    "DATASOURCED='$DATASOURCED' DATASOURCED_BASE_URL='$base_url' DATASOURCED_TIMING_PID='$work/pid' \
     DATASOURCED_TIMING_MARKS='$work/marks' \
     '$emacs' -nw -Q -L '$work/lisp' --eval '(menu-bar-mode -1)' -l '$here/timing-session.el'"
  wait_for "timing: ready"
}

# Ends Emacs with `M-: (kill-emacs)' (its daemon stopped by datasourced-stop-all), or,
# with "hangup", by closing its terminal (its tmux session killed, as a dropped ssh
# session would): either way Emacs must end within 5 s, else it is killed and the run
# fails (status 1).
hung=0
quit_emacs() {
  local pid
  pid="$(cat "$work/pid")"
  if [ "${1:-}" != hangup ]; then
    "${tmux[@]}" send-keys -t capture C-g
    "${tmux[@]}" send-keys -t capture M-:
    wait_for "Eval:" || true
    "${tmux[@]}" send-keys -t capture -l "(kill-emacs)"
    "${tmux[@]}" send-keys -t capture Enter
    for _ in $(seq 100); do "${tmux[@]}" has-session -t capture 2>/dev/null || break; sleep 0.05; done
  fi
  "${tmux[@]}" kill-session -t capture 2>/dev/null || true
  for _ in $(seq 100); do [ -e "/proc/$pid" ] || return 0; sleep 0.05; done
  echo "timing.sh: Emacs did not end ${1:+on a hangup }within 5 s (process $pid): killed" >&2
  kill -9 "$pid" 2>/dev/null || true
  hung=1
}

# Types `M-: (datasourced-timing "KIND")', waits until the minibuffer shows it, then
# times its RET to the first screen of rows.
open_list() {
  local kind="$1" start
  "${tmux[@]}" send-keys -t capture M-:
  "${tmux[@]}" send-keys -t capture -l "(datasourced-timing \"$kind\")"
  wait_for "(datasourced-timing \"$kind\")"
  start=$(now_us)
  "${tmux[@]}" send-keys -t capture Enter
  # Rows 1 to 17: the window's first screen.
  time_until_line '^ 17 +Row 17 *$' "$start"
}

opens_hundred=() opens_million=() daemon_hundred=() daemon_million=() rest_hundred=() rest_million=()
ends=() dims=() rss_open=() rss_end=()
for trial in $(seq "$trials"); do
  rm -f "$work/marks"
  start_emacs
  opens_hundred+=("$(open_list hundred)")
  daemon_hundred+=("$(marked_daemon_share hundred)")
  rest_hundred+=($((opens_hundred[-1] - daemon_hundred[-1])))
  wait_for "loaded 100"
  quit_emacs hangup

  start_emacs
  before=$(rss_kb)
  opens_million+=("$(open_list million)")
  daemon_million+=("$(marked_daemon_share million)")
  rest_million+=($((opens_million[-1] - daemon_million[-1])))
  wait_for "loaded 100 of 1000"
  rss_open+=($(($(rss_kb) - before)))
  start=$(now_us)
  "${tmux[@]}" send-keys -t capture "M->"
  dims+=("$(time_until_line '^  … row 1000000 *$' "$start")")
  ends+=("$(time_until_line '^ 1000000 +Row 1000000 *$' "$start")")
  rss_end+=($(($(rss_kb) - before)))
  quit_emacs
  printf 'trial %d: open 100 rows %d ms (the daemon %d, the rest %d), open 1,000,000 rows %d ms (the daemon %d, the rest %d), M-> %d ms (dim row %d ms), RSS +%d MB after the open, +%d MB after M->\n' \
    "$trial" "$(ms "${opens_hundred[-1]}")" "$(ms "${daemon_hundred[-1]}")" "$(ms "${rest_hundred[-1]}")" \
    "$(ms "${opens_million[-1]}")" "$(ms "${daemon_million[-1]}")" "$(ms "${rest_million[-1]}")" \
    "$(ms "${ends[-1]}")" "$(ms "${dims[-1]}")" $((rss_open[-1] / 1024)) $((rss_end[-1] / 1024))
done

open_h=$(median "${opens_hundred[@]}") open_m=$(median "${opens_million[@]}") end=$(median "${ends[@]}")
daemon_h=$(median "${daemon_hundred[@]}") daemon_m=$(median "${daemon_million[@]}")
rest_h=$(median "${rest_hundred[@]}") rest_m=$(median "${rest_million[@]}") dim=$(median "${dims[@]}")
rss=$(printf '%s\n' "${rss_open[@]}" "${rss_end[@]}" | sort -n | tail -n 1)
whole_ratio=$(ratio "$open_m" "$open_h") rest_ratio=$(ratio "$rest_m" "$rest_h")
printf 'median of %d: open 100 rows %d ms, open 1,000,000 rows %d ms (%sx); the daemon %d and %d ms, the rest %d and %d ms (%sx); M-> %d ms (dim row %d ms); largest RSS growth %d MB\n' \
  "$trials" "$(ms "$open_h")" "$(ms "$open_m")" "$whole_ratio" "$(ms "$daemon_h")" "$(ms "$daemon_m")" \
  "$(ms "$rest_h")" "$(ms "$rest_m")" "$rest_ratio" "$(ms "$end")" "$(ms "$dim")" $((rss / 1024))

status=0
[ "$hung" = 0 ] || status=1
# An Emacs that did not end (1) outweighs a figure outside its floor (3).
check_floors Emacs "M->" "$end" "$max_end_ms" "$rest_m" "$rest_h" "$open_m" "$open_h" "$rss" || [ "$status" = 1 ] || status=3
exit $status
