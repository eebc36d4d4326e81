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

# A tape of several 1 MB pieces, which a thread of its own writes to the file while the
# next are made, has the bytes written to standard output.
cat >"$dir/chain.jl" <<'EOF'
function g(x, steps)
  y = x
  for k in 1:steps
    y = cos(y) + 0.5f0 * y
  end
  y
end
EOF
"$ytape" trace "$dir/chain.jl" -f g 'f32[]' 25000 --loops unroll --max-ops 200000 -o "$dir/big.json"
[ "$(stat -c %s "$dir/big.json")" -gt 4000000 ] || fail "the chain's tape is not several pieces"
"$ytape" show --json "$dir/big.json" -o "$dir/big_file.json"
"$ytape" show --json "$dir/big.json" >"$dir/big_stdout.json"
cmp -s "$dir/big.json" "$dir/big_file.json" || fail "a tape written in pieces to a file differs"
cmp -s "$dir/big.json" "$dir/big_stdout.json" || fail "a tape written in pieces to stdout differs"
echo ok
