#!/usr/bin/env bash
# run --carry: the digits MLP's training step run 3 times, each output out.P carried into
# input P (written over its buffer), gives the bytes `ytape train` gives for 3 epochs of
# that one batch in order; plan --carry shows the buffers donated; a tape with no output
# to carry is refused by name.
set -eu
ytape=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "run_carry: $*"; exit 1; }
"$ytape" trace ../../samples/digits.jl -f train_step mlp opt_mlp step x y -o "$dir/step.json" \
  --save-inputs "$dir/init.safetensors"
# safetensors.py split F OUT NAMES...: the tensors NAMES of F as a file of their own;
# safetensors.py same TRAINED RUN: every tensor P of TRAINED has the bytes of out.P in RUN.
cat >"$dir/safetensors.py" <<'PY'
import json, struct, sys
def load(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header, body = json.loads(data[8:8 + n]), data[8 + n:]
    header.pop("__metadata__", None)
    return {k: (t, body[t["data_offsets"][0]:t["data_offsets"][1]]) for k, t in header.items()}
if sys.argv[1] == "split":
    tensors, header, blobs, at = load(sys.argv[2]), {}, [], 0
    for name in sys.argv[4:]:
        t, blob = tensors[name]
        header[name] = {"dtype": t["dtype"], "shape": t["shape"], "data_offsets": [at, at + len(blob)]}
        blobs.append(blob)
        at += len(blob)
    text = json.dumps(header).encode()
    open(sys.argv[3], "wb").write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
else:
    trained, run = load(sys.argv[2]), load(sys.argv[3])
    differ = [k for k in trained if trained[k][1] != run["out." + k][1]]
    sys.exit(f"differ: {differ[:5]}" if differ else 0)
PY
st() { python3 "$dir/safetensors.py" "$@"; }
st split "$dir/init.safetensors" "$dir/batch.safetensors" x y  # the example batch as data
"$ytape" train "$dir/step.json" --data "$dir/batch.safetensors" --init "$dir/init.safetensors" \
  --epochs 3 --no-shuffle --threads 2 -o "$dir/trained.safetensors" >/dev/null
for n in 1 3; do
  "$ytape" run "$dir/step.json" --inputs "$dir/init.safetensors" --carry --repeat $n \
    --threads 2 -o "$dir/run$n.safetensors" >/dev/null
done
st same "$dir/trained.safetensors" "$dir/run3.safetensors" ||
  fail "3 carried runs differ from 3 steps of ytape train"
! st same "$dir/trained.safetensors" "$dir/run1.safetensors" 2>/dev/null ||
  fail "one carried run gives what three give"
"$ytape" plan "$dir/step.json" --carry | head -1 | grep -q "; [1-9][0-9]* outputs written over the inputs" ||
  fail "plan --carry shows no donation"
"$ytape" plan "$dir/step.json" | grep -q "over input" && fail "plan donates without --carry"
"$ytape" trace ../../samples/digits.jl -f evaluate mlp xtest ytest -o "$dir/eval.json"
if "$ytape" run "$dir/eval.json" --random --carry >"$dir/out" 2>&1; then fail "eval carried"; fi
grep -q "^ytape: .*no output carries into an input (--carry)" "$dir/out" || { cat "$dir/out"; fail "message"; }
echo ok
