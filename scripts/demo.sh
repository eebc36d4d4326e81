#!/usr/bin/env bash
# The main job on a bundled sample: build, then inspect and validate a tape.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release | tail -n 1
ytape=build/release/cli/ytape
sample=samples/tapes/mlp.json
set -x
$ytape show "$sample"
$ytape check "$sample"
