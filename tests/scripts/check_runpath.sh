#!/usr/bin/env bash
# No executable or shared library of a build tree makes the loader search a folder that
# depends on where it runs: an RPATH or RUNPATH entry that is empty, "." or relative (but
# $ORIGIN) would load a library planted in the working directory.
# usage: check_runpath.sh BUILD_DIR
set -euo pipefail
build=$1
checked=0
bad=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q $'\x7fELF' || continue
  checked=$((checked + 1))
  paths=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p')
  [[ -z $paths ]] && continue
  IFS=: read -r -a entries <<< "$paths:"
  for e in "${entries[@]}"; do
    if [[ -z $e || ( $e != /* && $e != '$ORIGIN'* ) ]]; then
      echo "check_runpath: $f: search path '$paths' has entry '${e:-<empty>}'"
      bad=1
    fi
  done
done < <(find "$build" -type f \( -perm -u+x -o -name '*.so*' \) -not -path '*/CMakeFiles/*' -print0)
[[ $bad == 0 ]] || exit 1
echo "runpath: $checked binaries search no folder relative to where they run"
