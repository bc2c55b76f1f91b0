#!/usr/bin/env bash
# Builds (release) and runs the benchmarks. Prints figures; never passes or fails on them.
#
#   Benchmarks/run.sh [codec|spawn|pipeline|all]      (default: all)
#   Benchmarks/run.sh pipeline --method M --params JSON [--cycle K] [--setup F] ...
#       (with options: one pipeline run against the daemon, options passed through)
#
# Environment (all optional):
#   BENCH_SECONDS=1       seconds per codec run        BENCH_RUNS=5        codec runs
#   SPAWN_RUNS=20         spawn runs                    PIPELINE_COUNT=100000, PIPELINE_RUNS=3
#   SCRATCH=.build-bench  SwiftPM scratch folder        DAEMON=<scratch>/release/datasourced
#   SKIP_BUILD=1          use what is already built
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-all}"
[[ $# -gt 0 ]] && shift
case "$mode" in codec|spawn|pipeline|all) ;; *) echo "usage: $0 [codec|spawn|pipeline|all]" >&2; exit 2 ;; esac

SCRATCH="${SCRATCH:-.build-bench}"
BENCH_SECONDS="${BENCH_SECONDS:-1}"
BENCH_RUNS="${BENCH_RUNS:-5}"
SPAWN_RUNS="${SPAWN_RUNS:-20}"
PIPELINE_COUNT="${PIPELINE_COUNT:-100000}"
PIPELINE_RUNS="${PIPELINE_RUNS:-3}"
DAEMON="${DAEMON:-$SCRATCH/release/datasourced}"
BENCH="$SCRATCH/release/datasourced-bench"
BIN=Benchmarks/.bin
MESSAGES=Benchmarks/messages.jsonl

section() { printf '\n== %s   [%s; load average %s]\n' "$1" "$(date -u +%H:%M:%SZ)" "$(cut -d' ' -f1-3 /proc/loadavg)"; }

build() {
    if [[ "${SKIP_BUILD:-}" != 1 ]]; then
        echo "building (release, scratch $SCRATCH)..."
        swift build -c release --scratch-path "$SCRATCH" --product datasourced-bench 2>&1 | grep -E 'error:|Compiling|Build' | grep -v '^\[' || true
        [[ -x "$BENCH" ]] || { echo "datasourced-bench did not build" >&2; exit 1; }
        if [[ "$mode" != codec ]]; then
            swift build -c release --scratch-path "$SCRATCH" --product datasourced 2>&1 | grep -E 'error:|Build' || true
        fi
        mkdir -p "$BIN"
        cc -O2 -Wall -o "$BIN/codec_loop" Benchmarks/c/codec_loop.c $(pkg-config --cflags --libs jansson)
        cc -O2 -Wall -o "$BIN/stub_server" Benchmarks/c/stub_server.c $(pkg-config --cflags --libs jansson)
    fi
    if [[ "$mode" != codec && ! -x "$DAEMON" ]]; then
        echo "no daemon at $DAEMON (did it build?)" >&2; exit 1
    fi
    echo "$(swift --version 2>&1 | head -1); $(nproc) cores; $(uname -sr)"
}

run_codec() {
    section "codec: parse + serialise, $MESSAGES"
    local c_out c_best c_median
    c_out="$("$BIN/codec_loop" "$MESSAGES" "$BENCH_SECONDS" "$BENCH_RUNS")"
    echo "$c_out"
    c_best="$(sed -n 's/^RESULT c-jansson best=\([0-9]*\) median=\([0-9]*\)$/\1/p' <<<"$c_out")"
    c_median="$(sed -n 's/^RESULT c-jansson best=\([0-9]*\) median=\([0-9]*\)$/\2/p' <<<"$c_out")"
    "$BENCH" codec --messages "$MESSAGES" --seconds "$BENCH_SECONDS" --runs "$BENCH_RUNS" \
        --c-rate "$c_best" --c-median "$c_median"
}

run_spawn() {
    section "spawn -> initialize response: $DAEMON"
    "$BENCH" spawn --daemon "$DAEMON" --runs "$SPAWN_RUNS" --floor-ms 20
    section "spawn calibration: the C stub server (harness + posix_spawn + pipes floor)"
    "$BENCH" spawn --daemon "$BIN/stub_server" --runs "$SPAWN_RUNS"
    if command -v hyperfine >/dev/null; then
        section "spawn cross-check: hyperfine, whole process (initialize on stdin, then EOF -> exit)"
        local body='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
        printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body" >"$BIN/initialize.frame"
        hyperfine --style basic -w 3 -r "$SPAWN_RUNS" -i "$DAEMON < $BIN/initialize.frame" 2>&1 | sed -n '/Time/,/Range/p'
        section "spawn cross-check: hyperfine, '$DAEMON --version' (process start + exit, no protocol)"
        hyperfine --style basic -N -w 3 -r "$SPAWN_RUNS" "$DAEMON --version" 2>&1 | sed -n '/Time/,/Range/p'
    fi
}

run_pipeline() {
    if [[ $# -gt 0 ]]; then
        section "pipeline: $DAEMON $*"
        "$BENCH" pipeline --daemon "$DAEMON" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" "$@"
        return
    fi
    section "pipeline: ping (a method the daemon serves)"
    "$BENCH" pipeline --daemon "$DAEMON" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" --method ping --params '{}'
    section "pipeline: objectAtIndexPath template (answered -32601 until the method exists)"
    "$BENCH" pipeline --daemon "$DAEMON" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" \
        --method objectAtIndexPath --params '{"source":"repositories","indexPath":{"section":0,"row":%n}}' --cycle 1000
    section "pipeline calibration: the C stub server, same two templates (harness + pipes ceiling)"
    "$BENCH" pipeline --daemon "$BIN/stub_server" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" --method ping --params '{}'
    "$BENCH" pipeline --daemon "$BIN/stub_server" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" \
        --method objectAtIndexPath --params '{"source":"repositories","indexPath":{"section":0,"row":%n}}' --cycle 1000
}

build
case "$mode" in
    codec) run_codec ;;
    spawn) run_spawn ;;
    pipeline) run_pipeline "$@" ;;
    all) run_codec; run_spawn; run_pipeline ;;
esac
