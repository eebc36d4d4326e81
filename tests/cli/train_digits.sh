#!/usr/bin/env bash
# ytape train end to end on the handwritten digits: trace the hand-written-gradient softmax
# regression of samples/digits_softmax.jl, train it for 5 epochs with evaluation after each,
# and check that the loss falls, the test accuracy is reasonable, and a second run with the
# same seed and threads writes the same bytes. Not timed.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_digits: $*"; exit 1; }
data=../../samples/data
"$ytape" trace ../../samples/digits_softmax.jl -f train_step model x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
"$ytape" trace ../../samples/digits_softmax.jl -f evaluate model xtest ytest -o "$dir/eval.json"
run() {
  "$ytape" train "$dir/step.json" --data $data/digits_train.safetensors --init "$dir/init.safetensors" \
    --epochs 5 --seed 7 --threads 2 --eval "$dir/eval.json" --eval-data $data/digits_test.safetensors \
    -o "$1"
}
run "$dir/a.safetensors" >"$dir/log"
cat "$dir/log"
[ "$(grep -c '^epoch [1-5]/5: loss ' "$dir/log")" = 5 ] || fail "not one line per epoch"
# The last epoch's mean loss is below half the first's; test accuracy above 80%.
awk '/^epoch 1\/5/ {first = $4} /^epoch 5\/5/ {last = $4}
     END {exit !(last < first / 2)}' "$dir/log" || fail "the loss did not fall"
grep '^epoch 5/5' "$dir/log" | grep -q '; eval: loss [0-9.]*, accuracy 0\.[89]' ||
  fail "test accuracy not above 0.8"
run "$dir/b.safetensors" >/dev/null
cmp "$dir/a.safetensors" "$dir/b.safetensors" || fail "two runs with one seed differ"
echo ok
