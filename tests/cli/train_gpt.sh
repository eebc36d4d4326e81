#!/usr/bin/env bash
# The GPT sample end to end (samples/gpt.jl): trace its training step, evaluation and
# generation; train one epoch (70 steps) on the bundled text and check that the mean loss
# and the test loss are below 2.8, from the uniform guess of ln 60 = 4.09; generate 50
# characters after a prompt from the trained weights (the checkpoint's optimizer state
# left out with --skip-extra) and check they are characters of the text; a prompt
# character outside the text and a checkpoint given without --skip-extra are errors that
# say what to do. Not timed. In the sanitized build (SANITIZE = ON, 20x slower) 10 steps,
# the loss not checked.
# usage: train_gpt.sh YTAPE [SANITIZE]
set -eu
ytape=$1 sanitize=${2:-OFF}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_gpt: $*"; exit 1; }
sample=../../samples/gpt.jl data=../../samples/data
"$ytape" trace $sample -f train_step model opt_state step tokens -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
"$ytape" trace $sample -f evaluate model test_tokens -o "$dir/eval.json"
"$ytape" opt "$dir/step.json" -o "$dir/step.json"
length=(--epochs 1)
[ "$sanitize" = ON ] && length=(--max-steps 10)
"$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data/proverbs_train.safetensors \
  "${length[@]}" --seed 3 --eval "$dir/eval.json" --eval-data $data/proverbs_test.safetensors \
  -o "$dir/gpt.safetensors" >"$dir/log"
cat "$dir/log"
[ "$sanitize" = ON ] || grep -Eq '^epoch 1/1: loss (1\.|2\.[0-7]).*; eval: loss (1\.|2\.[0-7])' "$dir/log" ||
  fail "the loss or the test loss is not below 2.8"

"$ytape" trace $sample -f generate model '"My son, "' 50 -o "$dir/gen.json"
"$ytape" run "$dir/gen.json" --inputs "$dir/gpt.safetensors" --skip-extra >"$dir/out"
cat "$dir/out"
grep -q '^out.prompt i64\[8\] \[25, 59, 2, 53, 49, 48, ' "$dir/out" || fail "the prompt's numbers"
grep '^out.text i64\[50\]' "$dir/out" | awk '{ for (i = 1; i <= NF; i++) {
    if ($i == "min") lo = $(i + 1); if ($i == "max") hi = $(i + 1) } }
  END { exit !(lo >= 1 && hi <= 60) }' || fail "characters outside the vocabulary"

if "$ytape" run "$dir/gen.json" --inputs "$dir/gpt.safetensors" 2>"$dir/err"; then
  fail "a checkpoint with the optimizer's state ran without --skip-extra"
fi
grep -q "is not an input of tape generate (--skip-extra leaves out" "$dir/err" || fail "$(cat "$dir/err")"
if "$ytape" trace $sample -f generate model '"Zebra"' 5 -o "$dir/z.json" 2>"$dir/err"; then
  fail "a prompt outside the vocabulary traced"
fi
grep -qF "the prompt's character \"Z\" is not in the text's" "$dir/err" || fail "$(cat "$dir/err")"
echo ok
