#!/usr/bin/env bash
# Times a counted list of 1,000,000 rows against a list of 100 on a real screen: a real
# (not headless) Neovim in a detached 80x20 tmux session (tests/timing_session.lua), on the
# fixture API (Clients/fixtures.json). For each trial, in a Neovim of its own whose daemon
# already answers:
#   open  from the Enter of `:lua DatasourcedTiming('million')` (or 'hundred': the first
#         page of the same API, 100 rows, nothing counted) to the screen showing its
#         first 18 rows;
#   G     (the million only) from G to the screen showing row 1,000,000;
#   RSS   Neovim's resident memory after the list settled and after G, less before the
#         open (/proc/PID/status).
# Prints each trial and the medians, then checks them: the million's open at most
# DATASOURCED_TIMING_RATIO (1.5) times the hundred's, its G at most
# DATASOURCED_TIMING_G_MS (300 ms), its RSS growth at most DATASOURCED_TIMING_RSS_MB
# (50 MB). The screen is polled as fast as tmux answers (a few ms a capture): the
# figures include that. DATASOURCED_TIMING_TRIALS (3) trials of each. Exits non-zero when
# a check fails or a screen never comes; the figures are printed either way.
# The daemon is $DATASOURCED, else the repository's debug build; Neovim is
# $DATASOURCED_NVIM, else the current one of setup-current-nvim.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/daemon.sh" timing.sh
command -v tmux >/dev/null || { echo "timing.sh: tmux is not installed" >&2; exit 1; }
nvim="${DATASOURCED_NVIM:-$(bash "$here/setup-current-nvim.sh")}"
trials="${DATASOURCED_TIMING_TRIALS:-3}"
max_ratio="${DATASOURCED_TIMING_RATIO:-1.5}"
max_g_ms="${DATASOURCED_TIMING_G_MS:-300}"
max_rss_mb="${DATASOURCED_TIMING_RSS_MB:-50}"

. "$here/../../tests/tmux-screen.sh" datasourced-timing

start_nvim() {
  rm -f "$work/pid"
  "${tmux[@]}" new-session -d -s capture -x 80 -y 20 -c "$work" \
    "DATASOURCED='$DATASOURCED' DATASOURCED_BASE_URL='$base_url' DATASOURCED_TIMING_PID='$work/pid' \
     '$nvim' --clean -u NONE \
       --cmd 'set runtimepath^=$plugin' --cmd 'runtime plugin/datasourced.lua' \
       --cmd 'set laststatus=2 noruler noshowcmd' -c \"luafile $here/timing_session.lua\""
  wait_for "timing: ready"
}

quit_nvim() {
  "${tmux[@]}" send-keys -t capture Escape ":qa!" Enter
  for _ in $(seq 100); do "${tmux[@]}" has-session -t capture 2>/dev/null || break; sleep 0.05; done
  "${tmux[@]}" kill-session -t capture 2>/dev/null || true
}

now_us() { echo "${EPOCHREALTIME/./}"; }

# Neovim's resident memory in kB.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$(cat "$work/pid")/status"; }

# Polls the screen, as fast as tmux captures it, until it shows TEXT (at most 20 s); then
# prints the microseconds since START.
time_until() {
  local text="$1" start="$2" screen deadline
  deadline=$(($(now_us) + 20000000))
  while :; do
    screen="$("${tmux[@]}" capture-pane -p -t capture)" || screen=""
    if grep -qF -- "$text" <<<"$screen"; then
      echo $(($(now_us) - start))
      return 0
    fi
    if [ "$(now_us)" -gt "$deadline" ]; then
      echo "timing.sh: the screen never showed '$text':" >&2
      cat <<<"$screen" >&2
      return 1
    fi
  done
}

# Types `:lua DatasourcedTiming('KIND')`, waits until the command line shows it, then
# times its Enter to the first screen of rows.
open_list() {
  local kind="$1" start
  "${tmux[@]}" send-keys -t capture ":lua DatasourcedTiming('$kind')"
  wait_for "DatasourcedTiming('$kind')"
  start=$(now_us)
  "${tmux[@]}" send-keys -t capture Enter
  # Rows 1 to 18: the window's first screen (80x20, less the status and command lines).
  time_until "18        Row 18" "$start"
}

opens_hundred=() opens_million=() jumps=() rss_open=() rss_jump=()
for trial in $(seq "$trials"); do
  start_nvim
  opens_hundred+=("$(open_list hundred)")
  wait_for "loaded 100"
  quit_nvim

  start_nvim
  before=$(rss_kb)
  opens_million+=("$(open_list million)")
  wait_for "loaded 100 of 1000000"
  sleep 0.3 # the list at rest
  rss_open+=($(($(rss_kb) - before)))
  start=$(now_us)
  "${tmux[@]}" send-keys -t capture G
  jumps+=("$(time_until "1000000   Row 1000000" "$start")")
  sleep 0.3
  rss_jump+=($(($(rss_kb) - before)))
  quit_nvim
  printf 'trial %d: open 100 rows %d ms, open 1,000,000 rows %d ms, G %d ms, RSS +%d MB after the open, +%d MB after G\n' \
    "$trial" $((opens_hundred[-1] / 1000)) $((opens_million[-1] / 1000)) $((jumps[-1] / 1000)) \
    $((rss_open[-1] / 1024)) $((rss_jump[-1] / 1024))
done

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
open_h=$(median "${opens_hundred[@]}") open_m=$(median "${opens_million[@]}") jump=$(median "${jumps[@]}")
rss=$(printf '%s\n' "${rss_open[@]}" "${rss_jump[@]}" | sort -n | tail -n 1)
ratio=$(awk -v m="$open_m" -v h="$open_h" 'BEGIN { printf "%.2f", m / h }')
printf 'median of %d: open 100 rows %d ms, open 1,000,000 rows %d ms (%.2fx), G %d ms; largest RSS growth %d MB\n' \
  "$trials" $((open_h / 1000)) $((open_m / 1000)) "$ratio" $((jump / 1000)) $((rss / 1024))

status=0
awk -v r="$ratio" -v max="$max_ratio" 'BEGIN { exit !(r <= max) }' ||
  { echo "timing.sh: opening 1,000,000 rows took ${ratio}x the time of 100 (at most ${max_ratio}x)" >&2; status=1; }
[ $((jump / 1000)) -le "$max_g_ms" ] ||
  { echo "timing.sh: G took $((jump / 1000)) ms (at most $max_g_ms)" >&2; status=1; }
[ $((rss / 1024)) -le "$max_rss_mb" ] ||
  { echo "timing.sh: Neovim grew by $((rss / 1024)) MB (at most $max_rss_mb)" >&2; status=1; }
exit $status
