#!/usr/bin/env python3
"""Compares two safetensors files tensor by tensor: the largest difference of each tensor
relative to its largest magnitude. Exits 1, naming the tensor, when one is above RTOL.
Names matching SKIP (a regular expression) are reported but not held to RTOL.
usage: compare_tensors.py A B RTOL [SKIP]"""
import json
import math
import re
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I64": "q"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        code = FORMATS[t["dtype"]]
        count = (end - begin) // struct.calcsize(code)
        out[name] = struct.unpack(f"<{count}{code}", body[begin:end])
    return out


def main():
    a, b, rtol = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
    skip = re.compile(sys.argv[4]) if len(sys.argv) > 4 else None
    if sorted(a) != sorted(b):
        sys.exit(f"the files hold other tensors: {sorted(set(a) ^ set(b))}")
    worst, worst_name = 0.0, ""
    for name in sorted(a):
        scale = max((abs(v) for v in a[name]), default=0.0) or 1.0
        error = max((abs(x - y) for x, y in zip(a[name], b[name])), default=0.0) / scale
        if not math.isfinite(error):
            sys.exit(f"{name}: not finite")
        if skip and skip.search(name):
            continue
        if error > worst:
            worst, worst_name = error, name
    print(f"largest relative difference {worst:.3g} ({worst_name})")
    if worst > rtol:
        sys.exit(f"{worst_name} differs by {worst:.3g} of its largest magnitude, above {rtol}")


main()
