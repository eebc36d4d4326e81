#!/usr/bin/env bash
# run -o writes the outputs as safetensors that read back as inputs of the same names, and
# a guard that fails stops the run naming its line.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" run run/add.json --inputs run/inputs.json -o "$dir/out.safetensors"
[ -s "$dir/out.safetensors" ] || { echo "no output file"; exit 1; }
# The written file holds z, up and total with the row-major header a reader expects.
head -c 200 "$dir/out.safetensors" | tr -d '\0' | grep -q '"z":{"dtype":"F32","shape":\[3\]' ||
  { echo "unexpected header: $(head -c 200 "$dir/out.safetensors")"; exit 1; }
echo ok
