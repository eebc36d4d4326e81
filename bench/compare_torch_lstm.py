#!/usr/bin/python3
"""ytape against PyTorch's nn.LSTM: an LSTM language model's gradient step, side by side.

Run by hand, never in CI (it needs Debian's python3-torch):

    bench/compare_torch_lstm.py [--build build/release] [--threads 2] [--seq 256]
                                [--batch 32] [--hidden 256] [--vocab 64] [--rounds 5]

The model, in ytape's language (Flux's layers): Chain(LSTM(V => H), Dense(H => V)) over a
sequence of one-hot tokens x (V x B x T), the loss Flux.logitcrossentropy against one-hot
targets y. ytape traces it (`ytape trace`: the LSTM over the sequence is one scan op),
takes its gradient (`ytape grad`, which stores each step's residuals, and `ytape grad
--remat`, which stores the carries of segments of about sqrt(T) steps and recomputes
them), optimizes it (`ytape opt`) and
times `ytape run` of the gradient tape: the forward and the backward, every weight's
gradient. PyTorch runs
nn.LSTM + nn.Linear + F.cross_entropy and .backward() from the same weights and inputs (the
`--save-inputs` file of the trace; Flux's gate order i, f, g, o is PyTorch's; Flux's one
bias is bias_ih, bias_hh is zero), the allocator kept (MALLOC_MMAP_THRESHOLD_ and
MALLOC_TRIM_THRESHOLD_ at 4 GiB), and its loss checked against ytape's. PyTorch runs with
torch.set_num_threads(n) for every n from 1 to N and is compared at its fastest: on the
2-core VMs its 2-thread LSTM was 2-3x slower than its 1-thread one. Neither updates the weights: the optimizer's step is the same few
elementwise ops on both sides.

Runs are interleaved (ytape's `--repeat 3`, then 3 PyTorch steps, --rounds times) and the
minimum of each is compared; the peak resident memory of each side's process is printed
with the memory its process had before the step (PyTorch's import alone is large).
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

PROGRAM = """using Flux
model = Chain(LSTM({V} => {H}), Dense({H} => {V}))
x = Float32.(rand({V}, {B}, {T}) .< 0.5f0 / {V})
y = Float32.(rand({V}, {B}, {T}) .< 0.5f0 / {V})
function loss(model, x, y)
  Flux.reset!(model)
  Flux.logitcrossentropy(model(x), y)
end
"""

TORCH = r"""
import json, resource, sys, time
import numpy as np
import torch
import torch.nn.functional as F
V, H, B, T, threads, steps, inputs = json.loads(sys.argv[1])
torch.set_num_threads(threads)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        # The header holds the row-major shape: ytape's column-major one reversed.
        out[name] = np.frombuffer(data[a:b], dtype=np.float32).reshape(t["shape"]).copy()
    return out

w = read_safetensors(inputs)
lstm = torch.nn.LSTM(V, H)
dense = torch.nn.Linear(H, V)
with torch.no_grad():
    lstm.weight_ih_l0.copy_(torch.from_numpy(w["model.layers.1.cell.Wi"]).T)
    lstm.weight_hh_l0.copy_(torch.from_numpy(w["model.layers.1.cell.Wh"]).T)
    lstm.bias_ih_l0.copy_(torch.from_numpy(w["model.layers.1.cell.b"]))
    lstm.bias_hh_l0.zero_()
    dense.weight.copy_(torch.from_numpy(w["model.layers.2.weight"]).T)
    dense.bias.copy_(torch.from_numpy(w["model.layers.2.bias"]))
x = torch.from_numpy(w["x"])  # (T, B, V): PyTorch's sequence-first layout, byte for byte
y = torch.from_numpy(w["y"])

def step():
    lstm.zero_grad(set_to_none=True)
    dense.zero_grad(set_to_none=True)
    h, _ = lstm(x)
    loss = F.cross_entropy(dense(h).reshape(-1, V), y.reshape(-1, V))
    loss.backward()
    return loss.item()

loss = step()
times = []
for _ in range(steps):
    start = time.perf_counter()
    step()
    times.append((time.perf_counter() - start) * 1000)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"loss": loss, "ms": min(times), "peak_kb": peak, "base_kb": base}))
"""


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def run(cmd, env=None):
    """Runs cmd; returns its stdout and its peak resident memory in KiB."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            sys.exit(f"{' '.join(map(str, cmd))} failed:\n{err.read()}")
        return out.read(), usage.ru_maxrss


def planned_mb(ytape, tape, threads):
    """The buffers `ytape plan` gives the tape and each of its regions, in MB."""
    out, _ = run([ytape, "plan", tape, "--threads", str(threads)])
    total = 0.0
    for size, unit in re.findall(r"buffers ([0-9.]+) (kB|MB) in all", out):
        total += float(size) / (1000 if unit == "kB" else 1)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build/release"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    ytape = pathlib.Path(a.build) / "cli/ytape"
    V, H, B, T = a.vocab, a.hidden, a.batch, a.seq
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ytape-lstm-"))
    (tmp / "lstm.jl").write_text(PROGRAM.format(V=V, H=H, B=B, T=T))
    run([ytape, "trace", tmp / "lstm.jl", "-f", "loss", "model", "x", "y", "-o", tmp / "f.json",
         "--save-inputs", tmp / "in.safetensors"])
    run([ytape, "grad", tmp / "f.json", "-o", tmp / "g.json"])
    run([ytape, "opt", tmp / "g.json", "-o", tmp / "step.json"])
    run([ytape, "grad", "--remat", tmp / "f.json", "-o", tmp / "gr.json"])
    run([ytape, "opt", tmp / "gr.json", "-o", tmp / "step_remat.json"])
    stats, _ = run([ytape, "stats", tmp / "step.json"])
    planned = {name: planned_mb(ytape, tmp / name, a.threads)
               for name in ("step.json", "step_remat.json")}
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="4294967296", MALLOC_TRIM_THRESHOLD_="4294967296")
    ours, ours_kb, remat, remat_kb = [], 0, [], 0
    time_line = r"^time: median [0-9.]+ ms over [0-9]+ runs \(min ([0-9.]+)"
    theirs = {n: [] for n in range(1, a.threads + 1)}
    torch_out = {}
    for _ in range(a.rounds):
        out, kb = run([ytape, "run", tmp / "step.json", "--inputs", tmp / "in.safetensors",
                       "--repeat", "3", "--threads", str(a.threads)])
        ours_kb = max(ours_kb, kb)
        ours.append(float(re.search(time_line, out, re.M).group(1)))
        out_remat, kb = run([ytape, "run", tmp / "step_remat.json", "--inputs",
                             tmp / "in.safetensors", "--repeat", "3", "--threads", str(a.threads)])
        remat_kb = max(remat_kb, kb)
        remat.append(float(re.search(time_line, out_remat, re.M).group(1)))
        loss = float(re.search(r"^out f32\[\] ([-0-9.e]+)", out, re.M).group(1))
        for n in theirs:
            args = json.dumps([V, H, B, T, n, 3, str(tmp / "in.safetensors")])
            t, _ = run([sys.executable, "-c", TORCH, args], env=env)
            torch_out[n] = json.loads(t)
            theirs[n].append(torch_out[n]["ms"])
    best = min(theirs, key=lambda n: min(theirs[n]))
    print(f"LSTM language model, gradient step: V={V}, H={H}, batch {B}, sequence {T}; "
          f"{a.threads} threads; {cpu_name()}")
    print(f"tape: {stats.splitlines()[0]}")
    print(f"loss: ytape {loss:.7g}, PyTorch {torch_out[best]['loss']:.7g}")
    per_n = ", ".join(f"{min(v):.1f} ms with {n} thread{'s' if n > 1 else ''}"
                      for n, v in theirs.items())
    print(f"time (min of {a.rounds} rounds): ytape {min(ours):.1f} ms with {a.threads} threads; "
          f"PyTorch {per_n}: {min(ours) / min(theirs[best]):.2f}x PyTorch's best time")
    print(f"ytape grad --remat (segments of about sqrt(T) steps recomputed, their carries "
          f"stored): {min(remat):.1f} ms ({min(remat) / min(ours):.2f}x), peak memory "
          f"{remat_kb / 1024:.0f} MiB")
    print(f"planned buffers (ytape plan, the tape's and its regions'): "
          f"{planned['step.json']:.1f} MB, under --remat {planned['step_remat.json']:.1f} MB "
          f"({planned['step_remat.json'] / planned['step.json']:.2f}x)")
    print(f"peak memory: ytape's process {ours_kb / 1024:.0f} MiB; PyTorch's "
          f"{torch_out[best]['peak_kb'] / 1024:.0f} MiB, of which "
          f"{torch_out[best]['base_kb'] / 1024:.0f} MiB before the first step")
    if abs(loss - torch_out[best]["loss"]) > 1e-4 * abs(torch_out[best]["loss"]):
        sys.exit("the losses differ: the weights were not mapped as they should be")


if __name__ == "__main__":
    main()
