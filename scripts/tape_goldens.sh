#!/usr/bin/env bash
# CI dogfooding: regenerates the tapes of every sample (trace -> grad -> opt) and compares
# each with its committed golden in samples/golden/ with `ytape diff`, which aligns ops by
# what they compute: a failure lists just the ops that changed.
# usage: scripts/tape_goldens.sh [--update] [YTAPE]   (default build/release/cli/ytape)
set -euo pipefail
cd "$(dirname "$0")/.."
update=0
if [[ ${1:-} == --update ]]; then update=1; shift; fi
ytape=$(realpath "${1:-build/release/cli/ytape}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p samples/golden
status=0
# name | program | entry and its arguments | options of grad
while IFS='|' read -r name program call grad_options; do
  # shellcheck disable=SC2086  # the arguments are words
  "$ytape" trace "$program" -f $call -o "$dir/$name.trace.json" 2>/dev/null
  # shellcheck disable=SC2086
  "$ytape" grad "$dir/$name.trace.json" $grad_options -o "$dir/$name.grad.json"
  "$ytape" opt "$dir/$name.grad.json" -o "$dir/$name.opt.json"
  for stage in trace grad opt; do
    golden=samples/golden/$name.$stage.json
    if ((update)); then
      cp "$dir/$name.$stage.json" "$golden"
    elif ! "$ytape" diff "$golden" "$dir/$name.$stage.json" >"$dir/diff.txt"; then
      echo "$golden differs from what the sample gives now:"
      cat "$dir/diff.txt"
      status=1
    fi
  done
done <<'SAMPLES'
basics|samples/basics.jl|main x|--vjp
mlp|samples/mlp.jl|loss model x labels|
resnet18|samples/resnet18.jl|loss model image|--wrt model
gpt|samples/gpt.jl|next_character_loss model tokens|--wrt model
SAMPLES
if ((status)); then
  echo "if the change is intended: scripts/tape_goldens.sh --update, and commit samples/golden/"
fi
exit $status
