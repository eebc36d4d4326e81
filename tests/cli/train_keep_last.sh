#!/usr/bin/env bash
# ytape train --keep-last: the MLP of samples/digits_mlp.jl, its step traced at the batch of
# 32 and again at 28 (1500 = 46 * 32 + 28), so that each epoch also trains on its last 28
# samples: 47 steps an epoch, the loss falls, and a run resumed from a checkpoint taken at
# the last step of an epoch ends with the bytes of an uninterrupted one. Not timed.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "train_keep_last: $*"; exit 1; }
data=../../samples/data
program=../../samples/digits_mlp.jl
"$ytape" trace $program -f train_step model opt_state x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
"$ytape" trace $program -f train_step model opt_state "f32[8,8,1,28]" "f32[10,28]" \
  -o "$dir/last.json"
base=("$dir/step.json" --data $data/digits_train.safetensors --init "$dir/init.safetensors"
      --keep-last "$dir/last.json" --epochs 3 --seed 4 --threads 2)
"$ytape" train "${base[@]}" -o "$dir/whole.safetensors" >"$dir/log"
cat "$dir/log"
[ "$(grep -c '(47 steps' "$dir/log")" = 3 ] || fail "not 47 steps in every epoch"
awk '/^epoch 1\/3/ {first = $4} /^epoch 3\/3/ {last = $4}
     END {exit !(last < first / 2)}' "$dir/log" || fail "the loss did not fall"
"$ytape" train "${base[@]}" --checkpoint "$dir/ck.safetensors" --max-steps 47 >/dev/null
"$ytape" train "${base[@]}" --checkpoint "$dir/ck.safetensors" --resume \
  -o "$dir/resumed.safetensors" >/dev/null
cmp "$dir/whole.safetensors" "$dir/resumed.safetensors" || fail "the resumed run differs"
# The step tape itself is no last step: its batch is not 28.
if "$ytape" train "${base[@]/$dir\/last.json/$dir/step.json}" 2>"$dir/err"; then
  fail "a last step of the wrong batch size was taken"
fi
grep -q "trace the step at a batch of 28" "$dir/err" || { cat "$dir/err"; fail "no clear error"; }
echo ok
