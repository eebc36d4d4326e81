#!/usr/bin/env bash
# Every sample's gradient passes gradcheck: the traced basics, MLP and ResNet-18 (on a
# smaller image, with one random direction per input), the C++-built MLP tape, and the
# Hessian-vector products of Rosenbrock's function (its gradient tape, checked again).
set -eu
ytape=$1
samples=../../samples
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
check() {  # name, gradcheck arguments...
  local name=$1
  shift
  if ! "$ytape" gradcheck "$@" >"$dir/$name.out"; then
    cat "$dir/$name.out"
    echo "gradcheck failed: $name" >&2
    exit 1
  fi
  tail -n 1 "$dir/$name.out" | sed "s/^/$name: /"
}
"$ytape" trace $samples/basics.jl -f main x -o "$dir/basics.json" --save-inputs "$dir/basics.st" 2>/dev/null
check basics "$dir/basics.json" --inputs "$dir/basics.st"
"$ytape" trace $samples/mlp.jl -f loss model x labels -o "$dir/mlp.json" --save-inputs "$dir/mlp.st"
check mlp "$dir/mlp.json" --inputs "$dir/mlp.st"
check mlp_tape $samples/tapes/mlp.json --random
"$ytape" trace $samples/resnet18.jl -f loss model 'f32[64,64,3,2]' -o "$dir/resnet18.json"
check resnet18 "$dir/resnet18.json" --random --directions 1 --max-elements 0
"$ytape" trace grad/rosenbrock.jl -f rosenbrock x -o "$dir/rosenbrock.json" --save-inputs "$dir/rosenbrock.st"
"$ytape" grad "$dir/rosenbrock.json" -o "$dir/rosenbrock_grad.json"
check rosenbrock_hessian "$dir/rosenbrock_grad.json" --inputs "$dir/rosenbrock.st"
