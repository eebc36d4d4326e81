#!/usr/bin/env bash
# Configures and builds ytape. usage: scripts/build.sh [release|asan] (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
  release) flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DYTAPE_SANITIZE=ON -DYTAPE_BENCH=OFF) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
cmake -S . -B "build/$kind" -G Ninja "${flags[@]}" >/dev/null
ninja -C "build/$kind" -j "$(nproc)"
