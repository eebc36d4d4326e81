#!/usr/bin/env bash
# Checks FluxML's model-zoo scripts as published (docs/language.md, "FluxML's model
# zoo"): each source file, with only the lines tests/published/NAME.edits lists replaced
# (data loading, files written), is included by its driver tests/published/model_zoo_NAME.jl,
# which runs the script and names a loss that tests/programs/check.sh traces,
# differentiates, runs and gradient-checks. The project does not ship others' code, so the
# sources come from the caller: SOURCES is a folder holding vae_mnist.jl, mlp_mnist.jl,
# conv_mnist.jl and convmixer.jl, saved from FluxML/model-zoo at the commits the docs name.
# Run by hand; not in CI (no sources there).
# usage: scripts/check_published.sh SOURCES [YTAPE]   (YTAPE: build/release/cli/ytape)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/check_published.sh SOURCES [YTAPE]: SOURCES must be a folder" >&2
  exit 2
fi
sources=$(cd "$1" && pwd)
ytape=$(realpath "${2:-$root/build/release/cli/ytape}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/programs/model_zoo"
status=0
for edits in "$root"/tests/published/*.edits; do
  name=$(basename "$edits" .edits)
  if [ ! -f "$sources/$name.jl" ]; then
    echo "$name: $sources/$name.jl is missing"
    status=1
    continue
  fi
  # Each listed line must read as published (indentation aside); it is replaced, its
  # indentation kept.
  if ! awk -F'\t' -v src="$name.jl" '
      NR == FNR { if ($0 !~ /^#/ && NF == 3) { was[$1] = $2; now[$1] = $3 } next }
      FNR in was {
        match($0, /^[ \t]*/)
        if (substr($0, RLENGTH + 1) != was[FNR]) {
          printf "%s:%d: expected \"%s\"; is this the published version?\n", src, FNR, was[FNR] > "/dev/stderr"
          bad = 1
        }
        print substr($0, 1, RLENGTH) now[FNR]
        next
      }
      { print }
      END { exit bad }' "$edits" "$sources/$name.jl" >"$work/programs/model_zoo/$name.jl"; then
    status=1
    continue
  fi
  cp "$root/tests/published/model_zoo_$name.jl" "$work/programs/"
  printf '%s: ' "$name"
  (cd "$work" && bash "$root/tests/programs/check.sh" "$ytape" "model_zoo_$name") || status=1
done
exit $status
