#!/usr/bin/env bash
# Runs the plugin's headless tests (tests/test_list.lua) against the real daemon:
# $DATASOURCED, else the repository's debug build (.build/debug/datasourced). The fixture
# API (Clients/fixtures.json) is started by the tests themselves. Prints PASS/FAIL per test
# and "N passed, M failed"; exits non-zero if any test fails (or the run hangs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/daemon.sh" run.sh
command -v nvim >/dev/null || { echo "run.sh: nvim is not installed" >&2; exit 1; }

cd "$plugin"
# --clean -u NONE: no user configuration or plugins; ours comes from the runtime path
# alone, its plugin/ file sourced as a plugin manager would. The tests end Neovim
# themselves (qall! or cquit 1); the outer timeout is a last resort for CI.
exec timeout --kill-after=10 300 nvim --headless --clean -u NONE \
  --cmd "set runtimepath^=$plugin" --cmd "runtime plugin/datasourced.lua" \
  -c "luafile tests/test_list.lua" 2>&1
