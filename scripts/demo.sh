#!/usr/bin/env bash
# The main job on the bundled samples: trace ResNet-18 from its model program, inspect and
# validate the tape, then run it on the traced example values with a profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release | tail -n 1
ytape=build/release/cli/ytape
mkdir -p out
set -x
$ytape trace samples/resnet18.jl -f loss model image -o out/resnet18.json \
  --save-inputs out/resnet18.safetensors --stats
$ytape show out/resnet18.json -o out/resnet18.txt
awk '!/^  meta/ && n++ < 80' out/resnet18.txt  # the text form, without the static metadata
$ytape check out/resnet18.json
$ytape run out/resnet18.json --inputs out/resnet18.safetensors --repeat 5 --profile
