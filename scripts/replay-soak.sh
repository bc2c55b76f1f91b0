#!/usr/bin/env bash
# Replays every shipped transcript N times in a row (default 200) and stops at the first
# difference: a check that no transcript depends on timing. Run it while the machine is
# busy (a build, the fuzzers) to make it mean something.
#   bash scripts/replay-soak.sh [N] [DAEMON]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-200}"
daemon="${2:-.build/debug/datasourced}"
transcripts=(Tests/Transcripts/*.json Examples/*.json)
started=$(date +%s)
for run in $(seq 1 "$runs"); do
  if ! out=$("$daemon" replay "${transcripts[@]}" 2>&1); then
    echo "run $run: a transcript differed"
    echo "$out" | grep -A25 '^FAIL'
    exit 1
  fi
  if (( run % 20 == 0 )); then echo "$run runs of ${#transcripts[@]} transcripts: all passed ($(( $(date +%s) - started )) s)"; fi
done
echo "$runs passed, 0 failed (${#transcripts[@]} transcripts each, $(( $(date +%s) - started )) s, load average $(cut -d' ' -f1-3 /proc/loadavg))"
