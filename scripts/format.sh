#!/usr/bin/env bash
# swift-format (from the Swift toolchain) over the Swift sources, with the checked-in
# .swift-format: `bash scripts/format.sh` rewrites them in place; `--check` (what
# scripts/test.sh runs) fails, listing each place, when a file is not formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tests Benchmarks/Sources Fuzz Package.swift)
if [ "${1:-}" = "--check" ]; then
  swift format lint --strict --recursive --parallel --configuration .swift-format "${paths[@]}"
else
  swift format format --in-place --recursive --parallel --configuration .swift-format "${paths[@]}"
fi
