#!/usr/bin/env bash
# Runs a command and checks its exit code, and optionally its exact stdout and stderr.
# usage: expect.sh EXIT STDOUT STDERR STDIN -- COMMAND...
#   STDOUT, STDERR: a file holding the exact expected text, or - to skip the check
#   STDIN: a file to feed to the command, or - for none
set -u
want_exit=$1 want_out=$2 want_err=$3 stdin=$4
shift 5
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
if [ "$stdin" = - ]; then "$@" >"$out" 2>"$err" </dev/null; else "$@" >"$out" 2>"$err" <"$stdin"; fi
got_exit=$?
ok=1
if [ "$got_exit" != "$want_exit" ]; then
  echo "exit code: want $want_exit, got $got_exit"; ok=0
fi
if [ "$want_out" != - ] && ! diff -u "$want_out" "$out" >/dev/null; then
  echo "stdout differs:"; diff -u "$want_out" "$out" | head -40; ok=0
fi
if [ "$want_err" != - ] && ! diff -u "$want_err" "$err" >/dev/null; then
  echo "stderr differs:"; diff -u "$want_err" "$err" | head -40; ok=0
fi
if [ $ok = 0 ]; then
  echo "command: $*"
  echo "--- stderr:"; head -c 2000 "$err"
  # A script's own checks say what failed on stdout (its last lines).
  echo "--- stdout (the end):"; tail -c 2000 "$out"
  exit 1
fi
