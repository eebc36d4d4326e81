#!/usr/bin/env bash
# Builds the libFuzzer targets in the sanitized build (build/asan: Clang, ASan + UBSan) and
# runs TARGET (or all seven) for SECONDS each (default 60), starting from the bundled samples
# and test inputs; a crash's input and report land in build/fuzz/findings/TARGET/. Exit 1 if
# any target found one.
# usage: scripts/fuzz.sh [tape_json|tensor_file|program|trace|diff|valid_tape|onnx_import|all] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
seconds=${2:-60}
case $which in
  all) targets=(tape_json tensor_file program trace diff valid_tape onnx_import) ;;
  tape_json | tensor_file | program | trace | diff | valid_tape | onnx_import) targets=("$which") ;;
  *)
    echo "fuzz: unknown target '$which' (tape_json, tensor_file, program, trace, diff, valid_tape, onnx_import or all)"
    exit 2
    ;;
esac
scripts/setup.sh
extra=()
[[ " ${targets[*]} " == *" onnx_import "* ]] && extra=(onnx_seeds)
scripts/build.sh asan "${targets[@]/#/fuzz_}" "${extra[@]}" | tail -n 1
bin=build/asan/fuzz

status=0
for target in "${targets[@]}"; do
  corpus=build/fuzz/corpus/$target findings=build/fuzz/findings/$target
  mkdir -p "$corpus" "$findings"
  case $target in
    tape_json) cp samples/tapes/*.json samples/golden/*.json tests/cli/malformed/*.json tests/cli/regions/*.json \
                 "$corpus"/ 2>/dev/null || true ;;
    tensor_file) cp tests/cli/run/*.safetensors tests/cli/run/*.json "$corpus"/ 2>/dev/null || true ;;
    program | trace) cp samples/*.jl tracer/prelude/*.jl tests/errors/*.jl tests/fuzz/programs/*.jl "$corpus"/ 2>/dev/null || true ;;
    diff) # the diff tests' tapes, each paired with the one it was edited from (NUL between)
      for f in tests/cli/diff/*.json; do
        { cat tests/cli/diff/layer.json; printf '\0'; cat "$f"; } >"$corpus/$(basename "$f")"
      done
      { cat tests/cli/regions/rnn.json; printf '\0'; cat tests/cli/regions/rnn_sigmoid.json; } \
        >"$corpus/regions_rnn.json" ;;
    valid_tape) for i in $(seq 16); do printf 'seed %d of the valid-tape target' "$i" >"$corpus/seed$i"; done ;;
    onnx_import) # the CLI tests' models, and each of ONNX's node tests' models as it is
      # and with its test inputs as initializers, so that their values are static
      build/release/tests/onnx/onnx_make_models "$corpus" 2>/dev/null || true
      if [ -d /usr/share/libonnx-testdata/data/node ]; then
        "$bin/onnx_seeds" /usr/share/libonnx-testdata/data/node "$corpus" >/dev/null
      fi ;;
  esac
  # A dictionary of the input's tokens, taken from the sources so that it follows them.
  dict=build/fuzz/$target.dict
  case $target in
    tape_json | diff)
      {
        grep -ohE '"[a-z_]+":' samples/tapes/*.json samples/golden/*.json | sort -u |
          sed 's/^"\(.*\)":$/"\\"\1\\":"/'
        sed -n 's/^X\(_UNARY\|_REGION\)\?(\([a-z0-9_]*\),.*/"\\"\2\\""/p' tape/ops.def
        printf '"%s"\n' '\"input\"' '\"const\"' 'f32[' 'f64[' 'i64[' 'bool[' true false null
      } >"$dict" ;;
    program | trace)
      {
        sed -n '/kKeywords = {/,/};/p' tracer/lang/lexer.cc | grep -oE '"[a-z]+"'
        grep -ohE '"@[a-z_.]+"' tracer/lang/parse_macros.cc | sort -u
        printf '"%s"\n' '==' '!=' '<=' '>=' '&&' '||' '->' '=>' '::' '<:' '|>' '...' \
          '.+' '.*' '.=' '+=' '^' "'" '\\\"' '$(' '[' ']' '(' ')' '{' '}' ';' '#' '#='
      } >"$dict" ;;
    *) dict="" ;;
  esac
  echo "== fuzz_$target for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin/fuzz_$target" "$corpus" -max_total_time="$seconds" -rss_limit_mb=4096 \
      -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 ${dict:+-dict="$dict"} \
      2>"build/fuzz/$target.log"; then
    echo "fuzz: fuzz_$target found a failure; its input is in $findings/, its report in build/fuzz/$target.log"
    tail -n 40 "build/fuzz/$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "build/fuzz/$target.log" | tail -n 2
  fi
done
exit $status
