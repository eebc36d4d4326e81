#!/usr/bin/env bash
# export writes a traced tape as an ONNX model, its example inputs as initializers; import
# brings it back as a tape that computes the same loss on the same values.
# usage: onnx_export.sh YTAPE   (run in tests/cli)
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace ../../samples/mlp.jl -f loss model x labels -o "$dir/mlp.json" \
  --save-inputs "$dir/mlp.safetensors"
"$ytape" export "$dir/mlp.json" -o "$dir/mlp.onnx" --weights "$dir/mlp.safetensors"
"$ytape" import "$dir/mlp.onnx" -o "$dir/back.json" --weights "$dir/back.safetensors"
want=$("$ytape" run "$dir/mlp.json" --inputs "$dir/mlp.safetensors")
got=$("$ytape" run "$dir/back.json" --inputs "$dir/back.safetensors")
if [ "$want" != "$got" ]; then
  echo "the round trip computes another loss:"; echo "$want"; echo "$got"; exit 1
fi
echo ok
