#!/usr/bin/env bash
# ytape train on a step made of the language's own parts: samples/digits_adam.jl takes
# its gradient with withgradient and updates with Optimisers.jl's Adam, whose learning
# rate a cosine schedule of the carried step count sets. The loss falls and the test
# accuracy is reasonable. Not timed.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_adam: $*"; exit 1; }
data=../../samples/data
"$ytape" trace ../../samples/digits_adam.jl -f train_step model opt_state t x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
"$ytape" trace ../../samples/digits_adam.jl -f evaluate model xtest ytest -o "$dir/eval.json"
! "$ytape" show "$dir/step.json" | grep -q guard || fail "the step has a guard"
"$ytape" train "$dir/step.json" --data $data/digits_train.safetensors --init "$dir/init.safetensors" \
  --epochs 5 --seed 7 --threads 2 --eval "$dir/eval.json" --eval-data $data/digits_test.safetensors \
  -o "$dir/final.safetensors" >"$dir/log"
cat "$dir/log"
[ "$(grep -c '^epoch [1-5]/5: loss ' "$dir/log")" = 5 ] || fail "not one line per epoch"
awk '/^epoch 1\/5/ {first = $4} /^epoch 5\/5/ {last = $4}
     END {exit !(last < first / 4)}' "$dir/log" || fail "the loss did not fall"
grep '^epoch 5/5' "$dir/log" | grep -q '; eval: loss [0-9.]*, accuracy 0\.[89]' ||
  fail "test accuracy not above 0.8"
echo ok
