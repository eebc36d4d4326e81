#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite twice: in release, and under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for kind in release asan; do
  echo "== $kind build"
  scripts/build.sh "$kind" | tail -n 1
  echo "== $kind tests"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "build/$kind" --output-on-failure -j "$(nproc)"
done
