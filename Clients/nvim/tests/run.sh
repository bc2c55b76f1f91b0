#!/usr/bin/env bash
# Runs the plugin's headless tests against the real daemon: $DATASOURCED, else the
# repository's debug build. Exits non-zero if any test fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DATASOURCED="${DATASOURCED:-$here/../../../.build/debug/datasourced}"
[ -x "$DATASOURCED" ] || { echo "no daemon at $DATASOURCED: run swift build first" >&2; exit 1; }
cd "$here/.."
# --clean -u NONE: no user config; the plugin comes from the runtime path alone.
exec nvim --headless --clean -u NONE --cmd "set runtimepath^=$PWD" --cmd "runtime plugin/datasourced.lua" \
  -c "luafile tests/test_list.lua" 2>&1
