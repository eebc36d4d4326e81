#!/usr/bin/env bash
# Imports one model of tests/onnx/make_models.cc, which must fail with exit code 2, no
# standard output and exactly the message in onnx/NAME.err. With UPDATE=1 the message is
# written to NAME.err instead: review the diff.
# usage: check.sh YTAPE ONNX_MAKE_MODELS NAME   (run in tests/errors)
set -u
ytape=$1 make_models=$2 name=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
want=$PWD/onnx/$name.err
"$make_models" "$dir" || exit 1
(cd "$dir" && "$ytape" import "$name.onnx" -o tape.json >out 2>err)
status=$?
if [ "${UPDATE:-}" = 1 ]; then
  cp "$dir/err" "$want"
  exit 0
fi
ok=1
[ "$status" = 2 ] || { echo "exit code: want 2, got $status"; ok=0; }
[ -s "$dir/out" ] && { echo "standard output should be empty"; ok=0; }
[ -e "$dir/tape.json" ] && { echo "a failed import wrote its tape"; ok=0; }
diff -u "$want" "$dir/err" || ok=0
[ $ok = 1 ]
