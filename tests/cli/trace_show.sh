#!/usr/bin/env bash
# Traces a program and prints the tape in text form (for golden tests of the samples).
# usage: trace_show.sh YTAPE PROGRAM ENTRY [ARG...]
set -eo pipefail
ytape=$1 program=$2 entry=$3
shift 3
"$ytape" trace "$program" -f "$entry" "$@" | "$ytape" show -
