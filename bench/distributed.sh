#!/usr/bin/env bash
# Data-parallel scaling on this machine (docs/distributed.md), for ResNet-18 at a global
# batch of 8 (bench/resnet18_train.jl) and the digits CNN at 32 (samples/digits.jl). Three
# ways of training the same number of samples, interleaved ROUNDS times, the best of each:
#   one:   one process at 1 thread, the global batch;
#   bound: two processes at once, each at 1 thread on its own core, each half the batch,
#          with no communication: what data parallelism could reach on this machine;
#   two:   `mpirun -np 2` ranks at 1 thread each, the global batch split.
# Prints the samples per second of each, two/one (the speedup), bound/one and two/bound,
# and rank 0's communication.
# usage: bench/distributed.sh [ROUNDS] [YTAPE]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} ytape=${2:-build/release/cli/ytape}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root -np 2)
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"

# The programs at the global batch and at half of it (the batch is fixed by the example
# arguments' shapes); includes made absolute, since the copies live in $dir.
r18() {  # r18 BATCH NAME
  sed "s|include(\"../samples/|include(\"$PWD/samples/|; s/224, 3, 8)/224, 3, $1)/; \
       s/1:1000, 8)/1:1000, $1)/" bench/resnet18_train.jl >"$dir/$2.jl"
}
r18 8 r18 && r18 4 r18_half && r18 48 r18_data
sed 's/, 32)$/, 16)/' samples/digits.jl >"$dir/cnn_half.jl" && cp samples/digits.jl "$dir/cnn.jl"
trace() { "$ytape" trace "$dir/$1.jl" --allow-read "$PWD/samples" -f "${@:2}"; }
for m in r18 r18_half; do
  trace $m train_step model opt_state x y -o "$dir/$m.json" --save-inputs "$dir/$m.init.safetensors"
done
trace r18_data batch x y -o "$dir/batch.json" --save-inputs "$dir/r18.data.safetensors"
for m in cnn cnn_half; do
  trace $m train_step cnn opt_cnn step x y -o "$dir/$m.json" --save-inputs "$dir/$m.init.safetensors"
done

# The best epoch's samples per second, leaving out the first (which builds the kernels).
rate() { sed -n 's/^epoch .* \([0-9.]*\) samples\/s.*/\1/p' | tail -n +2 | sort -g | tail -n 1; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
for model in r18 cnn; do
  data=$dir/r18.data.safetensors epochs=3
  [ $model = cnn ] && data=samples/data/digits_train.safetensors epochs=10
  common=(--data "$data" --epochs "$epochs" --threads 1 --no-shuffle)
  train() { "$ytape" train "$dir/$1.json" --init "$dir/$1.init.safetensors" "${@:2}" "${common[@]}"; }
  one=0 bound=0 two=0
  for _ in $(seq "$rounds"); do
    one=$(max "$one" "$(train $model --fixed-threads | rate)")
    taskset -c 0 "$ytape" train "$dir/${model}_half.json" --init "$dir/${model}_half.init.safetensors" \
      --fixed-threads "${common[@]}" | rate >"$dir/core0" &
    taskset -c 1 "$ytape" train "$dir/${model}_half.json" --init "$dir/${model}_half.init.safetensors" \
      --fixed-threads "${common[@]}" | rate >"$dir/core1"
    wait
    bound=$(max "$bound" "$(awk '{ s += $1 } END { print s }' "$dir/core0" "$dir/core1")")
    log=$("${mpi[@]}" "$ytape" train "$dir/$model.json" --init "$dir/$model.init.safetensors" \
      "${common[@]}")
    rate_two=$(rate <<<"$log")
    if awk -v a="$rate_two" -v b="$two" 'BEGIN { exit !(a > b) }'; then
      two=$rate_two comm=$(grep '^communication' <<<"$log")
    fi
  done
  echo "$model: one $one, bound $bound, two $two samples/s: speedup $(ratio "$two" "$one")," \
    "bound $(ratio "$bound" "$one"), two/bound $(ratio "$two" "$bound")"
  echo "  $comm"
done
