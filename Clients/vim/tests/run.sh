#!/usr/bin/env bash
# Runs the Vim plugin's headless tests (tests/main.vim) against the real daemon
# ($DATASOURCED, else the repository's debug build) on Vim 9 ($DATASOURCED_VIM, else vim
# on $PATH), then checks its test specs against the list spec's schema and a real screen
# under tmux (tests/capture.sh), and times a counted list of a million rows there
# (tests/timing.sh: its figures reported against their floors, not failed on). The fixture API (Clients/fixtures.json) is started by
# the tests themselves. Prints PASS/FAIL per test, then "N passed, M failed"; exits
# non-zero if any test fails (or the run hangs or crashes).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
plugin="$(cd "$here/.." && pwd)"
repo="$(cd "$plugin/../.." && pwd)"
DATASOURCED="${DATASOURCED:-$repo/.build/debug/datasourced}"
case "$DATASOURCED" in /*) ;; *) DATASOURCED="$PWD/$DATASOURCED" ;; esac
export DATASOURCED
[ -x "$DATASOURCED" ] || { echo "run.sh: no daemon at $DATASOURCED (build it, or set \$DATASOURCED)" >&2; exit 1; }
vim="${DATASOURCED_VIM:-$(command -v vim || true)}"
[ -n "$vim" ] || { echo "run.sh: no vim (bash scripts/setup.sh --tests installs vim-nox)" >&2; exit 1; }
grep -q '+channel' <<<"$("$vim" --version)" || { echo "run.sh: $vim lacks +channel (install vim-nox)" >&2; exit 1; }

# The daemons of the tests keep their persisted page cache in a folder of this run.
XDG_CACHE_HOME="$(mktemp -d)"
export XDG_CACHE_HOME
# Nor do they record an allowed credential (allowCredential) among the user's own.
XDG_CONFIG_HOME="$(mktemp -d)"
export XDG_CONFIG_HOME
trap 'rm -rf "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME"' EXIT

passed=0 failed=0
echo "== $("$vim" --version | head -n 1) ($vim)"
log="$XDG_CACHE_HOME/tests.log"
# -Nu NONE -es: no user configuration, no plugins, Ex mode; ours comes from the runtime
# path alone, its plugin/ file sourced as a plugin manager would. -i NONE: no viminfo.
# The tests end Vim themselves (qall! or cquit 1); the timeout is a last resort for CI
# (a busy two-core machine took over three minutes for the whole run).
status=0
(cd "$plugin" && timeout --kill-after=10 300 "$vim" -Nu NONE -es -i NONE \
  --cmd "set runtimepath^=$plugin" --cmd "runtime plugin/datasourced.vim" \
  -S tests/main.vim </dev/null >"$log" 2>&1) || status=$?
cat "$log"
counts="$(sed -n 's/^tests: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)"
if [ -z "$counts" ]; then
  echo "FAIL the run ended (status $status) without its summary"
  counts="0 1"
elif [ "$status" -ne 0 ] && [ "${counts#* }" = 0 ]; then
  echo "FAIL the run exited with status $status"
  counts="${counts% *} 1"
fi
passed=$((passed + ${counts% *}))
failed=$((failed + ${counts#* }))

echo "== the test specs against Protocol/listspec.schema.json"
spec_status=0
python3 "$here/validate_specs.py" || spec_status=$?
if [ "$spec_status" -eq 0 ]; then
  echo "PASS the test specs are valid list specs"
  passed=$((passed + 1))
elif [ "$spec_status" -eq 2 ]; then
  # validate_specs.py exits 2 when the tree has no Protocol/listspec.schema.json: there
  # is nothing to check against.
  echo "SKIP the test specs: Protocol/listspec.schema.json is not in this tree"
else
  echo "FAIL the test specs are not all valid list specs"
  failed=$((failed + 1))
fi

if command -v tmux >/dev/null; then
  echo "== a real screen (tests/capture.sh)"
  if DATASOURCED_VIM="$vim" bash "$here/capture.sh" >/dev/null; then
    echo "PASS the books by genre, page two and the status on a real screen"
    passed=$((passed + 1))
  else
    echo "FAIL the books by genre, page two and the status on a real screen"
    failed=$((failed + 1))
  fi
  if DATASOURCED_VIM="$vim" bash "$here/capture.sh" filter >/dev/null; then
    echo "PASS / filters as keys are typed, and <Esc> shows every row again, on a real screen"
    passed=$((passed + 1))
  else
    echo "FAIL / filters as keys are typed, and <Esc> shows every row again, on a real screen"
    failed=$((failed + 1))
  fi
  if DATASOURCED_VIM="$vim" bash "$here/capture.sh" search >/dev/null; then
    echo "PASS :Datasourced search's prompt shows the server's rows as keys are typed, before <CR>, on a real screen"
    passed=$((passed + 1))
  else
    echo "FAIL :Datasourced search's prompt shows the server's rows as keys are typed, before <CR>, on a real screen"
    failed=$((failed + 1))
  fi
  if DATASOURCED_VIM="$vim" bash "$here/capture.sh" million >/dev/null; then
    echo "PASS a counted list of a million rows, G's jump to its last page and its dim unloaded rows, on a real screen"
    passed=$((passed + 1))
  else
    echo "FAIL a counted list of a million rows, G's jump to its last page and its dim unloaded rows, on a real screen"
    failed=$((failed + 1))
  fi
  if DATASOURCED_VIM="$vim" bash "$here/capture.sh" credential >/dev/null; then
    echo "PASS a list that needs a credential asks with confirm(), y is typed, and its row loads, on a real screen"
    passed=$((passed + 1))
  else
    echo "FAIL a list that needs a credential asks with confirm(), y is typed, and its row loads, on a real screen"
    failed=$((failed + 1))
  fi
  # The time to open a counted list of a million rows and to jump to its end, against a
  # list of 100 (tests/timing.sh): the screens must come (a test); the figures are printed
  # and said to be within their floors or not, never a failure (speed targets are
  # benchmarks: a loaded machine is no bug).
  echo "== timing on a real screen (tests/timing.sh)"
  . "$here/../../tests/timing-report.sh"
  check="a counted list of a million rows and one of 100 open on a real screen, and G shows the last row"
  floors="the million's open within 1.5x the hundred's (the daemon's share left out), G in 300 ms, Vim 50 MB bigger at most"
  if run_timing "$check" "$floors" env DATASOURCED_VIM="$vim" bash "$here/timing.sh"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
else
  echo "== no tmux: the real-screen checks (tests/capture.sh, tests/timing.sh) did not run"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
