#!/usr/bin/python3
"""Times ytape's dense kernels and the same ops in PyTorch on this machine, side by side.

Runs bench_kernels --json, which times every conv, pool, norm and matmul op at the shapes of
ResNet-18 (224x224, batch 1) and prints each op's primitive, argument shapes and
attributes; then builds the same op in PyTorch from that description, times it the same
way (minimum over runs of at least `--seconds`), and prints one table: ytape ms, torch ms,
and the ratio ytape / torch (below 1: ytape is faster). The totals weigh each op by its
uses in one ResNet-18 pass.

Run by hand, never in CI (PyTorch is not a build dependency); Debian's python3-torch
(1.13) is enough:

    python3 bench/compare_torch_kernels.py [--bench build/bench/bench_kernels] [--threads 2]

PyTorch runs at its best: the script restarts itself with glibc told never to trim or unmap
freed memory (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at 4 GiB), without which
every output PyTorch allocates is faulted in afresh (bench/compare_torch.py times the
settings side by side; this one was the fastest). GFLOP/s are given for both sides, and
ytape's as a share of the machine's f32 FMA peak (bench_peak beside bench_kernels).

PyTorch's CPU convolutions (forward and both gradients) go through oneDNN (MKL-DNN), which
reorders NCHW tensors into blocked layouts and runs JIT-compiled direct convolutions;
ytape's f32 convolutions go through the same oneDNN, reordering at each call (bench_kernels
--kernels reference times ytape's own im2col + OpenBLAS kernels instead). Matmuls use the
system BLAS on both sides.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F


def timed(fn, seconds):
    """Minimum time of one call of fn in milliseconds, as bench_kernels measures it."""
    for _ in range(2):
        fn()
    best, total, reps = float("inf"), 0.0, 0
    while reps < 5 or (total < seconds and reps < 10000):
        start = time.perf_counter()
        fn()
        t = time.perf_counter() - start
        best, total, reps = min(best, t), total + t, reps + 1
    return best * 1e3


def tensor(shape, gen):
    """A PyTorch tensor with the memory layout of a column-major ytape tensor of `shape`:
    the reversed shape, row-major (WHCN becomes NCHW)."""
    return torch.rand(list(reversed(shape)), generator=gen) + 0.5


def conv_params(attrs):
    """stride, padding, dilation, groups in PyTorch's (h, w) order; pads must be symmetric."""
    pw_lo, pw_hi, ph_lo, ph_hi = attrs["pad"]
    assert pw_lo == pw_hi and ph_lo == ph_hi, "PyTorch convs take symmetric pads only"
    sw, sh = attrs["stride"]
    dw, dh = attrs["dilation"]
    return dict(stride=(sh, sw), padding=(ph_lo, pw_lo), dilation=(dh, dw), groups=attrs["groups"])


def pool_params(attrs):
    ww, wh = attrs["window"]
    sw, sh = attrs["stride"]
    pw_lo, pw_hi, ph_lo, ph_hi = attrs["pad"]
    assert pw_lo == pw_hi and ph_lo == ph_hi, "PyTorch pools take symmetric pads only"
    return [wh, ww], [sh, sw], [ph_lo, pw_lo]


def matmul_op(a, b, attrs):
    # A column-major (r, c) matrix is the row-major (c, r) tensor transposed.
    ma, mb = a.transpose(-1, -2), b.transpose(-1, -2)
    if attrs["transpose_a"]:
        ma = ma.transpose(-1, -2)
    if attrs["transpose_b"]:
        mb = mb.transpose(-1, -2)
    return lambda: torch.matmul(ma, mb)


def torch_op(case, gen):
    """A closure running case's op in PyTorch on random inputs."""
    prim, attrs, hint = case["prim"], case["attrs"], case["hint"]
    args = [tensor(s, gen) for s in case["args"]]
    out_shape = list(reversed(case["out"]))
    if prim == "conv2d":
        return lambda: F.conv2d(*args, **conv_params(attrs))
    if prim == "conv2d_backward_input":
        dy, w = args
        return lambda: torch.nn.grad.conv2d_input(out_shape, w, dy, **conv_params(attrs))
    if prim == "conv2d_backward_filter":
        x, dy = args
        return lambda: torch.nn.grad.conv2d_weight(x, out_shape, dy, **conv_params(attrs))
    if prim == "max_pool2d_with_indices":
        window, stride, pad = pool_params(attrs)
        return lambda: F.max_pool2d(args[0], window, stride, pad, return_indices=True)
    if prim == "max_pool2d_backward":
        window, stride, pad = pool_params(hint)
        x = tensor(case["out"], gen)
        _, idx = F.max_pool2d(x, window, stride, pad, return_indices=True)
        return lambda: torch.ops.aten.max_pool2d_with_indices_backward(
            args[0], x, window, stride, pad, [1, 1], False, idx)
    if prim == "avg_pool2d":
        window, stride, pad = pool_params(attrs)
        return lambda: F.avg_pool2d(args[0], window, stride, pad, count_include_pad=True)
    if prim == "avg_pool2d_backward":
        window, stride, pad = pool_params(attrs)
        x = tensor(case["out"], gen)
        return lambda: torch.ops.aten.avg_pool2d_backward(
            args[0], x, window, stride, pad, False, True, None)
    if prim in ("batchnorm", "batchnorm_with_stats"):
        x, scale, bias = args
        return lambda: torch.native_batch_norm(x, scale, bias, None, None, True, 0.1,
                                               attrs["eps"])
    if prim == "batchnorm_backward":
        dy, x, scale, mean, invstd = args
        return lambda: torch.ops.aten.native_batch_norm_backward(
            dy, x, scale, None, None, mean, invstd, True, 1e-5, [True, True, True])
    if prim == "matmul":
        return matmul_op(args[0], args[1], attrs)
    raise ValueError(f"no PyTorch equivalent for {prim}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build/release/bench/bench_kernels")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--filter", default="")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run everything this many times and keep each op's minimum "
                             "(on a busy machine)")
    opts = parser.parse_args()
    tuned = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296"}
    if any(os.environ.get(k) != v for k, v in tuned.items()):  # glibc reads them at start-up
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **tuned})
    peak_cmd = [os.path.join(os.path.dirname(opts.bench), "bench_peak"), "--json", "--threads",
                str(opts.threads)]
    peak = json.loads(subprocess.run(peak_cmd, check=True, capture_output=True,
                                     text=True).stdout)
    isa = "avx512" if "avx512" in peak else "avx2"

    torch.set_num_threads(opts.threads)
    command = [opts.bench, "--json", "--threads", str(opts.threads),
               "--seconds", str(opts.seconds), "--filter", opts.filter]
    gen = torch.Generator().manual_seed(42)
    cases, theirs = [], []
    with torch.no_grad():
        for _ in range(opts.repeat):
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            run = [json.loads(line) for line in out.splitlines()]
            times = [timed(torch_op(case, gen), opts.seconds) for case in run]
            if not cases:
                cases, theirs = run, times
            for case, new, t, i in zip(cases, run, times, range(len(run))):
                case["ms"] = min(case["ms"], new["ms"])
                theirs[i] = min(theirs[i], t)

    print(f"dense kernels at ResNet-18 shapes, batch 1, {opts.threads} threads on {peak['cpu']}, "
          f"torch {torch.__version__}, min of runs; share: of the {isa} FMA peak, "
          f"{peak[isa]:.0f} GFLOP/s")
    print(f"{'op':<44} {'uses':>4} {'ytape ms':>9} {'torch ms':>9} {'ratio':>6} "
          f"{'ytape GF/s':>10} {'torch GF/s':>10} {'share':>6}")
    totals = {"forward": [0.0, 0.0], "backward": [0.0, 0.0]}
    for case, t in zip(cases, theirs):
        ours = case["ms"]
        rates = ""
        if case["flops"] > 0:
            mine, their = case["flops"] / ours * 1e-6, case["flops"] / t * 1e-6
            rates = f" {mine:10.1f} {their:10.1f} {100 * mine / peak[isa]:5.0f}%"
        print(f"{case['name']:<44} {case['count']:>4} {ours:9.3f} {t:9.3f} {ours / t:6.2f}{rates}")
        totals[case["pass"]][0] += case["count"] * ours
        totals[case["pass"]][1] += case["count"] * t
    for name, (ours, theirs) in totals.items():
        print(f"{'ResNet-18 ' + name + ' (dense ops, weighted)':<49} {ours:9.2f} {theirs:9.2f} "
              f"{ours / theirs:6.2f}")


if __name__ == "__main__":
    main()
