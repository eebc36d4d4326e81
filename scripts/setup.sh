#!/usr/bin/env bash
# Installs what ytape needs to build and test on Debian, if it is missing.
set -euo pipefail
packages=(build-essential cmake ninja-build libcli11-dev nlohmann-json3-dev libfmt-dev doctest-dev
          libopenblas-dev libdnnl-dev zlib1g-dev clang-format-14
          libonnx-dev libprotobuf-dev libonnx-testdata pkg-config
          libopenmpi-dev openmpi-bin python3  # distributed training and its test
          clang-14 libclang-rt-14-dev libomp-14-dev)  # the sanitized build and its fuzz targets
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
