#!/usr/bin/env bash
# Runs every test: the Swift unit tests and transcript replays (swift test), then the
# Python client's and the Neovim plugin's tests against the built daemon. This is the
# README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests

echo "== Module rules (ARCHITECTURE.md)"
bash scripts/check-imports.sh
echo "== Links and anchors between the Markdown documents"
python3 scripts/check-doc-links.py
echo "== Formatting (swift-format, .swift-format)"
bash scripts/format.sh --check

swift build --build-tests
swift test --skip-build

# DATASOURCED_ALONGSIDE: a command run in the background from here to the end (CI builds the
# sanitizers' tests while the client tests below mostly wait on processes); its failure fails
# this script, and its output follows at the end.
alongside=""
if [ -n "${DATASOURCED_ALONGSIDE:-}" ]; then
    bash -c "$DATASOURCED_ALONGSIDE" > .build/alongside.log 2>&1 &
    alongside=$!
    trap 'kill "$alongside" 2>/dev/null || true' EXIT
fi

export DATASOURCED="$PWD/.build/debug/datasourced"
echo "== The protocol against Protocol/openrpc.json (pytest, jsonschema)"
python3 -m pytest -q -p no:cacheprovider Tests/Schema
echo "== The persisted cache shared by daemons: two in parallel, kill -9 during writes (pytest)"
python3 -m pytest -q -p no:cacheprovider Tests/Cache
echo "== A real Django REST framework API paged by the daemon (pytest)"
python3 -m pytest -q -p no:cacheprovider Tests/Frameworks
echo "== Python client (pytest)"
bash Clients/python/tests/run.sh
echo "== Neovim plugin (nvim --headless)"
bash Clients/nvim/tests/run.sh
echo "== Vim plugin (vim -es)"
bash Clients/vim/tests/run.sh
echo "== Emacs client (emacs --batch, ERT)"
bash Clients/emacs/tests/run.sh
if [ -n "$alongside" ]; then
    echo "== alongside: $DATASOURCED_ALONGSIDE"
    status=0
    wait "$alongside" || status=$?
    trap - EXIT
    cat .build/alongside.log
    [ "$status" -eq 0 ] || { echo "alongside: FAILED (exit status $status)" >&2; exit 1; }
fi
