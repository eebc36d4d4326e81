#!/usr/bin/env bash
# ytape run --profile-out writes a Chrome trace (runtime/trace_events.h; its schema is
# checked in tests/unit/runtime/trace_events_test.cc): here, that the file is written, holds
# a run and the tape's steps with their source lines, and --by line prints lines; train
# --profile-out records its first steps; --by layer names a Flux model's layers; grad's and
# opt's --stats-out write their phases, opt's passes inside "opt".
# usage: profile_out.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace files/f.jl -f f x w -o "$dir/f.json" --save-inputs "$dir/in.safetensors" || exit 1
"$ytape" run "$dir/f.json" --inputs "$dir/in.safetensors" --repeat 3 --profile-out "$dir/t.json" > /dev/null || exit 1
head -c 15 "$dir/t.json"; echo
grep -o '"name":"run [0-9]"' "$dir/t.json"
grep -o '"cat":"files/f.jl:4"' "$dir/t.json" | sort -u
"$ytape" run "$dir/f.json" --inputs "$dir/in.safetensors" --profile --by line | grep -o '^files/f.jl:4 '
"$ytape" run "$dir/f.json" --inputs "$dir/in.safetensors" --by line 2>&1
echo "== train --profile-out, 3 steps"
"$ytape" trace ../../samples/digits_mlp.jl -f train_step model opt_state x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors" || exit 1
"$ytape" train "$dir/step.json" --data ../../samples/data/digits_train.safetensors \
  --init "$dir/init.safetensors" --max-steps 5 --profile-out "$dir/train.json" --profile-steps 3 \
  > /dev/null || exit 1
grep -o '"name":"run [0-9]"' "$dir/train.json"
echo "== run --profile --by layer"
"$ytape" trace files/review.jl -f f model x -o "$dir/review.json" --save-inputs "$dir/r.safetensors" || exit 1
"$ytape" run "$dir/review.json" --inputs "$dir/r.safetensors" --profile --by layer |
  grep -o '^layer \|^model.layers\[[12]\]: Dense([0-9 =>,a-z]*)\|^(outside layers)' | sort
echo "== --stats-out"
"$ytape" grad "$dir/review.json" -o "$dir/g.json" --stats-out "$dir/grad_phases.json" || exit 1
grep -o '"name":"[a-z]*","cat":"phase"' "$dir/grad_phases.json"
"$ytape" opt "$dir/g.json" -o "$dir/o.json" --passes dce,cse --stats-out "$dir/opt_phases.json" || exit 1
grep -o '"name":"[a-z]*","cat":"phase"' "$dir/opt_phases.json" | sort -u
exit 0
