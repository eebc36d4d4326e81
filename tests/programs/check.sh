#!/usr/bin/env bash
# Checks one program of the programs/ set end to end: traces it on its example values,
# differentiates the tape, runs the gradient tape on the saved inputs and compares the
# gradient with finite differences. Run in tests/, so that messages name
# programs/NAME.jl.
# usage: check.sh YTAPE NAME
#
# One of the program's first 20 lines says how to trace it:
#   # check: ARGS       the arguments of `ytape trace programs/NAME.jl` (required): the
#                       entry (-f ENTRY) and its arguments, globals of the program
set -u
ytape=$1 name=$2
program=programs/$name.jl
trace_args=$(sed -n '1,20s/^# check: //p' "$program")
if [ -z "$trace_args" ]; then
  echo "$program: no '# check: ARGS' line in its first 20 lines"
  exit 1
fi
read -ra args <<<"$trace_args"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {  # step, then the output files to show
  local step=$1
  shift
  echo "$program: $step failed:"
  cat "$@"
  exit 1
}
"$ytape" trace "$program" "${args[@]}" -o "$dir/tape.json" --save-inputs "$dir/in.safetensors" \
  >"$dir/out" 2>"$dir/err" || fail "ytape trace ${args[*]}" "$dir/err"
"$ytape" grad "$dir/tape.json" -o "$dir/grad.json" >"$dir/out" 2>"$dir/err" ||
  fail "ytape grad" "$dir/out" "$dir/err"
"$ytape" run "$dir/grad.json" --inputs "$dir/in.safetensors" >"$dir/out" 2>"$dir/err" ||
  fail "ytape run of the gradient tape" "$dir/out" "$dir/err"
"$ytape" gradcheck "$dir/tape.json" --inputs "$dir/in.safetensors" >"$dir/out" 2>"$dir/err" ||
  fail "ytape gradcheck" "$dir/out" "$dir/err"
tail -n 1 "$dir/out"
