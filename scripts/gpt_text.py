#!/usr/bin/env python3
"""Prints the text a generation tape of samples/gpt.jl drew: reads the outputs that
`ytape run generate.json ... -o OUT.safetensors` wrote (`out.prompt` and `out.text`, the
characters' numbers) and writes the prompt and the characters that follow it, by the
vocabulary samples/gpt.jl declares. Standard library only.

usage: scripts/gpt_text.py OUT.safetensors
"""
import json
import os
import re
import struct
import sys


def read_safetensors(path):
    """{name: list of ints} of a safetensors file's I64 tensors."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(blob[8:8 + length])
    base = 8 + length
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "I64":
            sys.exit(f"{path}: '{name}' is {info['dtype']}, not the I64 of character numbers")
        begin, end = info["data_offsets"]
        out[name] = list(struct.unpack_from(f"<{(end - begin) // 8}q", blob, base + begin))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    with open(os.path.join(root, "samples", "gpt.jl"), encoding="utf-8") as f:
        vocab = json.loads(re.search(r'^const vocab = (".*")$', f.read(), re.M).group(1))
    outputs = read_safetensors(sys.argv[1])
    for name in ("out.prompt", "out.text"):
        if name not in outputs:
            sys.exit(f"{sys.argv[1]}: no '{name}': is it the output of samples/gpt.jl's generate?")
    ids = outputs["out.prompt"] + outputs["out.text"]
    if not all(1 <= i <= len(vocab) for i in ids):
        sys.exit(f"{sys.argv[1]}: a character number outside 1..{len(vocab)}")
    print("".join(vocab[i - 1] for i in ids))


if __name__ == "__main__":
    main()
