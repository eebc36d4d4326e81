#!/usr/bin/env bash
# Custom rules through the command line (docs/rules.md): a traced rule is a custom_rule op
# in the tape; grad uses its pullback, second order too; gradcheck checks each rule alone
# and names one that disagrees; export writes its body and import gives the op back.
# usage: rules.sh YTAPE   (run in tests/cli)
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace regions/rules.jl -f loss f64[3,4] f64[4,5] f64[3,5] -o "$dir/loss.json"
"$ytape" show "$dir/loss.json" | grep -c 'custom_rule(%.*name="xlogy.", rule="regions/rules.jl:10")'
"$ytape" grad "$dir/loss.json" -o "$dir/grad.json"
"$ytape" gradcheck "$dir/loss.json" --random | tail -3
"$ytape" gradcheck "$dir/grad.json" --random | tail -1
"$ytape" export "$dir/loss.json" -o "$dir/loss.onnx" 2>/dev/null
"$ytape" import "$dir/loss.onnx" -o "$dir/back.json"
echo "ops changed by the round trip: $("$ytape" diff "$dir/loss.json" "$dir/back.json" | grep -c '^[-+] %' || true)"
"$ytape" trace regions/rules.jl -f clipped f64[3,4] f64[4,5] -o "$dir/clipped.json"
if "$ytape" gradcheck "$dir/clipped.json" --random > "$dir/out.txt"; then
  echo "a clipping rule passed gradcheck" >&2
  exit 1
fi
grep -o 'the rule for clip (regions/rules.jl:20) disagrees' "$dir/out.txt"
