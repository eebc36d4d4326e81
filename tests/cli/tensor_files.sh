#!/usr/bin/env bash
# Tensor files through the command line (docs/commands.md, "Tensor files"): outputs written
# in other dtypes (--dtype) and numpy's formats, read back into a tape's f32 inputs where
# every value converts exactly; several --inputs merged; a value a dtype does not hold, an
# input given twice and a shape given reversed each named.
# usage: tensor_files.sh YTAPE   (run in tests/cli)
set -u
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ytape" trace files/f.jl -f f x w -o "$dir/f.json" || exit 1
for dtype in u8 i32 bf16 f16 f64; do
  "$ytape" run files/id.json --inputs files/ab.json -o "$dir/$dtype.safetensors" --dtype $dtype || exit 1
  echo "$dtype: $("$ytape" run "$dir/f.json" --inputs "$dir/$dtype.safetensors" | grep -o 'out .*')"
done
"$ytape" run files/id.json --inputs files/ab.json -o "$dir/xw.npz" || exit 1
echo "npz: $("$ytape" run "$dir/f.json" --inputs "$dir/xw.npz" | grep -o 'out .*')"
"$ytape" run files/id_t.json --inputs files/a_t.json -o "$dir/x.npy" --dtype u16 || exit 1
"$ytape" run files/id.json --inputs files/ab.json -o "$dir/w.npy" 2>&1 | sed "s|$dir/||g"
"$ytape" run files/id.json --inputs files/ab.json -o "$dir/xw.safetensors" --dtype i8 2>&1 | sed "s|$dir/||g"
"$ytape" run files/id.json --inputs files/tenth.json -o "$dir/tenth.safetensors" || exit 1
"$ytape" run "$dir/f.json" --inputs "$dir/tenth.safetensors" 2>&1 | sed "s|$dir/||g"
"$ytape" run "$dir/f.json" --inputs "$dir/xw.npz" "$dir/u8.safetensors" 2>&1 | sed "s|$dir/||g"
"$ytape" run "$dir/f.json" --inputs "$dir/x.npy" --random 2>&1 | sed "s|$dir/||g"
"$ytape" run "$dir/f.json" --inputs "$dir/xw.npz" --dtype u8 2>&1 | sed "s|$dir/||g"
exit 0
