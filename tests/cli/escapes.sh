#!/usr/bin/env bash
# A tape whose name, input and output names and source file hold terminal escapes (ESC [,
# OSC, C1 CSI, carriage return): no text output of show, check, run, plan, stats, dot, diff,
# nor an error message, passes a control character to the terminal.
set -u
ytape=$1
tape=hostile/escapes.json
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "escapes: $*"; exit 1; }
clean() {
  "$ytape" "$@" >"$out" 2>&1
  # Every byte but newline that a terminal may act on: C0, DEL and, as bytes, C1.
  if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f-\x9f]' "$out"; then
    fail "'$*' printed control characters: $(od -c "$out" | head -5)"
  fi
  [ -s "$out" ] || fail "'$*' printed nothing"
}
clean show "$tape"
clean check "$tape"
clean run "$tape" --random
clean run "$tape"  # the error names the missing input
clean plan "$tape"
clean stats "$tape"
clean dot "$tape"
clean diff "$tape" run/add.json
clean grad "$tape" --wrt nope
grep -qF 'tape f\x1b]0;owned\x07' <("$ytape" show "$tape") || fail "show: $("$ytape" show "$tape")"
grep -qF "ytape: error: missing input 'x\x1b[2J' (f32[3])" <("$ytape" run "$tape" 2>&1) ||
  fail "run: $("$ytape" run "$tape" 2>&1)"
echo ok
