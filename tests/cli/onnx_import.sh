#!/usr/bin/env bash
# import turns an ONNX model into a tape and a weights file that check, opt and run take;
# the same model gives the same bytes; a failed import leaves its outputs as they were.
# usage: onnx_import.sh YTAPE ONNX_MAKE_MODELS
set -eu
ytape=$1 make_models=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$make_models" "$dir"
cd "$dir"
"$ytape" import mlp.onnx -o tape.json --weights weights.safetensors
"$ytape" check tape.json | grep -q '5 inputs'
"$ytape" opt tape.json -o opt.json
# x is made up; the weights come from the file; a softmax over 3 classes averages 1/3.
"$ytape" run opt.json --inputs weights.safetensors --random | grep -q 'mean 0.333333'
"$ytape" import mlp.onnx -o again.json --weights again.safetensors
cmp tape.json again.json
cmp weights.safetensors again.safetensors
echo kept >kept.json
if "$ytape" import unsupported_op.onnx -o kept.json 2>/dev/null; then
  echo "importing an unsupported op should fail"; exit 1
fi
[ "$(cat kept.json)" = kept ]
echo ok
