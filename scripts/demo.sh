#!/usr/bin/env bash
# The main job on the bundled samples: build, inspect and validate tapes, then run the
# ResNet-18 forward tape on made-up inputs with a profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release | tail -n 1
ytape=build/release/cli/ytape
set -x
$ytape show samples/tapes/mlp.json
$ytape check samples/tapes/resnet18.json
$ytape run samples/tapes/resnet18.json --random --repeat 5 --profile
