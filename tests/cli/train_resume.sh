#!/usr/bin/env bash
# ytape train resumed from a checkpoint ends with the bytes of an uninterrupted run: after
# --max-steps, and after SIGINT at an arbitrary step (YTAPE_TEST_STALL_WRITE holds each
# checkpoint write for a second, so the signal lands during training). A checkpoint from
# another seed is refused.
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_resume: $*"; exit 1; }
base=(train/step.json --data ../../samples/data/digits_train.safetensors
      --init train/init.safetensors --epochs 3 --threads 2)
args=("${base[@]}" --seed 5)
"$ytape" train "${args[@]}" -o "$dir/whole.safetensors" >/dev/null || fail "the whole run failed"

# Stopped by --max-steps mid-epoch, then resumed.
"$ytape" train "${args[@]}" --checkpoint "$dir/ck.safetensors" --every 10 --max-steps 57 \
  -o "$dir/part.safetensors" >"$dir/out" || fail "the --max-steps run failed"
grep -qx 'stopped after global step 57 (--max-steps)' "$dir/out" || fail "said '$(cat "$dir/out")'"
head -c 300 "$dir/ck.safetensors" | grep -q '"epoch":"2","step":"11","global_step":"57"' ||
  fail "the checkpoint's position: $(head -c 300 "$dir/ck.safetensors")"
"$ytape" train "${args[@]}" --checkpoint "$dir/ck.safetensors" --resume \
  -o "$dir/resumed.safetensors" >/dev/null || fail "the resumed run failed"
cmp "$dir/whole.safetensors" "$dir/resumed.safetensors" || fail "resumed after --max-steps differs"

# Interrupted by SIGINT (a background job starts with SIGINT ignored; env gives it back).
rm -f "$dir/ck.safetensors"
YTAPE_TEST_STALL_WRITE=1 env --default-signal=INT "$ytape" train "${args[@]}" \
  --checkpoint "$dir/ck.safetensors" --every 1 -o "$dir/never.safetensors" \
  >/dev/null 2>"$dir/err" &
pid=$!
for _ in $(seq 200); do
  [ -e "$dir/ck.safetensors" ] && break
  sleep 0.05
done
[ -e "$dir/ck.safetensors" ] || fail "no checkpoint appeared"
kill -s INT "$pid"
wait "$pid"
status=$?
[ "$status" = 130 ] || fail "SIGINT: exit status $status, not 130; said '$(cat "$dir/err")'"
grep -q '^ytape: SIGINT: stopping after this step and writing a checkpoint; again to stop at once$' \
  "$dir/err" || fail "SIGINT: said '$(cat "$dir/err")'"
grep -q "^ytape: interrupted (SIGINT) after global step [0-9]* (epoch 1, step [0-9]* of 46); checkpoint written to $dir/ck.safetensors: continue with --resume$" \
  "$dir/err" || fail "SIGINT: said '$(cat "$dir/err")'"
[ ! -e "$dir/never.safetensors" ] || fail "an interrupted run wrote -o"
"$ytape" train "${args[@]}" --checkpoint "$dir/ck.safetensors" --resume \
  -o "$dir/resumed.safetensors" >/dev/null || fail "resuming after SIGINT failed"
cmp "$dir/whole.safetensors" "$dir/resumed.safetensors" || fail "resumed after SIGINT differs"

# Resuming needs the options of the run that wrote the checkpoint.
"$ytape" train "${base[@]}" --seed 6 --checkpoint "$dir/ck.safetensors" --resume 2>"$dir/err"
[ $? = 2 ] || fail "another seed was not refused"
[ "$(cat "$dir/err")" = "ytape: error: $dir/ck.safetensors was written by a run with --seed 5, not 6: give the same --seed to resume" ] ||
  fail "another seed: said '$(cat "$dir/err")'"
echo ok
