#!/usr/bin/env bash
# The toolchain's swift-format over every Swift file of the project, with the checked-in .swift-format.
#   .ci/format.sh          # lint: prints each violation and fails on any (CI runs this)
#   .ci/format.sh --fix    # rewrites the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/Benchmarks Fuzz/Package.swift Fuzz/Sources Samples/App/Package.swift Samples/App/Sources)
if [ "${1:-}" = "--fix" ]; then
    swift format format --in-place --recursive --parallel "${paths[@]}"
else
    swift format lint --strict --recursive --parallel "${paths[@]}"
fi
