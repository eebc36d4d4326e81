#!/usr/bin/env bash
# Runs one program of the errors/ set, which must fail, and compares its exit code (2) and
# its message with NAME.err. Run in tests/, so that messages name errors/NAME.jl.
# usage: check.sh YTAPE NAME
#
# The program's first lines say how to run it:
#   # trace: ARGS       the arguments of `ytape trace errors/NAME.jl` (required)
#   # run: INPUTS       then run the traced tape: first on the saved example inputs, which
#                       must pass, then on errors/INPUTS, which must fail
# With UPDATE=1 the message is written to NAME.err instead: review the diff.
set -u
ytape=$1 name=$2
program=errors/$name.jl
trace_args=$(sed -n '1,5s/^# trace: //p' "$program")
inputs=$(sed -n '1,5s/^# run: //p' "$program")
if [ -z "$trace_args" ]; then
  echo "$program: no '# trace: ARGS' line at the top"
  exit 1
fi
read -ra args <<<"$trace_args"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ -z "$inputs" ]; then
  "$ytape" trace "$program" "${args[@]}" -o "$dir/tape.json" >"$dir/out" 2>"$dir/err"
  status=$?
else
  if ! "$ytape" trace "$program" "${args[@]}" -o "$dir/tape.json" \
      --save-inputs "$dir/in.safetensors" >/dev/null 2>"$dir/err"; then
    echo "the trace failed:"; cat "$dir/err"; exit 1
  fi
  if ! "$ytape" run "$dir/tape.json" --inputs "$dir/in.safetensors" >/dev/null 2>"$dir/err"; then
    echo "the tape fails on its own example inputs:"; cat "$dir/err"; exit 1
  fi
  "$ytape" run "$dir/tape.json" --inputs "errors/$inputs" >"$dir/out" 2>"$dir/err"
  status=$?
fi
if [ "${UPDATE:-}" = 1 ]; then
  cp "$dir/err" "errors/$name.err"
  exit 0
fi
ok=1
if [ "$status" != 2 ]; then
  echo "exit code: want 2, got $status"; ok=0
fi
if [ -s "$dir/out" ]; then
  echo "standard output should be empty:"; head -c 2000 "$dir/out"; ok=0
fi
if ! diff -u "errors/$name.err" "$dir/err"; then
  ok=0
fi
[ $ok = 1 ]
