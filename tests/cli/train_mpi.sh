#!/usr/bin/env bash
# Data-parallel training over MPI (docs/distributed.md) on the digits CNN of
# samples/digits.jl: 2 ranks (mpirun --oversubscribe -np 2) train as one process does,
# the same losses step by step and the same weights to 1e-5 of each tensor's magnitude
# after 10 steps (not to the bit: the ranks sum the batch's gradients and statistics in
# another order; the conv biases before batch norm, whose gradient is zero but for
# rounding, and the running means they feed, follow that rounding and are not compared);
# a second run gives the same bytes; a checkpoint of 2 ranks resumes on 1 and on 2 ranks
# and continues the same; a rank killed with SIGKILL ends the job within 10 s, leaving its
# last checkpoint loadable; a rank stopped with SIGSTOP is named by the other within
# --comm-timeout; ranks given other data are refused, naming the rank.
# usage: train_mpi.sh YTAPE
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_mpi: $*"; exit 1; }
compare() { python3 ./compare_tensors.py "$@" '(layers\.[136]\.bias|\.μ|\.σ²)'; }
# Under the sanitized build: Open MPI's components, which it loads at MPI_Init, keep what
# they allocate and are unloaded at exit, where LeakSanitizer can no longer name them;
# ytape's own code is leak-checked in every other test (the unit tests run the ranks as
# threads), so the ranks run with the leak check off.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
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
# The same run again: the same bytes (the sums' order is fixed by the rank count).
"${mpi[@]}" "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data \
  --threads 1 --max-steps 10 -o "$dir/again.safetensors" >/dev/null
cmp "$dir/two.safetensors" "$dir/again.safetensors" || fail "2 ranks gave other bytes the second time"

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
for _ in $(seq 300); do [ -f "$dir/killed.ckpt" ] && break; sleep 0.1; done
[ -f "$dir/killed.ckpt" ] || fail "no checkpoint after 30 s"
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

# A rank stopped (SIGSTOP): the other gives up after --comm-timeout, naming it.
"${mpi[@]}" "$ytape" train "$dir/step.json" --init "$dir/init.safetensors" --data $data \
  --threads 1 --epochs 100000 --comm-timeout 3 --checkpoint "$dir/hung.ckpt" --every 5 \
  >"$dir/hung.log" 2>&1 &
job=$!
# Once both ranks train (a checkpoint is written), one stops.
for _ in $(seq 300); do [ -f "$dir/hung.ckpt" ] && break; sleep 0.1; done
[ -f "$dir/hung.ckpt" ] || fail "no checkpoint after 30 s"
stopped=$(pgrep -f -n "ytape train $dir/step.json") || fail "no rank to stop"
rank=$(tr '\0' '\n' <"/proc/$stopped/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
kill -STOP "$stopped"
start=$(date +%s)
status=0
wait $job || status=$?
took=$(($(date +%s) - start))
kill -CONT "$stopped" 2>/dev/null || true
[ $status != 0 ] || fail "the job of a stopped rank exited 0"
[ $took -le 10 ] || fail "the job took $took s to end after a rank stopped"
grep -Eq "rank $((1 - rank)): .*rank $rank has not (sent|taken) a message for 3 s: it has stopped or hangs" \
  "$dir/hung.log" ||
  { cat "$dir/hung.log"; fail "no message naming the stopped rank"; }

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
