#!/usr/bin/env bash
# Every docs/ file that a source, script or document names exists, and no document links
# outside the repository.
# usage: tests/scripts/check_doc_refs.sh SOURCE_DIR
set -euo pipefail
cd "$1"
bad=0
while IFS= read -r ref; do
  [ -e "$ref" ] || { echo "doc refs: '$ref' is named but does not exist:"; grep -rln --exclude-dir=build --exclude-dir=out -F "$ref" . | head -n 5; bad=1; }
done < <(grep -rhoE --exclude-dir=build --exclude-dir=out --exclude-dir=.git \
  --include='*.h' --include='*.cc' --include='*.def' --include='*.md' --include='*.sh' \
  --include='*.py' --include='*.jl' --include='*.txt' 'docs/[A-Za-z0-9_.-]+\.(md|json)' . | sort -u)
if grep -nE '\]\(\.\./|`\.\./[a-z]' README.md docs/*.md; then
  echo "doc refs: the lines above point outside the repository"
  bad=1
fi
[ "$bad" -eq 0 ] && echo "doc refs: every docs/ file named exists"
exit "$bad"
