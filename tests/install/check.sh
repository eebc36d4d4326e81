#!/usr/bin/env bash
# Installs a build of ytape into a fresh prefix, then builds and runs the project beside
# this script against it with find_package(ytape), and checks that `pkg-config ytape`
# resolves there and links the same program; and that the installed ytape finds its MPI
# module (cli/mpi_module.h) in the prefix. The ctest test install.find_package.
# usage: tests/install/check.sh BUILD_DIR [CXX_COMPILER]
set -euo pipefail
build=$(cd "$1" && pwd)
cxx=${2:-c++}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ytape-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
# A run made distributed without mpirun is a world of one rank, through the module.
printf 'f(x) = sum(x .* x)\n' >"$work/square.jl"
printf '{"x": [1, 2, 3]}\n' >"$work/x.json"
"$prefix/bin/ytape" trace "$work/square.jl" -f f 'f32[3]' -o "$work/square.json"
out=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  "$prefix/bin/ytape" run "$work/square.json" --inputs "$work/x.json" --distributed mpi)
[[ $out == *14.0* ]] || { echo "install: the installed ytape's distributed run printed: $out"; exit 1; }
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
echo "install: find_package(ytape) and pkg-config ytape work from a fresh prefix; MPI loads"
