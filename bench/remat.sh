#!/usr/bin/env bash
# ytape remat on ResNet-18's batch-8 training step against PyTorch's checkpoint_sequential
# at the same memory (bench/compare_torch_remat.py says how each side is measured).
# usage: bench/remat.sh [--budget 50%] [--batch 8] [--threads 2] [--repeat 5]
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build/release ytape bench_peak >/dev/null
exec /usr/bin/python3 bench/compare_torch_remat.py "$@"
