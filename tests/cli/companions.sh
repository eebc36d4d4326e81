#!/usr/bin/env bash
# ytape's companions (cli/CMakeLists.txt): `import` and `export` run in ytape-onnx beside
# ytape, and a distributed run opens libytape_mpi.so under ../<libdir>/ytape/. A ytape
# copied without them names what is missing, exit 2, for those commands alone; ytape-onnx
# takes every command ytape takes.
# usage: companions.sh YTAPE
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "companions: $*"; exit 1; }
cp "$ytape" "$dir/ytape"

"$dir/ytape" import model.onnx -o "$dir/m.json" 2>"$dir/err"
status=$?
[ $status = 2 ] || fail "import without ytape-onnx exited $status"
grep -q "^ytape: error: import needs ytape-onnx, beside ytape, which cannot be run: '$dir/ytape-onnx'" \
  "$dir/err" || fail "import without ytape-onnx said: $(cat "$dir/err")"
[ ! -e "$dir/m.json" ] || fail "a file was written"

printf 'f(x) = sum(x .* x)\n' >"$dir/square.jl"
printf '{"x": [1, 2, 3]}\n' >"$dir/x.json"
"$dir/ytape" trace "$dir/square.jl" -f f 'f32[3]' -o "$dir/square.json" || fail "trace failed"
"$dir/ytape" run "$dir/square.json" --inputs "$dir/x.json" --distributed mpi 2>"$dir/err"
status=$?
[ $status = 2 ] || fail "a distributed run without the MPI module exited $status"
grep -q "^ytape: error: cannot load the MPI module of ytape" "$dir/err" ||
  fail "a distributed run without the MPI module said: $(cat "$dir/err")"

# The commands of ytape-onnx: ytape's, import and export among them.
onnx=$(dirname "$ytape")/ytape-onnx
for c in show check trace import export grad opt run train diff; do
  "$onnx" "$c" --help >/dev/null || fail "ytape-onnx $c --help failed"
done
out=$("$ytape" run "$dir/square.json" --inputs "$dir/x.json") || fail "run failed"
[[ $out == *14.0* ]] || fail "run printed $out"
echo ok
