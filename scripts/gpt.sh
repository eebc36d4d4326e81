#!/usr/bin/env bash
# A GPT on the bundled text (samples/data/proverbs.txt): sets up and builds ytape, traces
# the training step, the evaluation and the generation of samples/gpt.jl, optimizes the
# step, trains with `ytape train` and prints text the trained model writes after PROMPT.
# Files go to out/gpt/. usage: scripts/gpt.sh [EPOCHS] [PROMPT] [CHARACTERS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-8} prompt=${2:-My son, } count=${3:-400} seed=${4:-1}
scripts/setup.sh
if ! command -v python3 >/dev/null; then  # scripts/gpt_text.py prints the text
  [ "$(id -u)" = 0 ] && sudo="" || sudo=sudo
  $sudo apt-get install -y -qq python3 >/dev/null
fi
scripts/build.sh release | tail -n 1
ytape=build/release/cli/ytape
out=out/gpt
mkdir -p "$out"
$ytape trace samples/gpt.jl -f train_step model opt_state step tokens -o "$out/step.json" \
  --save-inputs "$out/init.safetensors"
$ytape trace samples/gpt.jl -f evaluate model test_tokens -o "$out/eval.json"
$ytape opt "$out/step.json" -o "$out/step.json"
$ytape train "$out/step.json" --init "$out/init.safetensors" --epochs "$epochs" --seed "$seed" \
  --data samples/data/proverbs_train.safetensors \
  --eval "$out/eval.json" --eval-data samples/data/proverbs_test.safetensors \
  -o "$out/gpt.safetensors" | tee "$out/train.log"
# The prompt is a string literal of the program: quoted, its quotes and backslashes escaped.
literal=${prompt//\\/\\\\}
literal="\"${literal//\"/\\\"}\""
$ytape trace samples/gpt.jl -f generate model "$literal" "$count" -o "$out/generate.json"
$ytape run "$out/generate.json" --inputs "$out/gpt.safetensors" --skip-extra --seed "$seed" \
  -o "$out/text.safetensors" >/dev/null
scripts/gpt_text.py "$out/text.safetensors"
