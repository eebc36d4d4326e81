#!/usr/bin/env bash
# samples/mlp.jl and a copy with the first layer's activation changed (relu -> tanh): the
# diff of their tapes must show only that op, and the diff of their gradient tapes only it
# and its gradient ops. Prints both diffs and their exit codes.
# usage: diff_mlp.sh YTAPE
set -uo pipefail
ytape=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/a" "$dir/b"
cp ../../samples/mlp.jl "$dir/a/mlp.jl"
sed 's/Dense(784 => 256, relu)/Dense(784 => 256, tanh)/' ../../samples/mlp.jl >"$dir/b/mlp.jl"
cmp -s "$dir/a/mlp.jl" "$dir/b/mlp.jl" && { echo "the edit did not apply"; exit 1; }
for side in a b; do
  (cd "$dir/$side" && "$ytape" trace mlp.jl -f loss model x labels -o mlp.json &&
   "$ytape" grad mlp.json -o grad.json) || exit 1
done
cd "$dir"
"$ytape" diff a/mlp.json b/mlp.json
echo "exit $?"
"$ytape" diff a/grad.json b/grad.json
echo "exit $?"
"$ytape" diff --stat a/grad.json b/grad.json
echo "exit $?"
# The same program traced twice: no difference.
"$ytape" diff a/grad.json a/grad.json
echo "exit $?"
