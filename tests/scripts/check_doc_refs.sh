#!/usr/bin/env bash
# Every docs/ file that a source, script or document names exists, no document links
# outside the repository, and docs/primitives.md describes every primitive of tape/ops.def.
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
# A primitive is described in a table's first cell (`neg abs sign`, `softmax`, `log_softmax`),
# by its signature (`conv2d(x, w; ...)`) or by a paragraph that starts with its name.
first_cells=$(sed -n 's/^| \([^|]*\) |.*/\1/p' docs/primitives.md)
while IFS= read -r prim; do
  if ! grep -qE "\`([a-z0-9_]+ )*$prim( [a-z0-9_]+)*\`" <<<"$first_cells" &&
    ! grep -qF "\`$prim(" docs/primitives.md && ! grep -qE "^\`$prim\`" docs/primitives.md; then
    echo "doc refs: docs/primitives.md does not describe the primitive $prim (tape/ops.def)"
    bad=1
  fi
done < <(sed -n 's/^X\(_UNARY\|_REGION\)\?(\([a-z0-9_]*\),.*/\2/p' tape/ops.def)
[ "$bad" -eq 0 ] && echo "doc refs: every docs/ file named exists; every primitive is described"
exit "$bad"
