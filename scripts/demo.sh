#!/usr/bin/env bash
# The main job on the bundled samples: trace ResNet-18 from its model program, differentiate
# the tape with respect to the model's parameters, optimize the gradient tape, check the
# tapes, then run the optimized gradient tape on the traced example values: the loss, the
# gradients (first values, min, max, mean, norm) and the time of each stage. Files go to
# out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release | tail -n 1
ytape=build/release/cli/ytape
mkdir -p out
set -x
$ytape trace samples/resnet18.jl -f loss model image -o out/resnet18.json \
  --save-inputs out/resnet18.safetensors --stats
$ytape grad out/resnet18.json --wrt model -o out/resnet18_grad.json --stats
$ytape opt out/resnet18_grad.json -o out/resnet18_opt.json --stats
$ytape check out/resnet18.json
$ytape check out/resnet18_opt.json
$ytape show out/resnet18_opt.json -o out/resnet18_opt.txt
grep -v '^  meta' out/resnet18_opt.txt | sed -n '1,12p;/conv2d_backward/{p;q}'
$ytape stats out/resnet18_opt.json | head -n 12
$ytape run out/resnet18_opt.json --inputs out/resnet18.safetensors --repeat 3 | \
  awk 'NR <= 8 || /^time/'
