#!/usr/bin/python3
"""Per-example gradients of the digits CNN: ytape vmap against 64 separate gradients and PyTorch.

Run by hand, never in CI (the PyTorch side needs Debian's python3-torch, with functorch):

    bench/per_example.py [--build build/release] [--threads 2] [--batch 64] [--repeat 20]

- ytape: samples/digits_per_example.jl traced (the loss of one image, the CNN of
  samples/digits.jl in test mode), `ytape grad --wrt model`, `ytape opt`, then `ytape vmap
  --over x1,y1 --size BATCH`: one tape whose outputs are the BATCH per-example gradients.
  Checked: its outputs on the first BATCH training images equal, for every parameter and
  image, the gradient tape run on that image alone (BATCH processes), to 1e-5 relative.
  Timed: the batched tape's run (`ytape run --repeat`, median) against BATCH runs of the
  one-image tape in one process (its median run times BATCH): "one by one", at --threads
  and at 1 thread (the faster for so small a tape). GFLOP/s from `ytape stats`' FLOPs, as
  a share of bench_peak's FMA peak.
- PyTorch: the same model with the same weights (bench/compare_torch_train.py's mapping),
  eval() mode; functorch.vmap(functorch.grad(loss)) over the batch, and a loop of BATCH
  backward passes; each timed by its median over --repeat after a warm-up, glibc told never
  to trim or unmap. Its per-example gradients are compared with ytape's.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_torch as ct  # noqa: E402
import compare_torch_train as ctt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "samples", "digits_per_example.jl")
DATA = os.path.join(ROOT, "samples", "data", "digits_train.safetensors")
# ytape's Chain index (1-based) of each parameter's layer -> the PyTorch Sequential's index.
LAYERS = {1: 0, 2: 1, 3: 3, 4: 4, 6: 7, 7: 8, 11: 13}


def run_median(cmd):
    out = ct.run(cmd)
    return float(re.search(r"time: median ([\d.]+) ms", out).group(1))


def ytape_side(ytape, threads, batch, repeat, work):
    one, grad, opt, per = (os.path.join(work, n + ".json") for n in ("one", "grad", "opt", "per"))
    init = os.path.join(work, "init.safetensors")
    ct.run([ytape, "trace", PROGRAM, "-f", "loss1", "model", "x1", "y1", "-o", one,
            "--save-inputs", init])
    ct.run([ytape, "grad", one, "--wrt", "model", "-o", grad])
    ct.run([ytape, "opt", grad, "-o", opt])
    ct.run([ytape, "vmap", opt, "--over", "x1,y1", "--size", str(batch), "-o", per])
    weights = {k: v for k, v in ct.read_safetensors(init).items() if k.startswith("model.")}
    data = ct.read_safetensors(DATA)
    xs, ys = data["x"][:batch], data["y"][:batch]
    batched = os.path.join(work, "batched.safetensors")
    ct.write_safetensors(batched, {**weights, "x1": xs.reshape(batch, 1, 1, 8, 8),
                                   "y1": ys.reshape(batch, 1, 10)})
    out = os.path.join(work, "per.safetensors")
    ct.run([ytape, "run", per, "--inputs", batched, "-o", out])
    per_example = ct.read_safetensors(out)
    worst = 0.0
    for b in range(batch):
        single = os.path.join(work, "single.safetensors")
        ct.write_safetensors(single, {**weights, "x1": xs[b:b + 1], "y1": ys[b:b + 1]})
        ct.run([ytape, "run", opt, "--inputs", single, "-o", out])
        alone = ct.read_safetensors(out)
        for name, g in alone.items():
            whole = per_example[name]  # unbatched where it depends on no example
            mine = whole[b] if whole.ndim == g.ndim + 1 else whole
            scale = max(float(np.abs(g).max()), 1e-30)
            worst = max(worst, float(np.abs(mine - g).max()) / scale)
    base = [ytape, "run", "--threads", str(threads)]
    vmapped_ms = run_median(base + [per, "--inputs", batched, "--repeat", str(repeat)])
    # One by one at its best: one image's tape is small enough that a second thread may
    # cost more than it gives.
    loop_ms = {}
    for t in sorted({threads, 1}):
        loop_ms[t] = batch * run_median([ytape, "run", "--threads", str(t), opt, "--inputs",
                                         single, "--repeat", str(repeat * batch)])
    return init, per_example, worst, vmapped_ms, loop_ms, ct.step_flops(ytape, per)


def torch_child(init_path, threads, batch, repeat):
    import torch
    from functorch import grad, make_functional_with_buffers, vmap

    torch.set_num_threads(threads)
    init = ct.read_safetensors(init_path)
    model = ctt.torch_model("cnn", init).eval()
    data = ct.read_safetensors(DATA)
    xs = torch.from_numpy(data["x"][:batch])
    ys = torch.from_numpy(data["y"][:batch])
    fmodel, params, buffers = make_functional_with_buffers(model)

    def loss(params, buffers, x, y):  # Flux's logitcrossentropy of one image
        out = fmodel(params, buffers, x.unsqueeze(0))
        return -(y.unsqueeze(0) * torch.log_softmax(out, dim=1)).sum()

    per_example = vmap(grad(loss), in_dims=(None, None, 0, 0))

    def loop():
        grads = []
        for b in range(batch):
            model.zero_grad()
            out = model(xs[b:b + 1])
            (-(ys[b:b + 1] * torch.log_softmax(out, dim=1)).sum()).backward()
            grads.append([p.grad.clone() for p in model.parameters()])
        return grads

    def timed(f):
        f()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            f()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    grads = per_example(params, buffers, xs, ys)
    names = [n for n, _ in model.named_parameters()]
    result = {"vmap_ms": timed(lambda: per_example(params, buffers, xs, ys)),
              "loop_ms": timed(loop), "version": torch.__version__,
              "grads": {n: g.detach().numpy().tolist() for n, g in zip(names, grads)}}
    print(json.dumps(result))


def compare_with_torch(per_example, torch_grads, batch):
    worst = 0.0
    for layer, index in LAYERS.items():
        for part in ("weight", "bias"):
            mine = per_example[f"grad.model.layers.{layer}.{part}"]
            theirs = np.array(torch_grads[f"{index}.{part}"], dtype=np.float32)
            if layer == 11 and part == "weight":  # Flux's (out, in) is row-major (in, out)
                mine = mine.transpose(0, 2, 1)
            theirs = theirs.reshape(mine.shape)
            scale = max(float(np.abs(theirs).max()), 1e-30)
            worst = max(worst, float(np.abs(mine - theirs).max()) / scale)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        torch_child(args.child, args.threads, args.batch, args.repeat)
        return
    ytape = os.path.join(args.build, "cli", "ytape")
    isa, peak, cpu = ct.fma_peak(args.build, args.threads)
    with tempfile.TemporaryDirectory(prefix="ytape-per-example-") as work:
        init, per_example, worst, vmapped_ms, loops, flops = ytape_side(
            ytape, args.threads, args.batch, args.repeat, work)
        child = subprocess.run([sys.executable, __file__, "--child", init, "--threads",
                                str(args.threads), "--batch", str(args.batch), "--repeat",
                                str(args.repeat)], check=True, capture_output=True, text=True,
                               env={**os.environ, **ct.TUNED_GLIBC}).stdout
    t = json.loads(child)
    vs_torch = compare_with_torch(per_example, t["grads"], args.batch)
    print(f"Per-example gradients of the digits CNN, batch {args.batch}, {args.threads} threads "
          f"on {cpu}")
    print(f"  ytape vmap equals {args.batch} separate gradients: largest difference "
          f"{worst:.2e} of the largest element ({'ok' if worst <= 1e-5 else 'MISMATCH'})")
    print(f"  ytape vs PyTorch's per-example gradients: largest difference {vs_torch:.2e}")
    rate = flops / vmapped_ms * 1e-6
    print(f"  ytape vmap        {vmapped_ms:9.2f} ms   {flops / 1e6:.0f} MFLOP, {rate:.0f} GFLOP/s = "
          f"{100 * rate / peak:.0f}% of the {isa} FMA peak ({peak:.0f} GFLOP/s)")
    for n, ms in loops.items():
        print(f"  ytape one by one  {ms:9.2f} ms   ({n} thread{'s' if n > 1 else ''}) vmap is "
              f"{ms / vmapped_ms:.1f}x faster")
    print(f"  PyTorch {t['version']} functorch.vmap(grad) {t['vmap_ms']:9.2f} ms   "
          f"ytape vmap / it: {vmapped_ms / t['vmap_ms']:.2f}x")
    print(f"  PyTorch loop      {t['loop_ms']:9.2f} ms   ytape vmap / it: "
          f"{vmapped_ms / t['loop_ms']:.2f}x")
    if worst > 1e-5:
        sys.exit(1)


if __name__ == "__main__":
    main()
