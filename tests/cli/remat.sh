#!/usr/bin/env bash
# ytape remat through the command line (docs/remat.md): a budget as a share and in bytes,
# a policy; each result runs to the original's outputs byte for byte and plans within its
# budget; bad requests say what to give.
# usage: remat.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "$*" >&2; exit 1; }
"$ytape" trace remat/cnn.jl -f loss model 'f32[12,12,1,16]' 'f32[10,16]' -o "$dir/f.json" ||
  fail "trace failed"
"$ytape" grad "$dir/f.json" -o "$dir/g.json" || fail "grad failed"
buffers() { "$ytape" stats "$1" | awk '/intermediate buffers/ {gsub(",", "", $5); print $5}'; }
before=$(buffers "$dir/g.json")
"$ytape" run "$dir/g.json" --random -o "$dir/want.safetensors" >/dev/null
# Each result is valid, plans within its budget and gives the original's outputs, byte for
# byte; silent unless not. A budget in bytes with a policy may be out of reach on another
# machine's plan (its kernels' work memory): that is said, and not a failure.
check() {  # REQUEST... ; LIMIT (bytes) in $limit, 0 for none
  if ! "$ytape" remat "$dir/g.json" "$@" -o "$dir/r.json" 2>"$dir/err"; then
    grep -q "below the least peak found" "$dir/err" || fail "$*: $(cat "$dir/err")"
    return
  fi
  "$ytape" check "$dir/r.json" >/dev/null || fail "$*: invalid tape"
  "$ytape" run "$dir/r.json" --random -o "$dir/got.safetensors" >/dev/null
  cmp -s "$dir/want.safetensors" "$dir/got.safetensors" || fail "$*: outputs differ"
  local after
  after=$(buffers "$dir/r.json")
  [ "$limit" = 0 ] || [ "$after" -le "$limit" ] || fail "$*: $after bytes, over $limit"
}
limit=$((before * 7 / 10)) check --budget 70%
limit=$((before * 8 / 10)) check --budget $((before * 8 / 10))
limit=629145 check --budget 0.6MiB --policy dots
limit=0 check --policy dots
limit=0 check --policy conv2d,matmul
"$ytape" remat "$dir/g.json" --budget 70% --stats -o "$dir/r.json" 2>&1 |
  grep -c '^peak (runtime plan buffers): .* MiB -> .* MiB'
# Bad requests: one line each, naming what to give.
"$ytape" remat "$dir/g.json" 2>&1 | sed 's/^/no budget: /'
"$ytape" remat "$dir/g.json" --budget 50 percent 2>&1 | head -1 | sed 's/^/two words: /'
"$ytape" remat "$dir/g.json" --budget 5XB 2>&1 | sed 's/^/unit: /'
"$ytape" remat "$dir/g.json" --budget 1B 2>&1 | sed -E 's/[0-9.]+ MiB/N MiB/g; s/[0-9]+%/N%/' | sed 's/^/tiny: /'
"$ytape" remat "$dir/g.json" --policy dot 2>&1 | sed 's/^/policy: /'
"$ytape" remat "$dir/g.json" --budget 50% --forward los 2>&1 | sed 's/^/forward: /'
"$ytape" remat "$dir/f.json" --budget 50% 2>&1 | sed 's/^/forward tape: /'
exit 0
