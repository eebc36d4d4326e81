#!/usr/bin/env bash
# -o writes atomically: a failed command leaves an existing file untouched and creates no
# file (nor a temporary one) where there was none.
# usage: atomic.sh YTAPE SAMPLE_TAPE
set -eu
ytape=$1 sample=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "atomic.sh: $*"; exit 1; }

"$ytape" show --json "$sample" -o "$dir/out.json"
cmp -s "$dir/out.json" "$sample" || fail "show --json -o did not write the canonical tape"
touch "$dir/reference"
[ "$(stat -c %a "$dir/out.json")" = "$(stat -c %a "$dir/reference")" ] ||
  fail "the output file does not have the permissions of a new file"
rm "$dir/reference"

printf 'not a tape' > "$dir/bad.json"
if "$ytape" show "$dir/bad.json" -o "$dir/out.json" 2>/dev/null; then fail "a bad tape was accepted"; fi
cmp -s "$dir/out.json" "$sample" || fail "a failed command changed an existing output"
if "$ytape" show "$dir/bad.json" -o "$dir/new.json" 2>/dev/null; then fail "a bad tape was accepted"; fi
[ ! -e "$dir/new.json" ] || fail "a failed command created its output file"
[ "$(ls -A "$dir" | wc -l)" = 2 ] || fail "temporary files were left behind: $(ls -A "$dir")"
if "$ytape" show "$sample" -o "$dir/no/such/dir/x.txt" 2>/dev/null; then fail "writing into a missing directory succeeded"; fi
echo ok
