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
# A symbolic batch dim takes the size given; without one it is refused by name.
"$ytape" import mlp_batch.onnx --dim batch=3 -o batch.json
"$ytape" show batch.json | grep -q 'in  %1::f32\[4,3\] x'
if "$ytape" import mlp_batch.onnx -o batch.json 2>err; then
  echo "a symbolic dim without a size should be refused"; exit 1
fi
grep -q "dimension 'batch' has no fixed size.*--dim batch=N" err
"$ytape" import mlp_batch.onnx --dim batch=x -o batch.json 2>err && exit 1
grep -q "ytape: error: --dim batch=x: give a symbolic dim's size as NAME=N" err
# A sequence input takes the length given, one tape input per tensor.
"$ytape" import sequence_input.onnx --length parts=3 -o seq.json
"$ytape" show seq.json | grep -q 'parts\[3\]'
# Or the shapes of its tensors (ONNX's order), which must be the declared ones, (2) here.
"$ytape" import sequence_input.onnx --length 'parts=[2],[2]' -o seq.json
"$ytape" show seq.json | grep -q 'in  %2::f32\[2\] parts\[2\]'
"$ytape" import sequence_input.onnx --length 'parts=[2],[3]' -o seq.json 2>err && exit 1
grep -q "input 'parts': tensor 2 is given the shape \[3\], which the model's does not allow" err
"$ytape" import sequence_input.onnx --length parts=x -o seq.json 2>err && exit 1
grep -q "ytape: error: --length parts=x: give a sequence input's length as NAME=N" err
"$ytape" import sequence_input.onnx --length parts=none -o seq.json 2>err && exit 1
grep -q "input 'parts': a sequence is never none: give its length" err
echo kept >kept.json
if "$ytape" import unsupported_op.onnx -o kept.json 2>/dev/null; then
  echo "importing an unsupported op should fail"; exit 1
fi
[ "$(cat kept.json)" = kept ]
echo ok
