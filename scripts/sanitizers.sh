#!/usr/bin/env bash
# Builds the core's tests (JSONKit, JSONRPC, DataSources, Daemon: DATASOURCED_CORE_ONLY=1,
# no SwiftNIO) under AddressSanitizer + UndefinedBehaviorSanitizer, then under
# ThreadSanitizer, and runs them; fails on any test failure or sanitizer report.
#   scripts/sanitizers.sh [--build-only | --tests-only] [asan|tsan]...     (default: both)
# Each sanitizer has its own scratch path (.build-asan, .build-tsan; git-ignored).
# --build-only builds and runs nothing; --tests-only runs what is built (CI builds while the
# client tests run, and runs the tests after: .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

build=1 test=1
case "${1:-}" in
    --build-only) test=0; shift ;;
    --tests-only) build=0; shift ;;
esac
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(asan tsan)

export DATASOURCED_CORE_ONLY=1
# A tenth of each randomized test's seeds (Tests: `seeds(_:)`): the plain run covers them all.
export DATASOURCED_SEED_DIVISOR=10
# A crash prints the sanitizer's report, not Swift's backtracer's.
export SWIFT_BACKTRACE=enable=no
# Reports fail the run: UBSan only warns unless told to halt, TSan exits 66 at the end.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/sanitizers.lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/sanitizers.tsan.supp

tests='^(JSONKitTests|JSONRPCTests|DataSourcesTests|DaemonTests)\.'
for run in "${runs[@]}"; do
    case $run in
        # swiftc has no -sanitize=undefined (Swift traps on overflow and bounds itself):
        # UBSan instruments the C target (CSystemShims), ASan everything; ASan's runtime
        # carries UBSan's.
        # Under ASan every jansson node comes from malloc (arenas off), so that ASan sees each
        # one: inside an arena's slot a node used after its scope is memory ASan calls valid.
        # The arena tests then skip (they run in the plain run, and under TSan).
        asan) sanitize=(--sanitize=address -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined); arenas=0 ;;
        tsan) sanitize=(--sanitize=thread); arenas=1 ;;
        *) echo "unknown run $run (asan or tsan)" >&2; exit 2 ;;
    esac
    scratch=.build-$run
    start=$(date +%s)
    if [ "$build" = 1 ]; then
        echo "== build the core's tests with ${sanitize[*]} ($scratch)"
        swift build --build-tests --scratch-path "$scratch" "${sanitize[@]}" 2>&1 | { grep -vE '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Wrapping)' || true; }
        # A failed build leaves no test bundle: the run below (or CI's) says so.
    fi
    built=$(date +%s)
    if [ "$test" = 0 ]; then
        echo "   $run: build $((built - start)) s"
        continue
    fi
    echo "== run them"
    status=0
    DATASOURCED_JSON_ARENAS=$arenas swift test --skip-build --scratch-path "$scratch" "${sanitize[@]}" --filter "$tests" > "$scratch/test.log" 2>&1 || status=$?
    grep -E '✘|Test run|Executed|ERROR|WARNING: ThreadSanitizer|runtime error|SUMMARY' "$scratch/test.log" || true
    echo "   $run: build $((built - start)) s, tests $(( $(date +%s) - built )) s, exit status $status"
    if [ "$status" -ne 0 ] || grep -qE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:|ERROR: LeakSanitizer' "$scratch/test.log"; then
        echo "$run: FAILED (full output: $scratch/test.log)" >&2
        exit 1
    fi
done
