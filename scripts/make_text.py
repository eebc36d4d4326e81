#!/usr/bin/env python3
"""Cuts the bundled text (samples/data/proverbs.txt) into the windows of characters that
samples/gpt.jl trains on: samples/data/proverbs_train.safetensors (windows of the first
90% of the verses, starting every STRIDE characters) and proverbs_test.safetensors (the
rest, windows side by side). Standard library only.

Each window is T + 1 = 65 characters as their 1-based positions in VOCAB (a U8 tensor
`tokens`, ytape shape [65,N], the file's row-major [N,65]): the model reads the first 64
and predicts the last 64. VOCAB is every character of the text, sorted; samples/gpt.jl
holds the same string, which this script checks.

usage: scripts/make_text.py [TEXT] [OUT_DIR]
"""
import json
import os
import re
import struct
import sys

WINDOW = 65
STRIDE = 32


def safetensors(name, rows):
    """The bytes of a safetensors file of one U8 tensor of the given rows (row-major)."""
    data = b"".join(bytes(row) for row in rows)
    header = {name: {"dtype": "U8", "shape": [len(rows), WINDOW], "data_offsets": [0, len(data)]}}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def windows(ids, stride):
    return [ids[i:i + WINDOW] for i in range(0, len(ids) - WINDOW + 1, stride)]


def sample_vocab(root):
    """The vocabulary samples/gpt.jl declares (`const vocab = "..."`), unescaped."""
    with open(os.path.join(root, "samples", "gpt.jl"), encoding="utf-8") as f:
        m = re.search(r'^const vocab = (".*")$', f.read(), re.M)
    if not m:
        sys.exit("samples/gpt.jl: no line `const vocab = \"...\"`")
    return json.loads(m.group(1))


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "samples", "data", "proverbs.txt")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "samples", "data")
    with open(source, encoding="utf-8") as f:
        text = f.read()
    vocab = "".join(sorted(set(text)))
    if vocab != sample_vocab(root):
        sys.exit(f"{source}: its characters {json.dumps(vocab)} are not samples/gpt.jl's vocab")
    verses = text.splitlines(keepends=True)
    cut = sum(len(v) for v in verses[:len(verses) * 9 // 10])
    ids = [vocab.index(c) + 1 for c in text]
    for name, rows in (("proverbs_train", windows(ids[:cut], STRIDE)),
                       ("proverbs_test", windows(ids[cut:], WINDOW))):
        path = os.path.join(out, name + ".safetensors")
        with open(path, "wb") as f:
            f.write(safetensors("tokens", rows))
        print(f"{path}: {len(rows)} windows of {WINDOW} characters")


if __name__ == "__main__":
    main()
