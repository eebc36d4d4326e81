#!/usr/bin/env bash
# Data-parallel training over MPI (docs/distributed.md) on the digits CNN of
# samples/digits.jl: 2 ranks (mpirun --oversubscribe -np 2) train as one process does,
# the same losses step by step and the same weights to 1e-5 of each tensor's magnitude
# after 10 steps (not to the bit: the ranks sum the batch's gradients and statistics in
# another order; the conv biases before batch norm, whose gradient is zero but for
# rounding, and the running means they feed, follow that rounding and are not compared);
# a checkpoint of 2 ranks resumes on 1 and on 2 ranks and continues the same; a rank
# killed with SIGKILL ends the job within 10 s, leaving its last checkpoint loadable;
# ranks given other data are refused, naming the rank. usage: train_mpi.sh YTAPE
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_mpi: $*"; exit 1; }
compare() { python3 ./compare_tensors.py "$@" '(layers\.[136]\.bias|\.μ|\.σ²)'; }
export LSAN_OPTIONS="suppressions=$PWD/lsan_mpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mpi=(mpirun --oversubscribe --allow-run-as-root -np 2)
data=../../samples/data/digits_train.safetensors
"$ytape" trace ../../samples/digits.jl -f train_step cnn opt_cnn step x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
train() { "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data --threads 1 "$@"; }

train --max-steps 10 -o "$dir/one.safetensors" --step-log "$dir/one.log" >/dev/null
"${mpi[@]}" "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data \
  --threads 1 --max-steps 10 -o "$dir/two.safetensors" --step-log "$dir/two.log" >/dev/null
paste "$dir/one.log" "$dir/two.log" | awk '{ d = $2 - $4; if (d < 0) d = -d;
  if ($1 != $3 || d > 1e-5 * $2) { print "step " $1 ": loss " $2 " and " $4; bad = 1 } }
  END { exit bad }' || fail "the losses of 2 ranks differ from one process's"
[ "$(wc -l <"$dir/two.log")" = 10 ] || fail "2 ranks logged $(wc -l <"$dir/two.log") steps, not 10"
compare "$dir/one.safetensors" "$dir/two.safetensors" 1e-5

# A checkpoint of 2 ranks at step 5, resumed on 1 and on 2 ranks to step 10.
"${mpi[@]}" "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data \
  --threads 1 --max-steps 5 --checkpoint "$dir/five.ckpt" >/dev/null
cp "$dir/five.ckpt" "$dir/five_copy.ckpt"
train --max-steps 10 --checkpoint "$dir/five.ckpt" --resume -o "$dir/resumed_one.safetensors" >/dev/null
"${mpi[@]}" "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data \
  --threads 1 --max-steps 10 --checkpoint "$dir/five_copy.ckpt" --resume \
  -o "$dir/resumed_two.safetensors" >/dev/null
compare "$dir/one.safetensors" "$dir/resumed_one.safetensors" 1e-5
compare "$dir/one.safetensors" "$dir/resumed_two.safetensors" 1e-5

# Rank 1 killed mid-training: the job ends within 10 s; the checkpoint loads.
"${mpi[@]}" "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data \
  --threads 1 --epochs 100000 --checkpoint "$dir/killed.ckpt" --every 5 >"$dir/killed.log" 2>&1 &
job=$!
for _ in $(seq 100); do [ -f "$dir/killed.ckpt" ] && break; sleep 0.1; done
[ -f "$dir/killed.ckpt" ] || fail "no checkpoint after 10 s"
pkill -KILL -f -n "ytape train $dir/step.json" || fail "no rank to kill"
start=$(date +%s)
status=0
wait $job || status=$?
took=$(($(date +%s) - start))
[ $status != 0 ] || fail "the job of a killed rank exited 0"
[ $took -le 10 ] || fail "the job took $took s to end after a rank was killed"
steps=$(grep -ao '"global_step": *[0-9]*' "$dir/killed.ckpt" | head -1 | grep -o '[0-9]*$' || true)
train --epochs 100000 --checkpoint "$dir/killed.ckpt" --resume --max-steps $((${steps:-5} + 1)) \
  >/dev/null || fail "the checkpoint of the killed job does not load"

# Ranks that read other data are refused before the first step.
status=0
mpirun --oversubscribe --allow-run-as-root -np 1 "$ytape" train "$dir/step.json" \
  --init "$dir/init.safetensors" --data $data --threads 1 --max-steps 1 : \
  -np 1 "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" \
  --data ../../samples/data/digits_test.safetensors --threads 1 --max-steps 1 >"$dir/refused.log" 2>&1 || status=$?
[ $status != 0 ] || fail "ranks with other data were not refused"
grep -q "ytape: error: rank 0: --data $data of rank 1 differs from rank 0's" "$dir/refused.log" ||
  { cat "$dir/refused.log"; fail "no message naming rank 1"; }
echo "train_mpi: ok"
