#!/usr/bin/env bash
# Installs a build of ytape into a fresh prefix, then builds and runs the project beside
# this script against it with find_package(ytape), and checks that `pkg-config ytape`
# resolves there and links the same program. The ctest test install.find_package.
# usage: tests/install/check.sh BUILD_DIR [CXX_COMPILER]
set -euo pipefail
build=$(cd "$1" && pwd)
cxx=${2:-c++}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ytape-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build"  # ninja reports errors on stdout
"$work/build/consumer"

pc=$(find "$prefix" -name ytape.pc)
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs ytape)
read -ra flags <<<"$flags"
"$cxx" -std=c++20 -O1 "$here/main.cc" -o "$work/consumer_pc" "${flags[@]}"
"$work/consumer_pc" >/dev/null
echo "install: find_package(ytape) and pkg-config ytape work from a fresh prefix"
