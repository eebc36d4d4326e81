#!/usr/bin/env bash
# The random differential tests (tests/unit/check/random_*_test.cc: float tapes, integer
# tapes, model programs) on COUNT draws each from seed FIRST (defaults: 100000 from 1), in
# the release build. About 5 ms a float tape, under 1 ms an integer tape or a program, on
# two cores. A failure names its seed; rerun it alone with COUNT 1 and FIRST the seed.
# usage: scripts/soak.sh [COUNT] [FIRST]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-100000}
first=${2:-1}
[ -x build/release/tests/test_check ] || scripts/build.sh release >/dev/null
YTAPE_RANDOM_TAPES=$count YTAPE_RANDOM_PROGRAMS=$count YTAPE_RANDOM_FIRST=$first \
  build/release/tests/test_check --test-case='random*' --success=false
