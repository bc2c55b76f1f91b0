#!/usr/bin/env bash
# Builds the libFuzzer targets (see FUZZING.md) and runs each for SECONDS (default 60),
# as many at once as there are cores; fails if any of them crashes, hangs or breaks an invariant.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      TARGET: framer, payload, session, cacheentry, transcript, redaction (default: all)
# Working corpora, logs and crash files stay under .build-fuzz/ (git-ignored); the seeds
# in Fuzz/Corpus/ are only read.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(framer payload session cacheentry transcript redaction)

scratch=.build-fuzz
# The fuzz targets exist in the manifest only with DATASOURCED_FUZZ=1 (Package.swift).
export DATASOURCED_FUZZ=1
# Without it a crash runs Swift's backtracer instead of writing libFuzzer's crash file.
export SWIFT_BACKTRACE=enable=no
# Every jansson node from malloc, so that AddressSanitizer sees each one (inside an arena's
# slot, a node used after its scope is memory ASan calls valid).
export DATASOURCED_JSON_ARENAS=0

start=$(date +%s)
for target in "${targets[@]}"; do
    echo "== build fuzz-$target"
    # A binary left from an earlier build must not pass for this one.
    rm -f "$scratch/debug/fuzz-$target"
    swift build --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address --product "fuzz-$target" 2>&1 \
        | grep -v 'ld.gold: warning: Cannot export local symbol' || true
    [ -x "$scratch/debug/fuzz-$target" ] || { echo "fuzz-$target did not build" >&2; exit 1; }
done
echo "   built in $(( $(date +%s) - start )) s"

# One target a core at a time: each run is one busy thread, so the targets share the cores
# instead of queueing (a session's daemon threads mostly wait).
run_target() {
    local target=$1
    local corpus=$scratch/corpus/$target artifacts=$scratch/artifacts/$target log=$scratch/logs/$target.log
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    local options=(-max_total_time="$seconds" -timeout=30 -print_final_stats=1 -artifact_prefix="$artifacts/")
    # A session's daemon runs threads that free memory after the input ends; LeakSanitizer
    # would then scan the heap after nearly every input and halve the speed.
    # Sessions need inputs of a few hundred bytes (many choices each) from the start.
    [ "$target" = session ] && options+=(-detect_leaks=0 -max_len=2048 -len_control=10)
    # A transcript's repeats and padding must never be multiplied out: no allocation of 64 MB.
    [ "$target" = transcript ] && options+=(-malloc_limit_mb=64)
    # And no leak check at exit either: a delayed ping's timer cancelled in the last input is
    # released by libdispatch asynchronously, and LeakSanitizer at exit can catch its handler
    # in between (seen once, after an hour). The daemon's leaks are checked by sanitizers.sh.
    local asan_options=""
    [ "$target" = session ] && asan_options=detect_leaks=0
    if ASAN_OPTIONS=$asan_options "$scratch/debug/fuzz-$target" "${options[@]}" "$corpus" "Fuzz/Corpus/$target" > "$log" 2>&1; then
        { echo "== fuzz-$target for ${seconds} s (log: $log)"
          grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
          grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" || true; }
    else
        { echo "== fuzz-$target for ${seconds} s (log: $log): FAILED"
          grep -E 'ERROR|Fatal error|invariant|SUMMARY|Test unit written to' "$log" | head -20 || true
          echo "fuzz-$target FAILED; reproduce with: DATASOURCED_FUZZ=1 SWIFT_BACKTRACE=enable=no $scratch/debug/fuzz-$target <crash file above>"; } >&2
        touch "$scratch/failed/$target"
    fi
}

rm -rf "$scratch/failed" && mkdir -p "$scratch/failed"
at_once=$(nproc)
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$at_once" ]; do wait -n || true; done
    run_target "$target" &
done
wait
failed=($(ls "$scratch/failed"))
echo "== fuzzing took $(( $(date +%s) - start )) s in all"
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
