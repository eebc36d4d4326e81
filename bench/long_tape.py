#!/usr/bin/env python3
"""Writes a long tape in ytape's JSON form, for timing the CLI's stages on it.

usage: bench/long_tape.py KIND N > tape.json

KIND is
  sin-chain  x = sin.(x) N times on f32[16], then sum(x): the tape of
             `function f(x); for i in 1:N; x = sin.(x); end; sum(x); end`;
  rnn        N steps of h = tanh.(W * h .+ x) on f32[8, 4], then sum(h).
Take its gradient with `ytape grad tape.json -o grad.json` (about 3N ops for sin-chain,
11N for rnn), then time `ytape run grad.json --random` with and without `--fusion off`,
`ytape plan`, `ytape gradcheck` or `ytape train` on either.
"""
import sys


def op(out, name, args, typ, attrs=None):
    fields = [f'"out":[{out}]', f'"op":"{name}"', f'"args":[{",".join(map(str, args))}]']
    if attrs:
        fields.append(f'"attrs":{attrs}')
    fields.append(f'"type":["{typ}"]')
    return "{" + ",".join(fields) + "}"


def sin_chain(n):
    lines = ['{"out":[1],"op":"input","name":"x","type":["f32[16]"]}']
    for k in range(n):
        lines.append(op(k + 2, "sin", [k + 1], "f32[16]"))
    lines.append(op(n + 2, "sum", [n + 1], "f32[]", '{"dims":[1]}'))
    return lines, n + 2


def rnn(n):
    lines = ['{"out":[1],"op":"input","name":"w","type":["f32[8,8]"]}',
             '{"out":[2],"op":"input","name":"x","type":["f32[8,4]"]}',
             op(3, "tanh", [2], "f32[8,4]")]
    h = 3
    for _ in range(1, n):
        lines.append(op(h + 1, "matmul", [1, h], "f32[8,4]"))
        lines.append(op(h + 2, "add", [h + 1, 2], "f32[8,4]"))
        lines.append(op(h + 3, "tanh", [h + 2], "f32[8,4]"))
        h += 3
    lines.append(op(h + 1, "sum", [h], "f32[]", '{"dims":[1,2]}'))
    return lines, h + 1


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("sin-chain", "rnn"):
        sys.exit(__doc__)
    lines, out = (sin_chain if sys.argv[1] == "sin-chain" else rnn)(int(sys.argv[2]))
    sys.stdout.write('{"format":"ytape-tape","version":1,"name":"f",\n"ops":[\n')
    sys.stdout.write(",\n".join(lines))
    sys.stdout.write(f'\n],\n"outputs":[\n{{"var":{out},"name":"y"}}\n]}}\n')


if __name__ == "__main__":
    main()
