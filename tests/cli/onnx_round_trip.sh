#!/usr/bin/env bash
# export -> import -> `ytape diff` against the original shows no difference, for traced
# forward tapes, their gradient tapes and a second-order tape (Hessian-vector products):
# the importer reads ytape's marks (onnx/marks.h) and rebuilds the very primitives. Read
# as any ONNX model (--ignore-marks), a gradient tape comes back as other, equivalent ops,
# which the diff must show: the marks are what makes the round trip exact.
# usage: onnx_round_trip.sh YTAPE   (run in tests/cli)
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
samples=../../samples
"$ytape" trace $samples/mlp.jl -f loss model x labels -o "$dir/mlp.json" \
  --save-inputs "$dir/mlp.safetensors"
"$ytape" grad "$dir/mlp.json" -o "$dir/mlp_grad.json"
"$ytape" grad "$dir/mlp_grad.json" --vjp -o "$dir/mlp_hvp.json"
"$ytape" trace $samples/resnet18.jl -f loss model image -o "$dir/resnet18.json" \
  --save-inputs "$dir/resnet18.safetensors"
"$ytape" grad "$dir/resnet18.json" --wrt model -o "$dir/resnet18_grad.json"
"$ytape" trace $samples/digits_softmax.jl -f train_step model x y -o "$dir/step.json" \
  --save-inputs "$dir/step.safetensors"

# TAPE [WEIGHTS]: the tape exported (with WEIGHTS as initializers), imported, diffed.
round_trip() {
  local tape=$1 weights=${2:-}
  local stem=${tape%.json}
  if [ -n "$weights" ]; then
    "$ytape" export "$dir/$tape" -o "$dir/$stem.onnx" --weights "$dir/$weights"
  else
    "$ytape" export "$dir/$tape" -o "$dir/$stem.onnx"
  fi
  "$ytape" import "$dir/$stem.onnx" -o "$dir/${stem}_back.json"
  if ! out=$("$ytape" diff "$dir/$tape" "$dir/${stem}_back.json"); then
    echo "$tape: export and import give another tape:"; echo "$out" | head -40; exit 1
  fi
  echo "$tape: no difference"
}
round_trip mlp.json mlp.safetensors
round_trip mlp_grad.json
round_trip mlp_hvp.json
round_trip resnet18.json resnet18.safetensors
round_trip resnet18_grad.json
round_trip step.json step.safetensors

"$ytape" import "$dir/mlp_grad.onnx" --ignore-marks -o "$dir/mlp_grad_nodes.json"
if "$ytape" diff --stat "$dir/mlp_grad.json" "$dir/mlp_grad_nodes.json" >"$dir/stat.txt"; then
  echo "mlp_grad.json: read without its marks, the same tape: the marks were not needed"
  exit 1
fi
echo "mlp_grad.json without marks: $(tail -1 "$dir/stat.txt")"
