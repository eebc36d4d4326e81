#!/usr/bin/env bash
# `ytape opt` is idempotent and deterministic: optimizing its output again, or the same
# tape twice, gives the same bytes.
# usage: opt_idempotent.sh YTAPE TAPE
set -eo pipefail
ytape=$1 tape=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" opt "$tape" -o "$dir/once.json"
"$ytape" opt "$dir/once.json" -o "$dir/twice.json"
"$ytape" opt "$tape" -o "$dir/again.json"
cmp "$dir/once.json" "$dir/twice.json"
cmp "$dir/once.json" "$dir/again.json"
