#!/usr/bin/env bash
# ytape distribute as a user meets it (docs/distributed.md): the tape of each rank is
# valid, shows its allreduce and plans its buckets; run under mpirun -np 2 it computes
# the one process's outputs; grad and export refuse its comm ops by name; mistakes get
# one message that says what to fix. usage: distribute.sh YTAPE
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "distribute: $*"; exit 1; }
# Under the sanitized build: Open MPI's components, which it loads at MPI_Init, keep what
# they allocate and are unloaded at exit, where LeakSanitizer can no longer name them;
# ytape's own code is leak-checked in every other test (the unit tests run the ranks as
# threads), so the ranks run with the leak check off.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
"$ytape" trace ../../samples/mlp.jl -f loss model x labels -o "$dir/loss.json" \
  --save-inputs "$dir/inputs.safetensors"
"$ytape" grad "$dir/loss.json" -o "$dir/grad.json"
"$ytape" distribute "$dir/grad.json" --ranks 2 --split x,labels -o "$dir/dist.json" 2>"$dir/summary"
grep -q "^distribute: 2 ranks; .* allreduce ops of .* values" "$dir/summary" || fail "no summary"
"$ytape" check "$dir/dist.json" >/dev/null
"$ytape" show "$dir/dist.json" | grep -q "= allreduce(.*ranks=2" || fail "show has no allreduce"
"$ytape" show "$dir/dist.json" | grep -q 'in  %[0-9]*::f32\[784,16\] x' || fail "x is not split"
"$ytape" plan "$dir/dist.json" | grep -q "issues a bucket of" || fail "plan shows no bucket"
# Deterministic, and diff says what changed.
"$ytape" distribute "$dir/grad.json" --ranks 2 --split x,labels -o "$dir/again.json" 2>/dev/null
cmp "$dir/dist.json" "$dir/again.json" || fail "two runs wrote other bytes"
status=0
"$ytape" diff "$dir/grad.json" "$dir/dist.json" >"$dir/diff" || status=$?
[ $status = 1 ] && grep -q "allreduce" "$dir/diff" || fail "diff does not show the allreduce"

# 2 ranks compute what one process computes.
"$ytape" run "$dir/grad.json" --inputs "$dir/inputs.safetensors" -o "$dir/one.safetensors"
mpirun --oversubscribe --allow-run-as-root -np 2 "$ytape" run "$dir/dist.json" \
  --inputs "$dir/inputs.safetensors" -o "$dir/two.safetensors"
python3 ./compare_tensors.py "$dir/one.safetensors" "$dir/two.safetensors" 1e-5
status=0
"$ytape" run "$dir/dist.json" --inputs "$dir/inputs.safetensors" 2>"$dir/alone" || status=$?
[ $status = 2 ] && grep -q "dist.json is distributed for 2 ranks, but this run has 1: run it under mpirun -np 2" \
  "$dir/alone" || { cat "$dir/alone"; fail "run in one process is not refused"; }

# Refusals and mistakes.
expect() {  # expect MESSAGE COMMAND...: exit 2 and MESSAGE on stderr
  local message=$1 status=0
  shift
  "$@" >/dev/null 2>"$dir/err" || status=$?
  [ $status = 2 ] && grep -qF "$message" "$dir/err" || { cat "$dir/err"; fail "$* did not say: $message"; }
}
"$ytape" distribute "$dir/loss.json" --ranks 2 --split x,labels -o "$dir/dloss.json" 2>/dev/null
expect "(allreduce, ../../samples/mlp.jl:14): a derivative flows through a comm op of a distributed tape; differentiate the tape written for one process, then distribute it" \
  "$ytape" grad "$dir/dloss.json" -o "$dir/g.json"
expect "allreduce has no ONNX form here" "$ytape" export "$dir/dist.json" -o "$dir/d.onnx"
expect "no input 'label' to split; did you mean 'labels'?" \
  "$ytape" distribute "$dir/grad.json" --ranks 2 --split x,label
expect "input 'x' (f32[784,32]) has a batch of 32, which 3 ranks do not split evenly" \
  "$ytape" distribute "$dir/grad.json" --ranks 3 --split x
expect "the tape has allreduce ops already: distribute the tape written for one process" \
  "$ytape" distribute "$dir/dist.json" --ranks 2 --split x
echo "distribute: ok"
