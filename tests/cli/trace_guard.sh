#!/usr/bin/env bash
# A tape traced through a data-dependent branch runs on inputs that take the same branch
# and stops, naming the program line, on inputs that take the other.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace trace/branch.jl -f f x -o "$dir/tape.json" --save-inputs "$dir/in.safetensors"
"$ytape" run "$dir/tape.json" --inputs "$dir/in.safetensors"
exec "$ytape" run "$dir/tape.json" --inputs trace/other_branch.json
