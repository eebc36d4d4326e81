#!/usr/bin/env bash
# trace writes a tape and the example inputs; run takes them right after and computes the
# value the program computes.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace trace/tiny.jl -f loss W x -o "$dir/tape.json" --save-inputs "$dir/in.safetensors"
"$ytape" check "$dir/tape.json" >/dev/null
"$ytape" run "$dir/tape.json" --inputs "$dir/in.safetensors"
