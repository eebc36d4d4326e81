#!/usr/bin/env bash
# ytape run --profile-out writes a Chrome trace (runtime/trace_events.h; its schema is
# checked in tests/unit/runtime/trace_events_test.cc): here, that the file is written, holds
# a run and the tape's steps with their source lines, and --by line prints lines.
# usage: profile_out.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace files/f.jl -f f x w -o "$dir/f.json" --save-inputs "$dir/in.safetensors" || exit 1
"$ytape" run "$dir/f.json" --inputs "$dir/in.safetensors" --repeat 3 --profile-out "$dir/t.json" > /dev/null || exit 1
head -c 15 "$dir/t.json"; echo
grep -o '"name":"run [0-9]"' "$dir/t.json"
grep -o '"cat":"files/f.jl:4"' "$dir/t.json" | sort -u
"$ytape" run "$dir/f.json" --inputs "$dir/in.safetensors" --profile --by line | grep -o '^files/f.jl:4 '
"$ytape" run "$dir/f.json" --inputs "$dir/in.safetensors" --by line 2>&1
exit 0
