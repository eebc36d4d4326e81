#!/usr/bin/env bash
# ytape train with random ops and optimizer state: the MLP of samples/digits_mlp.jl (dropout
# drawn from each step's key, SGD with momentum carried as opt_state.*). The loss falls,
# the test accuracy is reasonable, a run resumed after --max-steps ends with the bytes of
# an uninterrupted one, and another seed gives other weights. Not timed.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_mlp: $*"; exit 1; }
data=../../samples/data
"$ytape" trace ../../samples/digits_mlp.jl -f train_step model opt_state x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
"$ytape" trace ../../samples/digits_mlp.jl -f evaluate model xtest ytest -o "$dir/eval.json"
base=("$dir/step.json" --data $data/digits_train.safetensors --init "$dir/init.safetensors"
      --epochs 4 --threads 2)
"$ytape" train "${base[@]}" --seed 2 --eval "$dir/eval.json" --eval-data $data/digits_test.safetensors \
  -o "$dir/whole.safetensors" >"$dir/log"
cat "$dir/log"
awk '/^epoch 1\/4/ {first = $4} /^epoch 4\/4/ {last = $4}
     END {exit !(last < first / 2)}' "$dir/log" || fail "the loss did not fall"
grep '^epoch 4/4' "$dir/log" | grep -q '; eval: loss [0-9.]*, accuracy 0\.[89]' ||
  fail "test accuracy not above 0.8"
# Both the model and the optimizer state are carried and written.
head -c 600 "$dir/whole.safetensors" | grep -q '"opt_state.w1"' || fail "no opt_state.w1 in -o"
"$ytape" train "${base[@]}" --seed 2 --checkpoint "$dir/ck.safetensors" --max-steps 70 >/dev/null
"$ytape" train "${base[@]}" --seed 2 --checkpoint "$dir/ck.safetensors" --resume \
  -o "$dir/resumed.safetensors" >/dev/null
cmp "$dir/whole.safetensors" "$dir/resumed.safetensors" || fail "the resumed run differs"
"$ytape" train "${base[@]}" --seed 3 -o "$dir/other.safetensors" >/dev/null
cmp -s "$dir/whole.safetensors" "$dir/other.safetensors" && fail "another seed, the same weights"
echo ok
