#!/usr/bin/env bash
# Training end to end on the handwritten digits (samples/data/): sets up and builds ytape,
# traces the CNN's training step of samples/digits.jl (forward, gradient and AdamW's
# update in one tape) and its evaluation, optimizes both, trains with `ytape train` and
# ends with the line `test accuracy: 0.xxxx`, the last epoch's accuracy on the 297
# held-out digits. Files go to out/digits/. usage: scripts/train.sh [cnn|mlp] [EPOCHS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-cnn} epochs=${2:-40} seed=${3:-1}
case "$model" in cnn | mlp) ;; *) echo "usage: $0 [cnn|mlp] [EPOCHS] [SEED]" >&2; exit 2 ;; esac
scripts/setup.sh
scripts/build.sh release | tail -n 1
ytape=build/release/cli/ytape
out=out/digits
mkdir -p "$out"
start=$(date +%s.%N)
$ytape trace samples/digits.jl -f train_step "$model" "opt_$model" step x y -o "$out/$model.step.json" \
  --save-inputs "$out/$model.init.safetensors"
$ytape trace samples/digits.jl -f evaluate "$model" xtest ytest -o "$out/$model.eval.json"
# CSE, DCE, folding: fewer ops for every step, the same results.
$ytape opt "$out/$model.step.json" -o "$out/$model.step.json"
$ytape opt "$out/$model.eval.json" -o "$out/$model.eval.json"
$ytape train "$out/$model.step.json" --init "$out/$model.init.safetensors" \
  --data samples/data/digits_train.safetensors --epochs "$epochs" --seed "$seed" \
  --eval "$out/$model.eval.json" --eval-data samples/data/digits_test.safetensors \
  -o "$out/$model.safetensors" | tee "$out/$model.log"
end=$(date +%s.%N)
echo "trace and train: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
awk '/accuracy/ { a = $NF } END { if (a == "") exit 1; printf "test accuracy: %.4f\n", a }' \
  "$out/$model.log"
