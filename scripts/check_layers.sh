#!/usr/bin/env bash
# Fails when a layer looks up: a source file including a header of a layer above its own,
# or a header declaring a free function that only a layer above defines (a call upward
# that no include shows). The layer order is written here alone; the top-level CMake
# file's add_subdirectory order and the picture in docs/architecture.md are checked
# against it. Run from anywhere: scripts/check_layers.sh [ROOT].
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# The layers, lowest first; a file may use its own layer and those below it.
layers=(tape io inspect runtime train opt onnx grad check
        tracer/lang tracer/interp tracer/builtins tracer cli)

# Sets `rank` to the layer of path $1, as its index in `layers` plus one (0: no layer); the
# longest matching folder wins. Cached by folder.
declare -A rank_of_folder
layer_rank() {
  local folder=${1%/*}
  if [[ -z ${rank_of_folder[$folder]:-} ]]; then
    local best=0 best_length=0 i
    for i in "${!layers[@]}"; do
      local l=${layers[$i]}
      if [[ $1 == "$l"/* ]] && ((${#l} > best_length)); then best=$((i + 1)) best_length=${#l}; fi
    done
    rank_of_folder[$folder]=$best
  fi
  rank=${rank_of_folder[$folder]}
}

bad=0
fail() {
  echo "layers: $*"
  bad=1
}

mapfile -t files < <(find "${layers[@]%%/*}" \( -name '*.h' -o -name '*.cc' \) | sort -u)
if ((${#files[@]} < 100)); then
  echo "layers: only ${#files[@]} files found under $root; is this the source tree?"
  exit 1
fi
declare -A rank_of
for f in "${files[@]}"; do
  layer_rank "$f"
  rank_of[$f]=$rank
done

# 1. Includes.
for f in "${files[@]}"; do
  while IFS= read -r header; do
    layer_rank "$header"
    ((rank > rank_of[$f])) &&
      fail "$f includes $header, a layer above its own (docs/architecture.md)"
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# 2. Declarations: a free function declared at namespace level (a statement starting in
# column 0 and ending in ';') in a header must be defined (a statement starting in column 0
# and ending in '{') in a source of its own layer or one below. Prints "def|decl FILE NAME".
statements() {
  awk '
    function flush(   head, n) {
      head = text
      sub(/\(.*/, "", head)
      n = split(head, words, /[^A-Za-z0-9_]+/)
      if (index(text, "(") && words[n] != "" && head !~ /operator/ && !anonymous) {
        if (text ~ /\{[ \t]*(\/\/.*)?$/) print "def", FILENAME, space "::" words[n]
        else if (text ~ /;[ \t]*(\/\/.*)?$/) print "decl", FILENAME, space "::" words[n]
      }
      text = ""
    }
    FNR == 1 { text = ""; space = ""; anonymous = 0; depth = 0 }
    # The namespace a statement is in (file-local ones are skipped): clang-format closes
    # each with "}  // namespace".
    /^namespace [A-Za-z_:]+ \{/ { stack[++depth] = space; space = space "::" $2; next }
    /^namespace \{/ { stack[++depth] = space; anonymous++; next }
    /^\}  \/\/ namespace/ { if (depth > 0) { if ($4 == "") anonymous--; space = stack[depth--] } next }
    /^[A-Za-z]/ && text == "" && !/^(namespace|using|struct|class|enum|template|static|#|extern|constexpr|typedef|union|inline|friend)/ { text = $0 }
    text != "" && text != $0 { text = text " " $0 }
    text != "" && (/;[ \t]*(\/\/.*)?$/ || /\{[ \t]*(\/\/.*)?$/) { flush() }
  ' "$@"
}
mapfile -t found < <(statements "${files[@]}")
declare -A defined_at  # function name -> lowest rank defining it
for line in "${found[@]}"; do
  read -r kind file name <<<"$line"
  [[ $kind == def && $file == *.cc ]] || continue
  r=${rank_of[$file]}
  if [[ -z ${defined_at[$name]:-} ]] || ((r < defined_at[$name])); then defined_at[$name]=$r; fi
done
for line in "${found[@]}"; do
  read -r kind file name <<<"$line"
  [[ $kind == decl && $file == *.h ]] || continue
  d=${defined_at[$name]:-}
  if [[ -n $d ]] && ((d > rank_of[$file])); then
    fail "$file declares ${name##*::}(), which only ${layers[$((d - 1))]}/, a layer above, defines"
  fi
done

# 3. The order, where others write it: CMake's subdirectories and the architecture picture
# (drawn top down).
top=()
for l in "${layers[@]}"; do [[ $l == */* || " ${top[*]} " == *" $l "* ]] || top+=("$l"); done
cmake=$(sed -n 's/^ *add_subdirectory(\([a-z]*\))$/\1/p' CMakeLists.txt | grep -xE "$(IFS='|'; echo "${top[*]}")" | tr '\n' ' ')
[[ $cmake == "${top[*]} " ]] || fail "CMakeLists.txt adds the layers as '$cmake', not '${top[*]}'"
picture=$(sed -n '/^```$/,/^```$/s/^ \{2,4\}\([a-z/]*[a-z]\)\/ .*/\1/p' docs/architecture.md | tac | tr '\n' ' ')
[[ $picture == "${layers[*]} " ]] ||
  fail "docs/architecture.md draws the layers as '$picture' (lowest first), not '${layers[*]}'"

[ "$bad" -eq 0 ] && echo "layers: ${#files[@]} files use only their own layer or those below"
exit "$bad"
