#!/usr/bin/env bash
# Exports ResNet-18 (samples/resnet18.jl) as ONNX, runs it on ONNX Runtime (the npm package
# onnxruntime-node, installed into out/ort/ when missing) on the inputs the trace saved, and
# compares the outputs with `ytape run`'s: the forward tape of the sample, then the gradient
# tape (with respect to the parameters) of sum(logits²)/2 over two 96x96 images. The
# sample's own loss, sum(logits) of one image, leaves every channel of the last feature map
# a constant gradient, which batch norm's backward maps to 0 analytically, so its parameter
# gradients are partly rounding noise (ytape's two kernel sets differ by 9e-2 on them).
# Then tapes with region ops: a loop as Scan, its gradient, and a while loop and an if as
# Loop and If.
# Needs node and npm's registry, so it is not part of the tests.
# usage: bench/onnx_runtime.sh [YTAPE]   (default: build/release/cli/ytape)
set -euo pipefail
cd "$(dirname "$0")/.."
ytape=${1:-build/release/cli/ytape}
dir=out/onnx_runtime
mkdir -p "$dir" out/ort
if [ ! -d out/ort/node_modules/onnxruntime-node ]; then
  (cd out/ort && npm install --ignore-scripts --no-save --silent onnxruntime-node@1.30)
fi
export ORT_MODULES=$PWD/out/ort/node_modules

# compare TAPE INPUTS TOLERANCE: export, run on ytape and on ONNX Runtime, compare.
compare() {
  "$ytape" export "$1" -o "${1%.json}.onnx"
  "$ytape" run "$1" --inputs "$2" -o "${1%.json}_ytape.safetensors" >/dev/null
  node bench/onnx_runtime.mjs "${1%.json}.onnx" "$2" "${1%.json}_ytape.safetensors" "$3"
}

"$ytape" trace samples/resnet18.jl -f loss model image -o "$dir/resnet18.json" \
  --save-inputs "$dir/resnet18.safetensors"
compare "$dir/resnet18.json" "$dir/resnet18.safetensors" 1e-4

{
  cat samples/resnet18.jl
  printf '\nimages = rand(Float32, 96, 96, 3, 2)\n'
  printf 'squares(model, images) = sum(model(images) .^ 2) / 2\n'
} >"$dir/resnet18_squares.jl"
"$ytape" trace "$dir/resnet18_squares.jl" -f squares model images -o "$dir/squares.json" \
  --save-inputs "$dir/squares.safetensors"
"$ytape" grad "$dir/squares.json" --wrt model -o "$dir/squares_grad.json"
compare "$dir/squares_grad.json" "$dir/squares.safetensors" 1e-4

# Region ops: a loop traced as a scan (ONNX Scan), its gradient (a forward and a backward
# Scan), and Newton's while loop and an if on its root (Loop and If), on example values.
{
  cat tests/cli/regions/rnn_loop.jl
  printf '\nW = randn(Float32, 8, 8) ./ 4\nU = randn(Float32, 8, 4)\n'
  printf 'xs = randn(Float32, 4, 64)\nh = zeros(Float32, 8)\n'
} >"$dir/rnn.jl"
"$ytape" trace "$dir/rnn.jl" -f cell W U xs h -o "$dir/rnn.json" --save-inputs "$dir/rnn.safetensors"
compare "$dir/rnn.json" "$dir/rnn.safetensors" 1e-5
"$ytape" grad "$dir/rnn.json" -o "$dir/rnn_grad.json"
compare "$dir/rnn_grad.json" "$dir/rnn.safetensors" 1e-5
{
  cat tests/cli/regions/newton.jl
  printf '\na = 35.0\nx0 = 1.0e9\n'
} >"$dir/newton.jl"
"$ytape" trace "$dir/newton.jl" -f root a x0 -o "$dir/newton.json" \
  --save-inputs "$dir/newton.safetensors"
compare "$dir/newton.json" "$dir/newton.safetensors" 1e-12
