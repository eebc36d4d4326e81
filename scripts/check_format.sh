#!/usr/bin/env bash
# Fails when a C++ source differs from what clang-format (Debian's clang-format-14, with
# the repository's .clang-format) makes of it, naming each such file. `--fix` rewrites them.
# usage: scripts/check_format.sh [--fix] [ROOT]
set -euo pipefail
fix=0
if [ "${1:-}" = --fix ]; then
  fix=1
  shift
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
tool=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$tool" ]; then
  echo "format: clang-format-14 is not installed (scripts/setup.sh installs it)"
  exit 1
fi
bad=0
count=0
while IFS= read -r file; do
  count=$((count + 1))
  if [ "$fix" = 1 ]; then
    "$tool" -i "$file"
  elif ! "$tool" --dry-run -Werror "$file" >/dev/null 2>&1; then
    echo "format: $file is not formatted; run scripts/check_format.sh --fix"
    bad=1
  fi
done < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
[ "$bad" = 0 ] && echo "format: $count files as clang-format writes them"
exit "$bad"
