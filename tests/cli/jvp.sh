#!/usr/bin/env bash
# ytape jvp through the command line (docs/jvp.md): the small MLP's tape pushed forward in
# its input x gives a tangent input per differentiated input and a tangent output per
# output, checks and runs; of the gradient tape in the model (forward over reverse), the
# Hessian-vector products' outputs. Each rule's numbers are checked in the unit tests.
# usage: jvp.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace ../../samples/mlp.jl -f loss model x labels -o "$dir/f.json" >/dev/null || exit 1
"$ytape" jvp "$dir/f.json" --wrt x -o "$dir/j.json" || exit 1
"$ytape" check "$dir/j.json" | sed "s|$dir/||g"
"$ytape" show "$dir/j.json" | grep -E '^  (in|out) .*(tangent|out$)'
"$ytape" run "$dir/j.json" --random >/dev/null && echo "runs"
"$ytape" grad "$dir/f.json" --wrt model -o "$dir/g.json" || exit 1
"$ytape" jvp "$dir/g.json" --wrt model -o "$dir/h.json" || exit 1
"$ytape" show "$dir/h.json" | grep -cE '^  out .* tangent\.grad\.model\.' | sed 's/^/hvp outputs: /'
"$ytape" jvp "$dir/f.json" --wrt nope 2>&1 | sed "s|$dir/||g"
exit 0
