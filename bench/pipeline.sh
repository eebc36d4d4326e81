#!/usr/bin/env bash
# The user's pipeline on the bundled ResNet-18, the four processes a user runs in turn:
#   ytape trace samples/resnet18.jl -f loss model image -o r.json --save-inputs r.safetensors
#   ytape grad r.json -o g.json;  ytape opt g.json -o o.json;  ytape check o.json
# Runs the four R times, each into a fresh folder, and prints each process's wall-clock
# time (minimum and median over the runs), then the total of the minimums and of the
# medians, with the CPU.
# usage: bench/pipeline.sh [YTAPE] [R]   (default: build/release/cli/ytape, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
ytape=${1:-build/release/cli/ytape}
rounds=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
steps=(trace grad opt check)

now_ns() { date +%s%N; }

# Runs one step of the pipeline in folder $1.
step() {
  local d=$1
  case $2 in
    trace) "$ytape" trace samples/resnet18.jl -f loss model image -o "$d/r.json" \
             --save-inputs "$d/r.safetensors" ;;
    grad) "$ytape" grad "$d/r.json" -o "$d/g.json" ;;
    opt) "$ytape" opt "$d/g.json" -o "$d/o.json" ;;
    check) "$ytape" check "$d/o.json" >/dev/null ;;
  esac
}

declare -A times
for ((r = 0; r < rounds; ++r)); do
  d="$dir/$r"
  mkdir "$d"
  for s in "${steps[@]}"; do
    t0=$(now_ns)
    step "$d" "$s"
    t1=$(now_ns)
    times[$s]+="$(( (t1 - t0) / 1000 ))"$'\n'
  done
  rm -rf "$d"
done

# The k-th smallest (1-based) of the microsecond figures in $1, in ms.
nth() { printf '%s' "$1" | sort -n | sed -n "$2p" | awk '{printf "%.1f", $1 / 1000}'; }

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) threads"
mid=$(( (rounds + 1) / 2 ))
total_min=0
total_med=0
for s in "${steps[@]}"; do
  lo=$(nth "${times[$s]}" 1)
  med=$(nth "${times[$s]}" "$mid")
  printf "%-6s min %7.1f ms  median %7.1f ms\n" "$s" "$lo" "$med"
  total_min=$(echo "$total_min + $lo" | bc -l)
  total_med=$(echo "$total_med + $med" | bc -l)
done
printf "%-6s min %7.1f ms  median %7.1f ms  (%d runs)\n" total "$total_min" "$total_med" "$rounds"
