#!/usr/bin/env bash
# Fails when a source file includes a header of a layer above its own. The layers, lowest
# first, are the ones docs/architecture.md draws; a file may include its own layer and
# those below it. Run from anywhere: scripts/check_layers.sh [ROOT].
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# The layer of a path, as a rank: the longest matching folder wins.
rank() {
  case "$1" in
    tape/*) echo 10 ;;
    io/*) echo 20 ;;
    inspect/*) echo 30 ;;
    runtime/*) echo 40 ;;
    train/*) echo 45 ;;
    opt/*) echo 50 ;;
    onnx/*) echo 55 ;;
    grad/*) echo 60 ;;
    check/*) echo 70 ;;
    tracer/lang/*) echo 80 ;;
    tracer/interp/*) echo 81 ;;
    tracer/builtins/*) echo 82 ;;
    tracer/*) echo 83 ;;
    cli/*) echo 90 ;;
    *) echo 0 ;;
  esac
}

bad=0
checked=0
while IFS= read -r file; do
  own=$(rank "$file")
  [ "$own" -eq 0 ] && continue
  checked=$((checked + 1))
  while IFS= read -r header; do
    theirs=$(rank "$header")
    if [ "$theirs" -gt "$own" ]; then
      echo "layers: $file includes $header, a layer above its own (docs/architecture.md)"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find tape io inspect runtime train opt onnx grad check tracer cli -name '*.h' -o -name '*.cc' | sort)

if [ "$checked" -lt 100 ]; then
  echo "layers: only $checked files found under $root; is this the source tree?"
  exit 1
fi
[ "$bad" -eq 0 ] && echo "layers: $checked files include only their own layer or those below"
exit "$bad"
