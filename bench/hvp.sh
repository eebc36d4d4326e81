#!/usr/bin/env bash
# Hessian-vector products of ResNet-18 (samples/resnet18.jl, batch 1) with respect to its
# parameters, two ways: reverse over reverse (`ytape grad` of the gradient tape, --vjp) and
# forward over reverse (`ytape jvp` of the gradient tape). Prints each tape's FLOPs and
# planned buffers, then the best of R interleaved runs of each (`ytape run --repeat 5`'s
# median) and their ratio, with the CPU.
# usage: bench/hvp.sh [YTAPE] [R]   (default: build/release/cli/ytape, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
ytape=${1:-build/release/cli/ytape}
rounds=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace samples/resnet18.jl -f loss model image -o "$dir/f.json" \
  --save-inputs "$dir/in.safetensors"
"$ytape" grad "$dir/f.json" --wrt model -o "$dir/g.json"
"$ytape" grad "$dir/g.json" --vjp --wrt model -o "$dir/ror.json"
"$ytape" jvp "$dir/g.json" --wrt model -o "$dir/for.json"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) threads"
for t in ror for; do
  flops=$("$ytape" stats "$dir/$t.json" | awk '$1 == "total" {print $4; exit}')
  buffers=$("$ytape" stats "$dir/$t.json" | awk '/intermediate buffers/ {print $(NF-1), $NF; exit}')
  echo "$t: $flops GFLOP, planned buffers $buffers"
done
best() { sort -g | head -1; }
declare -A times
for ((r = 0; r < rounds; ++r)); do
  for t in ror for; do
    ms=$("$ytape" run "$dir/$t.json" --inputs "$dir/in.safetensors" --random --repeat 5 2>&1 |
      sed -n 's/^time: median \([0-9.]*\) ms.*/\1/p')
    times[$t]+="$ms"$'\n'
  done
done
ror=$(printf '%s' "${times[ror]}" | best)
fwd=$(printf '%s' "${times[for]}" | best)
printf "reverse over reverse: %s ms; forward over reverse: %s ms (%.2fx)\n" "$ror" "$fwd" "$(echo "$fwd / $ror" | bc -l)"
