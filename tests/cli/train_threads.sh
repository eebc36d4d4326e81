#!/usr/bin/env bash
# The digits CNN of samples/digits.jl (convolutions, batch norm, pooling, a dense layer,
# AdamW) trained 2 epochs at 1, 2 and 3 threads, and with the thread count left to follow
# the load: every run writes the same bytes (docs/training.md, Determinism). Not timed.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_threads: $*"; exit 1; }
data=../../samples/data
"$ytape" trace ../../samples/digits.jl -f train_step cnn opt_cnn step x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
run() {
  out=$1
  shift
  "$ytape" train "$dir/step.json" --data $data/digits_train.safetensors \
    --init "$dir/init.safetensors" --epochs 2 --seed 3 -o "$dir/$out" "$@" >/dev/null
}
run one.safetensors --threads 1 --fixed-threads
run two.safetensors --threads 2 --fixed-threads
run three.safetensors --threads 3 --fixed-threads
run free.safetensors --threads 2
for f in two three free; do
  cmp "$dir/one.safetensors" "$dir/$f.safetensors" || fail "1 thread and $f differ"
done
echo ok
