#!/usr/bin/env bash
# The layer check itself: it passes on a copy of the tree and fails, naming the fault, on
# each kind of upward dependency planted into the copy.
# usage: tests/scripts/check_layers_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fresh() {
  rm -rf "$tmp/tree" && mkdir -p "$tmp/tree/docs"
  (cd "$src" && cp -r tape io inspect runtime train opt onnx grad check tracer cli CMakeLists.txt "$tmp/tree/")
  cp "$src/docs/architecture.md" "$tmp/tree/docs/"
}
# expect_failure WHAT MESSAGE: the check fails and its output contains MESSAGE.
expect_failure() {
  if out=$("$src/scripts/check_layers.sh" "$tmp/tree" 2>&1); then
    echo "FAIL: the check passed with $1 planted"
    exit 1
  fi
  if [[ $out != *"$2"* ]]; then
    echo "FAIL: with $1 planted, the check said: $out"
    exit 1
  fi
  echo "ok: $1 found"
}

fresh
"$src/scripts/check_layers.sh" "$tmp/tree" >/dev/null || { echo "FAIL: the copy does not pass"; exit 1; }

echo '#include "runtime/executor.h"' >>"$tmp/tree/tape/strings.h"
expect_failure "an upward include" "tape/strings.h includes runtime/executor.h, a layer above"

fresh
printf 'namespace ytape {\nvoid planted_upward(int x);\n}\n' >>"$tmp/tree/tape/strings.h"
printf 'namespace ytape {\nvoid planted_upward(int x) {\n  (void)x;\n}\n}\n' >>"$tmp/tree/runtime/tensor.cc"
expect_failure "an upward call through a declaration" \
  "tape/strings.h declares planted_upward(), which only runtime/, a layer above, defines"

fresh
sed -i 's/^add_subdirectory(io)$/add_subdirectory(tmp_io)/; s/^add_subdirectory(runtime)$/add_subdirectory(io)/; s/^add_subdirectory(tmp_io)$/add_subdirectory(runtime)/' "$tmp/tree/CMakeLists.txt"
expect_failure "CMake's order swapped" "CMakeLists.txt adds the layers as"

fresh
sed -i 's/^  opt\/ /  optx\/ /' "$tmp/tree/docs/architecture.md"
expect_failure "the picture's order changed" "docs/architecture.md draws the layers as"
