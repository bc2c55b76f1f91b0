#!/usr/bin/env bash
# Runs every test: the Swift unit tests and transcript replays (swift test). This is the
# README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

swift build --build-tests
swift test --skip-build
