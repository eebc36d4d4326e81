#!/usr/bin/env bash
# `ytape opt --stats`: op counts before and after each pass run on stderr, with times
# (replaced by "T" here, since they vary), the tape on stdout as without it.
# usage: opt_stats.sh YTAPE TAPE [OPTION...]
set -eo pipefail
ytape=$1
shift
"$ytape" opt "$@" --stats 2>&1 >/dev/null | sed -E 's/[0-9]+\.[0-9]+ ms/T ms/'
