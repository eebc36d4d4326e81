#!/usr/bin/env bash
# No command overwrites its own input: an output that names an input, by any spelling or
# link, or another output, is refused before any work and the file is left as it was.
# `opt -o` of its own input is the documented exception (it reads first). A tampered
# checkpoint (a position that the run never reaches, another step tape) is refused.
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "overwrite: $*"; exit 1; }
cp ../../samples/data/digits_train.safetensors "$dir/data.safetensors"
cp train/step.json train/init.safetensors run/add.json "$dir/"
mkdir "$dir/sub"
ln -s "$dir/data.safetensors" "$dir/link.safetensors"
sum=$(cksum <"$dir/data.safetensors")
train=(train "$dir/step.json" --data "$dir/data.safetensors" --init "$dir/init.safetensors")

# refused ARGS... EXPECTED-MESSAGE: exit 2, exactly that message, nothing on stdout.
refused() {
  local expected=${*: -1}
  "$ytape" "${@:1:$#-1}" >"$dir/out" 2>"$dir/err"
  local status=$?
  [ "$status" = 2 ] || fail "'${*:1:$#-1}': exit $status; said '$(cat "$dir/err")'"
  [ "$(cat "$dir/err")" = "ytape: error: $expected" ] || fail "'${*:1:$#-1}': said '$(cat "$dir/err")'"
  [ ! -s "$dir/out" ] || fail "'${*:1:$#-1}': printed '$(cat "$dir/out")'"
}
refused "${train[@]}" -o "$dir/data.safetensors" \
  "-o $dir/data.safetensors is the file that --data reads: writing it would destroy an input; give another file"
refused "${train[@]}" -o "$dir/sub/../data.safetensors" \
  "-o $dir/sub/../data.safetensors is the file that --data reads: writing it would destroy an input; give another file"
refused "${train[@]}" --checkpoint "$dir/link.safetensors" \
  "--checkpoint $dir/link.safetensors is the file that --data reads: writing it would destroy an input; give another file"
refused "${train[@]}" --checkpoint "$dir/init.safetensors" \
  "--checkpoint $dir/init.safetensors is the file that --init reads: writing it would destroy an input; give another file"
refused "${train[@]}" --checkpoint "$dir/ck.safetensors" -o "$dir/ck.safetensors" \
  "-o $dir/ck.safetensors is the file that --checkpoint writes: writing it would destroy an output; give another file"
[ "$(cksum <"$dir/data.safetensors")" = "$sum" ] || fail "the data file changed"
[ ! -e "$dir/ck.safetensors" ] || fail "a refused run wrote its checkpoint"

refused run "$dir/add.json" --random -o "$dir/add.json" \
  "-o $dir/add.json is the file that TAPE reads: writing it would destroy an input; give another file"
refused grad "$dir/add.json" -o "$dir/add.json" \
  "-o $dir/add.json is the file that TAPE reads: writing it would destroy an input; give another file"
refused show "$dir/add.json" -o "$dir/add.json" \
  "-o $dir/add.json is the file that TAPE reads: writing it would destroy an input; give another file"
echo 'f(x) = sum(x)' >"$dir/p.jl"
refused trace "$dir/p.jl" -f f 'f32[3]' -o "$dir/p.jl" \
  "-o $dir/p.jl is the file that PROGRAM reads: writing it would destroy an input; give another file"
refused trace "$dir/p.jl" -f f 'f32[3]' -o "$dir/t.json" --save-inputs "$dir/t.json" \
  "--save-inputs $dir/t.json is the file that -o writes: writing it would destroy an output; give another file"
[ "$(cat "$dir/p.jl")" = 'f(x) = sum(x)' ] || fail "the program changed"
# opt in place is allowed: it reads the tape first.
"$ytape" opt "$dir/add.json" -o "$dir/add.json" || fail "opt in place failed"
"$ytape" check "$dir/add.json" >/dev/null || fail "opt in place wrote a bad tape"

# Checkpoints: a position edited by hand, or another step tape, is refused on --resume.
run=("${train[@]}" --epochs 2 --seed 3 --checkpoint "$dir/ck.safetensors")
"$ytape" "${run[@]}" --max-steps 50 >/dev/null || fail "the checkpointed run failed"
head -c 400 "$dir/ck.safetensors" | grep -q '"epoch":"2","step":"4","global_step":"50"' ||
  fail "the checkpoint's position: $(head -c 400 "$dir/ck.safetensors")"
# The digest a checkpoint of TAPE holds, read back from a one-step run's checkpoint.
digest() {
  "$ytape" train "$1" --data "$dir/data.safetensors" --init "$dir/init.safetensors" \
    --max-steps 1 --checkpoint "$dir/digest.safetensors" >/dev/null
  head -c 400 "$dir/digest.safetensors" | grep -ao '"step_tape":"[0-9a-f]*"' | cut -d'"' -f4
}
# Edits of the same length keep the header's size, so the file still parses.
edit() { perl -0777 -pe "$1" "$dir/ck.safetensors" >"$dir/bad.safetensors"; }
resume_bad() {
  refused "${train[@]}" --epochs 2 --seed 3 --checkpoint "$dir/bad.safetensors" --resume "$1"
}
edit 's/"global_step":"50"/"global_step":"99"/'
resume_bad "$dir/bad.safetensors is at global step 99, but epoch 2 and step 4 at 46 steps an epoch make 50"
edit 's/"step":"4",/"step":"9",/'
resume_bad "$dir/bad.safetensors is at global step 50, but epoch 2 and step 9 at 46 steps an epoch make 55"
edit 's/"epoch":"2","step":"4"/"epoch":"9","step":"4"/'
resume_bad "$dir/bad.safetensors is at epoch 9, past the 2 epochs of this run: give --epochs 8 or more to continue it"
# Another step size is another tape; moved source lines are the same tape.
sed 's/"value":\[0.5\]/"value":[0.25]/' "$dir/step.json" >"$dir/other.json"
refused train "$dir/other.json" --data "$dir/data.safetensors" --init "$dir/init.safetensors" \
  --epochs 2 --seed 3 --checkpoint "$dir/ck.safetensors" --resume \
  "$dir/ck.safetensors was written by a run of another step tape (digest $(digest "$dir/step.json"); $dir/other.json has $(digest "$dir/other.json")): resume with the step tape it belongs to"
sed 's/digits_softmax.jl:3/digits_softmax.jl:4/' "$dir/step.json" >"$dir/moved.json"
"$ytape" train "$dir/moved.json" --data "$dir/data.safetensors" --init "$dir/init.safetensors" \
  --epochs 2 --seed 3 --checkpoint "$dir/ck.safetensors" --resume >/dev/null ||
  fail "resuming with the step tape traced from moved lines failed"
echo ok
