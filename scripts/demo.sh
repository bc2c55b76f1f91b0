#!/usr/bin/env bash
# The main job: build the daemon and show a session with it, message by message.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2

swift build --product datasourced >&2
.build/debug/datasourced replay --verbose Examples/quickstart.json
