#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite twice: in release, and under
# AddressSanitizer + UndefinedBehaviorSanitizer; then each fuzz target briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for kind in release asan; do
  echo "== $kind build"
  scripts/build.sh "$kind" | tail -n 1
  echo "== $kind tests"
  (
    # AddressSanitizer's red zones make each interpreter frame several times larger, so
    # the tests of the 1000-call recursion limit need more than the default 8 MB stack.
    if [[ $kind == asan ]]; then ulimit -s 65536 2>/dev/null || true; fi
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "build/$kind" --output-on-failure -j "$(nproc)"
  )
done
# The fuzz targets, a short run each from the bundled corpus (scripts/fuzz.sh runs longer).
echo "== fuzz"
scripts/fuzz.sh all "${YTAPE_FUZZ_SECONDS:-20}"
