#!/usr/bin/env bash
# Times a counted list of 1,000,000 rows against a list of 100 on a real screen: a real
# (not headless) Neovim in a detached 80x20 tmux session (tests/timing_session.lua), on the
# fixture API (Clients/fixtures.json). For each trial, in a Neovim of its own whose daemon
# already answers:
#   open  from the Enter of `:lua DatasourcedTiming('million')` (or 'hundred': the first
#         page of the same API, 100 rows, nothing counted) to the screen showing its
#         first 18 rows; of which the daemon's share: from the open to its change set
#         with the rows, and, for the million (whose change set has no values), the
#         wait for the answer to the read of the rows on screen (timing_session.lua notes
#         it); the rest is the plugin's, Neovim's and the screen's;
#   G     (the million only) from G to the screen showing row 1,000,000;
#   RSS   Neovim's resident memory after the list settled and after G, less before the
#         open (/proc/PID/status).
# Prints each trial and the medians, then checks them: the million's open, less the
# daemon's share, at most DATASOURCED_TIMING_RATIO (1.5) times the hundred's, give or
# take DATASOURCED_TIMING_SLACK_MS (20 ms: a few tens of milliseconds, on a shared
# machine, are noise; a million lines written at once are hundreds), the whole open too
# with DATASOURCED_TIMING_WHOLE=1 (a debug build of the daemon takes seconds to count a
# million rows, a share no client can take away); its G at most
# DATASOURCED_TIMING_G_MS (300 ms); its RSS growth at most DATASOURCED_TIMING_RSS_MB
# (50 MB). The screen is polled as fast as tmux answers (a few ms a capture): the
# figures include that. DATASOURCED_TIMING_TRIALS (3) trials of each. Exits non-zero when
# a screen never comes (1) or a check fails (3: a figure outside its floor, which run.sh
# reports without failing: speed targets are benchmarks, not tests); the figures are
# printed either way.
# The daemon is $DATASOURCED, else the repository's debug build; Neovim is
# $DATASOURCED_NVIM, else the current one of setup-current-nvim.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/daemon.sh" timing.sh
command -v tmux >/dev/null || { echo "timing.sh: tmux is not installed" >&2; exit 1; }
nvim="${DATASOURCED_NVIM:-$(bash "$here/setup-current-nvim.sh")}"
max_g_ms="${DATASOURCED_TIMING_G_MS:-300}"

. "$here/../../tests/tmux-screen.sh" datasourced-timing
timing_settings

start_nvim() {
  rm -f "$work/pid"
  "${tmux[@]}" new-session -d -s capture -x 80 -y 20 -c "$work" \
    "DATASOURCED='$DATASOURCED' DATASOURCED_BASE_URL='$base_url' DATASOURCED_TIMING_PID='$work/pid' \
     DATASOURCED_TIMING_MARKS='$work/marks' \
     '$nvim' --clean -u NONE \
       --cmd 'set runtimepath^=$plugin' --cmd 'runtime plugin/datasourced.lua' \
       --cmd 'set laststatus=2 noruler noshowcmd' -c \"luafile $here/timing_session.lua\""
  wait_for "timing: ready"
}

# Times `:lua DatasourcedTiming('KIND')` to the first screen of rows.
open_list() { time_ex_command ":lua DatasourcedTiming('$1')"; }

opens_hundred=() opens_million=() daemon_hundred=() daemon_million=() rest_hundred=() rest_million=()
jumps=() rss_open=() rss_jump=()
for trial in $(seq "$trials"); do
  rm -f "$work/marks"
  start_nvim
  opens_hundred+=("$(open_list hundred)")
  daemon_hundred+=("$(marked_daemon_share hundred)")
  rest_hundred+=($((opens_hundred[-1] - daemon_hundred[-1])))
  wait_for "loaded 100"
  quit_vi

  start_nvim
  before=$(rss_kb)
  opens_million+=("$(open_list million)")
  daemon_million+=("$(marked_daemon_share million)")
  rest_million+=($((opens_million[-1] - daemon_million[-1])))
  wait_for "loaded 100 of 1000000"
  sleep 0.3 # the list at rest
  rss_open+=($(($(rss_kb) - before)))
  start=$(now_us)
  "${tmux[@]}" send-keys -t capture G
  jumps+=("$(time_until "1000000   Row 1000000" "$start")")
  sleep 0.3
  rss_jump+=($(($(rss_kb) - before)))
  quit_vi
  printf 'trial %d: open 100 rows %d ms (the daemon %d, the rest %d), open 1,000,000 rows %d ms (the daemon %d, the rest %d), G %d ms, RSS +%d MB after the open, +%d MB after G\n' \
    "$trial" "$(ms "${opens_hundred[-1]}")" "$(ms "${daemon_hundred[-1]}")" "$(ms "${rest_hundred[-1]}")" \
    "$(ms "${opens_million[-1]}")" "$(ms "${daemon_million[-1]}")" "$(ms "${rest_million[-1]}")" \
    "$(ms "${jumps[-1]}")" $((rss_open[-1] / 1024)) $((rss_jump[-1] / 1024))
done

open_h=$(median "${opens_hundred[@]}") open_m=$(median "${opens_million[@]}") jump=$(median "${jumps[@]}")
daemon_h=$(median "${daemon_hundred[@]}") daemon_m=$(median "${daemon_million[@]}")
rest_h=$(median "${rest_hundred[@]}") rest_m=$(median "${rest_million[@]}")
rss=$(printf '%s\n' "${rss_open[@]}" "${rss_jump[@]}" | sort -n | tail -n 1)
whole_ratio=$(ratio "$open_m" "$open_h") rest_ratio=$(ratio "$rest_m" "$rest_h")
printf 'median of %d: open 100 rows %d ms, open 1,000,000 rows %d ms (%sx); the daemon %d and %d ms, the rest %d and %d ms (%sx); G %d ms; largest RSS growth %d MB\n' \
  "$trials" "$(ms "$open_h")" "$(ms "$open_m")" "$whole_ratio" "$(ms "$daemon_h")" "$(ms "$daemon_m")" \
  "$(ms "$rest_h")" "$(ms "$rest_m")" "$rest_ratio" "$(ms "$jump")" $((rss / 1024))

status=0
check_floors Neovim G "$jump" "$max_g_ms" "$rest_m" "$rest_h" "$open_m" "$open_h" "$rss" || status=3
exit $status
