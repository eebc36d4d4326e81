#!/usr/bin/env bash
# ytape train on the steps of samples/digits.jl, made of the language's own parts: a random
# shift (a random op), withgradient, batch norm and dropout in training mode, AdamW on a
# cosine schedule of the carried step count. For the MLP and the CNN the loss falls and the
# test accuracy is reasonable (evaluation in test mode, with the running statistics); the
# same seed gives the same bytes. Not timed.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_adam: $*"; exit 1; }
data=../../samples/data
program=../../samples/digits.jl
train() {  # model epochs output
  "$ytape" train "$dir/$1.step.json" --data $data/digits_train.safetensors \
    --init "$dir/$1.init.safetensors" --epochs "$2" --seed 7 --threads 2 --eval "$dir/$1.eval.json" \
    --eval-data $data/digits_test.safetensors -o "$dir/$3"
}
for model in mlp cnn; do
  "$ytape" trace $program -f train_step $model opt_$model step x y -o "$dir/$model.step.json" \
    --save-inputs "$dir/$model.init.safetensors"
  "$ytape" trace $program -f evaluate $model xtest ytest -o "$dir/$model.eval.json"
  ! "$ytape" show "$dir/$model.step.json" | grep -q guard || fail "the $model step has a guard"
done
"$ytape" show "$dir/cnn.step.json" | grep -q ' out.model.layers.2.μ$' ||
  fail "the running statistics are not carried"
train mlp 5 mlp.safetensors >"$dir/log"
train cnn 3 cnn.safetensors >>"$dir/log"
cat "$dir/log"
[ "$(grep -c '^epoch [1-5]/[35]: loss ' "$dir/log")" = 8 ] || fail "not one line per epoch"
awk '/^epoch 1\/5/ {first = $4} /^epoch 5\/5/ {last = $4}
     END {exit !(last < first / 2)}' "$dir/log" || fail "the MLP's loss did not fall"
grep '^epoch 5/5' "$dir/log" | grep -q '; eval: loss [0-9.]*, accuracy 0\.[89]' ||
  fail "the MLP's test accuracy is not above 0.8"
grep '^epoch 3/3' "$dir/log" | grep -q '; eval: loss [0-9.]*, accuracy 0\.[89]' ||
  fail "the CNN's test accuracy is not above 0.8"
train cnn 3 again.safetensors >/dev/null
cmp -s "$dir/cnn.safetensors" "$dir/again.safetensors" || fail "two runs differ"
echo ok
