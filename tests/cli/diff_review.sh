#!/usr/bin/env bash
# ytape diff for review (docs/tools.md): Markdown reports of an activation swapped, a layer
# made wider, and one edit in a loop of three (one row, 3 changes); --stat --json; --fail-on
# thresholds, each that holds named, the exit code 1 only then.
# usage: diff_review.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace() {  # NAME SED-SCRIPT ENTRY ARGS...
  local name=$1 edit=$2
  shift 2
  sed "$edit" files/review.jl > "$dir/$name.jl"
  (cd "$dir" && "$ytape" trace "$name.jl" --loops unroll -f "$@" -o "$name.json") || exit 1
}
trace base '' f model x
trace tanh 's/^act = relu/act = tanh/' f model x
trace wide 's/^width = 8/width = 10/' f model x
trace loop '' g W x
trace loop_tanh 's/^act = relu/act = tanh/' g W x
cd "$dir"
for pair in "base tanh" "base wide" "loop loop_tanh"; do
  set -- $pair
  echo "== $1 -> $2"
  "$ytape" diff --format markdown "$1.json" "$2.json"
  echo "exit $?"
done
echo "== --fail-on (what holds, on stderr)"
"$ytape" diff --fail-on 'flops>50%,memory>50%' base.json wide.json 2>&1 >/dev/null; echo "exit $?"
"$ytape" diff --fail-on 'params,flops>5%' base.json wide.json 2>&1 >/dev/null; echo "exit $?"
"$ytape" diff --fail-on ops base.json base.json 2>&1 >/dev/null; echo "exit $?"
"$ytape" diff --fail-on parms base.json tanh.json 2>&1 >/dev/null; echo "exit $?"
"$ytape" diff --fail-on 'flops>5' base.json tanh.json 2>&1 >/dev/null; echo "exit $?"
exit 0
