#!/usr/bin/env bash
# Runs the Python client's checks against the real daemon ($DATASOURCED, else the
# repository's debug build): pytest. Called by scripts/test.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
python3 -m pytest -q -p no:cacheprovider
