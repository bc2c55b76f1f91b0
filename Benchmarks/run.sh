#!/usr/bin/env bash
# Builds (release) and runs the benchmarks. Prints figures; never passes or fails on them.
#
#   Benchmarks/run.sh [codec|spawn|pipeline|sources|floors|all]      (default: all)
#   Benchmarks/run.sh [startup|rtt|pipelined|rttpy]   (one of floors: each figure as a ratio to the C stub, one run)
#   Benchmarks/run.sh [objectpipeline|bigsource|sectioning|indexpath|changeset|edits|viewrefresh]   (one of sources)
#   Benchmarks/run.sh pagefetch    (daemon CPU per page against jansson's own parse; not part of all)
#   Benchmarks/run.sh pipeline --method M --params JSON [--cycle K] [--setup F] ...
#       (with options: one pipeline run against the daemon, options passed through)
#
# Environment (all optional):
#   BENCH_SECONDS=1       seconds per codec run        BENCH_RUNS=5        codec runs
#   SPAWN_RUNS=20         spawn runs                    PIPELINE_COUNT=100000, PIPELINE_RUNS=3
#   BIG_OBJECTS=1000000   objects for bigsource and sectioning
#   SECTIONING_RUNS=3     runs per sectioning variant   CHANGESET_RUNS=5
#   EDIT_OBJECTS="300000 1000000"  sizes for edits      EDITS=200           edits of each kind
#   REFRESH_OBJECTS="100000 300000"  sizes for viewrefresh  REFRESHES=20   refreshes
#   PAGES=1000            pages for pagefetch           PAGEFETCH_RUNS=2
#   STARTUP_RUNS=30       whole-process runs            RTT_COUNT=20000, RTT_RUNS=3   round trips one at a time
#   PIPELINED_RUNS=5      pipelined runs, each daemon then stub
#   SCRATCH=.build-bench  SwiftPM scratch folder        DAEMON=<scratch>/release/datasourced
#   SKIP_BUILD=1          use what is already built
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-all}"
[[ $# -gt 0 ]] && shift
case "$mode" in
    codec|spawn|pipeline|sources|floors|all|objectpipeline|bigsource|sectioning|indexpath|changeset|edits|viewrefresh|pagefetch|startup|rtt|pipelined|rttpy|warmopen) ;;
    *) echo "usage: $0 [codec|spawn|pipeline|sources|floors|all] or one of objectpipeline|bigsource|sectioning|indexpath|changeset|edits|viewrefresh|startup|rtt|pipelined|rttpy|warmopen" >&2; exit 2 ;;
esac

SCRATCH="${SCRATCH:-.build-bench}"
BENCH_SECONDS="${BENCH_SECONDS:-1}"
BENCH_RUNS="${BENCH_RUNS:-5}"
SPAWN_RUNS="${SPAWN_RUNS:-20}"
PIPELINE_COUNT="${PIPELINE_COUNT:-100000}"
PIPELINE_RUNS="${PIPELINE_RUNS:-3}"
BIG_OBJECTS="${BIG_OBJECTS:-1000000}"
SECTIONING_RUNS="${SECTIONING_RUNS:-3}"
CHANGESET_RUNS="${CHANGESET_RUNS:-5}"
EDIT_OBJECTS="${EDIT_OBJECTS:-300000 1000000}"
EDITS="${EDITS:-200}"
REFRESH_OBJECTS="${REFRESH_OBJECTS:-100000 300000}"
REFRESHES="${REFRESHES:-20}"
PAGES="${PAGES:-1000}"
PAGEFETCH_RUNS="${PAGEFETCH_RUNS:-2}"
STARTUP_RUNS="${STARTUP_RUNS:-30}"
RTT_COUNT="${RTT_COUNT:-20000}"
RTT_RUNS="${RTT_RUNS:-3}"
PIPELINED_RUNS="${PIPELINED_RUNS:-5}"
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
        if [[ "$mode" != codec && "$mode" != sectioning && "$mode" != indexpath && "$mode" != changeset && "$mode" != viewrefresh ]]; then
            swift build -c release --scratch-path "$SCRATCH" --product datasourced 2>&1 | grep -E 'error:|Build' || true
        fi
        mkdir -p "$BIN"
        cc -O2 -Wall -o "$BIN/codec_loop" Benchmarks/c/codec_loop.c $(pkg-config --cflags --libs jansson)
        cc -O2 -Wall -o "$BIN/stub_server" Benchmarks/c/stub_server.c $(pkg-config --cflags --libs jansson)
        cc -O2 -Wall -o "$BIN/parse_loop" Benchmarks/c/parse_loop.c $(pkg-config --cflags --libs jansson)
    fi
    if [[ "$mode" != codec && "$mode" != sectioning && "$mode" != indexpath && "$mode" != changeset && "$mode" != viewrefresh && ! -x "$DAEMON" ]]; then
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
    section "pipeline: objectAtIndexPath template with no such source (an error path: answered -32602)"
    "$BENCH" pipeline --daemon "$DAEMON" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" \
        --method objectAtIndexPath --params '{"source":"repositories","indexPath":{"section":0,"row":%n}}' --cycle 1000
    section "pipeline calibration: the C stub server, same two templates (harness + pipes ceiling)"
    "$BENCH" pipeline --daemon "$BIN/stub_server" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" --method ping --params '{}'
    "$BENCH" pipeline --daemon "$BIN/stub_server" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" \
        --method objectAtIndexPath --params '{"source":"repositories","indexPath":{"section":0,"row":%n}}' --cycle 1000
}

# The data-source benchmarks (BENCHMARKS-HISTORY.md, sections 4-8).
run_objectpipeline() {
    section "objectpipeline: pipelined objectAtIndexPath against a simple source of 10,000 objects"
    "$BENCH" objectpipeline --daemon "$DAEMON" --objects 10000 --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" --floor 100000
    section "objectpipeline calibration: the C stub server, same template on the same harness (it answers -32601, ~110 B)"
    "$BENCH" pipeline --daemon "$BIN/stub_server" --count "$PIPELINE_COUNT" --runs "$PIPELINE_RUNS" \
        --method objectAtIndexPath --params '{"source":"items","indexPath":[0,%n]}' --cycle 10000
}

run_bigsource() {
    section "bigsource: simple source of $BIG_OBJECTS objects in process (parse + SourceRegistry.create), whole-value identity"
    "$BENCH" bigsource --objects "$BIG_OBJECTS"
    section "bigsource: the same with identityKey id"
    "$BENCH" bigsource --objects "$BIG_OBJECTS" --identity-key id
    section "bigsource: where the memory goes (the pieces built one by one)"
    "$BENCH" bigsource --objects "$BIG_OBJECTS" --breakdown
    "$BENCH" bigsource --objects "$BIG_OBJECTS" --breakdown --identity-key id
    section "bigsource: one createSource of $BIG_OBJECTS objects over stdio (daemon RSS from /proc)"
    "$BENCH" bigsource --objects "$BIG_OBJECTS" --daemon "$DAEMON"
    "$BENCH" bigsource --objects "$BIG_OBJECTS" --daemon "$DAEMON" --identity-key id
}

run_sectioning() {
    section "sectioning: sectioned sources over a simple source of $BIG_OBJECTS objects"
    "$BENCH" sectioning --objects "$BIG_OBJECTS" --groups 100 --runs "$SECTIONING_RUNS" --floor-ms 500
}

run_indexpath() {
    section "indexpath: indexPath(for:) at 1k to 1M objects"
    "$BENCH" indexpath --sizes 1000,10000,100000,1000000 --probes 10000 --batches 21
}

run_changeset() {
    section "changeset: 100,000 objects, 10,000 deleted + 10,000 inserted (and moves, updates)"
    "$BENCH" changeset --objects 100000 --edits 10000 --moves 1000 --runs "$CHANGESET_RUNS" --floor-ms 50
}

run_edits() {
    local objects
    for objects in $EDIT_OBJECTS; do
        section "edits: one-object edits of a simple source of $objects objects over stdio, against reads; then with a sorted, sectioned view"
        "$BENCH" edits --daemon "$DAEMON" --objects "$objects" --edits "$EDITS" --floor-ratio 10 --view-floor-ratio 3
    done
}

run_pagefetch() {
    section "pagefetch: $PAGES pages of 1,000 mapped objects; daemon CPU per page against jansson's parse of a page from C, and against a process that only fetches and parses (barefetch)"
    python3 Benchmarks/pagefetch.py --daemon "$DAEMON" --pages "$PAGES" --runs "$PAGEFETCH_RUNS" --checkpoints 10,100,1000 --c-parse "$BIN/parse_loop" --bare "$BENCH"
}

run_viewrefresh() {
    for objects in $REFRESH_OBJECTS; do
        section "viewrefresh: a refresh-style change of 3 rows in $objects objects under a sorted, sectioned view: recomputed vs followed, in one run"
        "$BENCH" viewrefresh --objects "$objects" --refreshes "$REFRESHES"
    done
}

# Issue 33's floors: each figure a person feels, as a ratio to its yardstick from one run.
run_startup() {
    section "startup: the whole process (spawn, initialize, exit) / the C stub's whole process (floor: the daemon <= 10 ms)"
    "$BENCH" startup --daemon "$DAEMON" --stub "$BIN/stub_server" --runs "$STARTUP_RUNS"
}

run_rtt() {
    section "rtt: objectAtIndexPath one at a time, p50 / the C stub's (floor <= 1.5; Swift harness)"
    "$BENCH" rtt --daemon "$DAEMON" --stub "$BIN/stub_server" --count "$RTT_COUNT" --runs "$RTT_RUNS"
}

run_pipelined() {
    section "pipelined: objectAtIndexPath req/s / the C stub's (floor >= 0.9; Swift harness)"
    "$BENCH" pipelined --daemon "$DAEMON" --stub "$BIN/stub_server" --count "$PIPELINE_COUNT" --runs "$PIPELINED_RUNS"
}

run_rttpy() {
    section "rtt and pipelined from outside: a Python client writing $PIPELINE_COUNT requests (floors <= 1.5 and >= 0.9)"
    python3 Benchmarks/rtt.py --daemon "$DAEMON" --stub "$BIN/stub_server" --count "$PIPELINE_COUNT" --sequential "$RTT_COUNT" --runs "$PIPELINED_RUNS"
}

run_floors() {
    run_startup; run_rtt; run_pipelined; run_rttpy
    run_warmopen
}

run_warmopen() {
    section "warm open of a 10,000-row list from the persisted cache / jansson's json_loadb of the same 2 MB (floor <= 1.5)"
    python3 Benchmarks/cache.py --daemon "$DAEMON" --runs 5 --skip-refreshes
}

run_sources() { run_objectpipeline; run_bigsource; run_sectioning; run_indexpath; run_changeset; run_edits; run_viewrefresh; }

build
case "$mode" in
    codec) run_codec ;;
    spawn) run_spawn ;;
    pipeline) run_pipeline "$@" ;;
    objectpipeline) run_objectpipeline ;;
    bigsource) run_bigsource ;;
    sectioning) run_sectioning ;;
    indexpath) run_indexpath ;;
    changeset) run_changeset ;;
    viewrefresh) run_viewrefresh ;;
    edits) run_edits ;;
    pagefetch) run_pagefetch ;;
    sources) run_sources ;;
    startup) run_startup ;;
    rtt) run_rtt ;;
    pipelined) run_pipelined ;;
    rttpy) run_rttpy ;;
    warmopen) run_warmopen ;;
    floors) run_floors ;;
    all) run_codec; run_spawn; run_pipeline; run_sources; run_floors ;;
esac
