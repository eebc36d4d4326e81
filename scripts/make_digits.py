#!/usr/bin/env python3
"""Converts the handwritten digits (samples/data/digits.csv.gz) into the safetensors files
ytape train reads: samples/data/digits_train.safetensors (the first 1500 samples) and
samples/data/digits_test.safetensors (the last 297). Standard library only.

Each csv row holds 64 pixels (an 8x8 image, row-major) and then the label 0..9. Written:
  x  f32, ytape shape [8,8,1,N] (WHCN; the file's row-major shape is [N,1,8,8]): each
     sample's 64 values are the csv row as it is (W is the column), divided by 16 so that
     they lie in [0, 1];
  y  f32, ytape shape [10,N] (file: [N,10]): one-hot, row k+1 is label k.

usage: scripts/make_digits.py [CSV_GZ] [OUT_DIR]
"""
import array
import gzip
import json
import os
import struct
import sys

TRAIN = 1500


def safetensors(tensors):
    """The bytes of a safetensors file of float32 tensors {name: (row-major shape, values)},
    laid out as ytape writes it: data by name, compact header padded with spaces to 8."""
    header, data, offset = {}, b"", 0
    for name in sorted(tensors):
        shape, values = tensors[name]
        blob = array.array("f", values)
        if sys.byteorder != "little":
            blob.byteswap()
        blob = blob.tobytes()
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        data += blob
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def split(rows):
    x, y = [], []
    for row in rows:
        x.extend(v / 16 for v in row[:64])
        onehot = [0.0] * 10
        onehot[row[64]] = 1.0
        y.extend(onehot)
    n = len(rows)
    return {"x": ([n, 1, 8, 8], x), "y": ([n, 10], y)}


def main():
    here = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "data"))
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "digits.csv.gz")
    out = sys.argv[2] if len(sys.argv) > 2 else here
    with gzip.open(source, "rt") as f:
        rows = [[int(v) for v in line.split(",")] for line in f if line.strip()]
    for row in rows:
        if len(row) != 65 or not all(0 <= v <= 16 for v in row[:64]) or not 0 <= row[64] <= 9:
            sys.exit(f"{source}: a row is not 64 pixels in 0..16 and a label in 0..9: {row}")
    if len(rows) != 1797:
        sys.exit(f"{source}: {len(rows)} rows, not the 1797 of the digits data set")
    for name, part in (("digits_train", rows[:TRAIN]), ("digits_test", rows[TRAIN:])):
        path = os.path.join(out, name + ".safetensors")
        with open(path, "wb") as f:
            f.write(safetensors(split(part)))
        print(f"{path}: {len(part)} samples")


if __name__ == "__main__":
    main()
