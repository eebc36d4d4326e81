#!/usr/bin/env bash
# run --profile: a row per primitive and a total, then the costly ops with their location;
# the same table with --repeat (whose first run, building oneDNN's kernels, is left out).
# Unfused, so that each op is a row (fused, add and gt are one elementwise step).
set -eu
ytape=$1
for repeat in 1 3; do
  out=$("$ytape" run run/add.json --inputs run/inputs.json --repeat $repeat --profile --fusion off)
  for want in "primitive  *calls  *ms/run  *share" "^add  *1 " "^gt  *1 " "^sum  *1 " \
    "top 3 ops:" "model.jl:2  *%3 = add(%1, %2)"; do
    grep -q "$want" <<<"$out" || { echo "no '$want' in:"; echo "$out"; exit 1; }
  done
  calls=$(awk '$1 == "total" && $2 ~ /^[0-9]+$/ { print $2 }' <<<"$out")
  [ "$calls" = 3 ] || { echo "total calls '$calls', want 3:"; echo "$out"; exit 1; }
done
echo ok
