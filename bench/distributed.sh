#!/usr/bin/env bash
# Data-parallel scaling on this machine (docs/distributed.md): trains the same steps with
# one process at 1 thread and with `mpirun -np 2` ranks at 1 thread each, and prints the
# samples per second of each, their ratio and rank 0's communication, for ResNet-18 at a
# batch of 8 (bench/resnet18_train.jl) and the digits CNN at 32 (samples/digits.jl).
# usage: bench/distributed.sh [EPOCHS] [YTAPE]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-6} ytape=${2:-build/release/cli/ytape}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root -np 2)
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
"$ytape" trace bench/resnet18_train.jl --allow-read samples -f train_step model opt_state x y \
  -o "$dir/r18.json" --save-inputs "$dir/r18.init.safetensors"
"$ytape" trace bench/resnet18_train.jl --allow-read samples -f batch x y -o "$dir/batch.json" \
  --save-inputs "$dir/r18.data.safetensors"
"$ytape" trace samples/digits.jl -f train_step cnn opt_cnn step x y -o "$dir/cnn.json" \
  --save-inputs "$dir/cnn.init.safetensors"
# The last epoch line's samples per second.
rate() { sed -n 's/^epoch .* \([0-9.]*\) samples\/s.*/\1/p' | tail -n 1; }
for model in r18 cnn; do
  data=$dir/r18.data.safetensors
  [ $model = cnn ] && data=samples/data/digits_train.safetensors
  args=("$dir/$model.json" --init "$dir/$model.init.safetensors" --data "$data" --epochs "$epochs"
        --threads 1 --no-shuffle)
  one=$("$ytape" train "${args[@]}" --fixed-threads | rate)
  log=$("${mpi[@]}" "$ytape" train "${args[@]}")
  two=$(rate <<<"$log")
  echo "$model: 1 rank x 1 thread $one samples/s, 2 ranks x 1 thread $two samples/s:" \
    "$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2fx", b / a }')"
  grep '^communication' <<<"$log"
done
