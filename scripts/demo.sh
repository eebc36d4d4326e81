#!/usr/bin/env bash
# The main job on the bundled samples: trace ResNet-18 from its model program, differentiate
# the tape with respect to the model's parameters, optimize the gradient tape, check the
# tapes, then run the optimized gradient tape on the traced example values: the loss, the
# gradients (first values, min, max, mean, norm) and the time of each stage. Files go to
# out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The binary alone (the tests and benchmarks are the test command's); on a terminal ninja
# shows its progress on one line.
if [ -t 1 ]; then
  scripts/build.sh release ytape
else
  scripts/build.sh release ytape | tail -n 1
fi
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
# The tape's first lines and its first convolution gradient. Each reader takes its whole
# input: one that stopped early would end its writer with SIGPIPE, failing under pipefail.
awk '/^  meta/ {next} {n++} n <= 12 || (/conv2d_backward/ && !shown++)' out/resnet18_opt.txt
$ytape stats out/resnet18_opt.json | sed -n '1,12p'
$ytape run out/resnet18_opt.json --inputs out/resnet18.safetensors --repeat 3 | \
  awk 'NR <= 8 || /^time/'
