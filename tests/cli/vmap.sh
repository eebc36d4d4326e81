#!/usr/bin/env bash
# ytape vmap through the command line (docs/vmap.md): the small CNN's gradient batched over
# its data gives per-example gradients (a last dim of the batch size on each), runs, and the
# example that was not batched keeps its type; bad requests say what to give.
# usage: vmap.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace remat/cnn.jl -f loss model 'f32[12,12,1,1]' 'f32[10,1]' -o "$dir/f.json" || exit 1
"$ytape" grad "$dir/f.json" --wrt model -o "$dir/g.json" || exit 1
"$ytape" vmap "$dir/g.json" --over x,y --size 5 -o "$dir/v.json" || exit 1
"$ytape" check "$dir/v.json" | sed "s|$dir/||"
"$ytape" show "$dir/v.json" | grep -E '^  (in|out) .*(x|y|out|layers.1.weight)$'
"$ytape" run "$dir/v.json" --random >/dev/null && echo "runs"
"$ytape" vmap "$dir/g.json" --over x --size 0 2>&1 | sed 's/^/size: /'
"$ytape" vmap "$dir/g.json" --over z --size 2 2>&1 | sed 's/^/over: /'
"$ytape" vmap "$dir/g.json" --size 2 2>&1 | sed 's/^/no over: /'
exit 0
