#!/usr/bin/env bash
# The committed sample tapes are exactly what the sample builders produce now.
# usage: samples_golden.sh MAKE_TAPES SAMPLES_DIR
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$1" "$dir"
status=0
for f in "$dir"/*.json; do
  if ! cmp -s "$f" "$2/$(basename "$f")"; then
    echo "samples/tapes/$(basename "$f") is out of date; regenerate with: make_tapes samples/tapes"
    diff "$2/$(basename "$f")" "$f" | head -20
    status=1
  fi
done
exit $status
