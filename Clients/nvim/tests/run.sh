#!/usr/bin/env bash
# Runs the plugin's headless tests (tests/test_list.lua) against the real daemon
# ($DATASOURCED, else the repository's debug build) on every Neovim asked for:
# $DATASOURCED_NVIMS (paths, separated by spaces), by default Debian's /usr/bin/nvim
# (0.7.2, from scripts/setup.sh --tests) and a current Neovim (installed once by
# tests/setup-current-nvim.sh). The fixture API (Clients/fixtures.json) is started by
# the tests themselves. Prints PASS/FAIL per test and per Neovim, then the totals as
# "N passed, M failed"; exits non-zero if any test fails (or a run hangs or crashes).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/daemon.sh" run.sh

if [ -n "${DATASOURCED_NVIMS:-}" ]; then
  read -r -a nvims <<<"$DATASOURCED_NVIMS"
else
  debian_nvim=/usr/bin/nvim
  [ -x "$debian_nvim" ] || debian_nvim="$(command -v nvim || true)"
  [ -n "$debian_nvim" ] || { echo "run.sh: no nvim (bash scripts/setup.sh --tests installs Debian's)" >&2; exit 1; }
  current_nvim="$(bash "$here/setup-current-nvim.sh")"
  nvims=("$debian_nvim" "$current_nvim")
fi

# The daemons of the tests keep their persisted page cache (protocol 1.2) in a folder of
# this run, never in the user's ~/.cache (those that test it get a --cache-path besides).
XDG_CACHE_HOME="$(mktemp -d)"
export XDG_CACHE_HOME
# Nor do they record an allowed credential (allowCredential) among the user's own.
XDG_CONFIG_HOME="$(mktemp -d)"
export XDG_CONFIG_HOME

cd "$plugin"
passed=0 failed=0
summary=()
# Each failure with its details, said again at the end: CI shows the tail of its output.
failures="$(mktemp)"
trap 'rm -rf "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$failures"' EXIT
recap() { awk -v on="$1" '/^FAIL/ { keep = 1; print $0 " (" on ")"; next } /^  / { if (keep) print; next } { keep = 0 }'; }
for nvim in "${nvims[@]}"; do
  version="$("$nvim" --version 2>/dev/null | head -n 1 || true)"
  echo "== ${version:-unknown Neovim} ($nvim)"
  log="$(mktemp)"
  # --clean -u NONE: no user configuration or plugins; ours comes from the runtime path
  # alone, its plugin/ file sourced as a plugin manager would. The tests end Neovim
  # themselves (qall! or cquit 1); the outer timeout is a last resort for CI.
  status=0
  timeout --kill-after=10 150 "$nvim" --headless --clean -u NONE \
    --cmd "set runtimepath^=$plugin" --cmd "runtime plugin/datasourced.lua" \
    -c "luafile tests/main.lua" >"$log" 2>&1 || status=$?
  cat "$log"
  recap "$nvim" <"$log" >>"$failures"
  counts="$(sed -n 's/^tests: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)"
  rm -f "$log"
  if [ -z "$counts" ]; then
    # No summary: the run crashed or hung. That is one failure, whatever ran before.
    echo "FAIL the run on $nvim ended (status $status) without its summary"
    counts="0 1"
  elif [ "$status" -ne 0 ] && [ "${counts#* }" = 0 ]; then
    echo "FAIL the run on $nvim exited with status $status"
    counts="${counts% *} 1"
  fi
  passed=$((passed + ${counts% *}))
  failed=$((failed + ${counts#* }))
  summary+=("${version:-$nvim}: ${counts% *} passed, ${counts#* } failed")
done

# Checks on a real screen (tmux): what headless runs cannot see, such as a statusline
# that is not redrawn. They are tests/capture.sh's scenes, on the last Neovim above, and
# tests/timing.sh's figures.
if command -v tmux >/dev/null; then
  echo "== a real screen (tests/capture.sh, ${nvims[-1]})"
  for check in "books:the list, its page two and its status" "cached:a list reopened from the cache, marked [cached]" \
    "filter:a list filtered as / is typed, behind the open prompt" \
    "counted:a list of a million counted placeholders after G, its unloaded rows dim" \
    "credential:a list that needs a credential asks, y is typed, and its row loads"; do
    if DATASOURCED_NVIM="${nvims[-1]}" bash "$here/capture.sh" "${check%%:*}" >/dev/null; then
      echo "PASS ${check#*:} on a real screen"
      passed=$((passed + 1))
    else
      echo "FAIL ${check#*:} on a real screen" | tee -a "$failures"
      failed=$((failed + 1))
    fi
  done
  # The time to open a counted list of a million rows and to jump to its end, against a
  # list of 100 (tests/timing.sh): the screens must come (a test); the figures are printed
  # and said to be within their floors or not, never a failure (speed targets are
  # benchmarks: a loaded machine is no bug).
  echo "== timing on a real screen (tests/timing.sh, ${nvims[-1]})"
  . "$here/../../tests/timing-report.sh"
  check="a counted list of a million rows and one of 100 open on a real screen, and G shows the last row"
  floors="the million's open within 1.5x the hundred's (the daemon's share left out), G in 300 ms, Neovim 50 MB bigger at most"
  if report="$(run_timing "$check" "$floors" env DATASOURCED_NVIM="${nvims[-1]}" bash "$here/timing.sh")"; then
    echo "$report"
    passed=$((passed + 1))
  else
    echo "$report" | tee -a "$failures"
    failed=$((failed + 1))
  fi
else
  echo "== no tmux: the real-screen checks (tests/capture.sh, tests/timing.sh) did not run"
fi

# The installer of the current Neovim (its lock, its half-built venvs), with a stand-in
# for pip: no network.
echo "== tests/setup-current-nvim.sh"
setup_log="$(mktemp)"
bash "$here/test_setup_current_nvim.sh" >"$setup_log" 2>&1 || true
cat "$setup_log"
recap setup-current-nvim.sh <"$setup_log" >>"$failures"
passed=$((passed + $(grep -c '^PASS' "$setup_log" || true)))
failed=$((failed + $(grep -c '^FAIL' "$setup_log" || true)))
rm -f "$setup_log"

if [ -s "$failures" ]; then
  echo "== the failures again"
  cat "$failures"
fi
echo "== per Neovim"
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
