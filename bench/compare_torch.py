#!/usr/bin/python3
"""ytape against PyTorch on ResNet-18 forward, same machine, same threads, one run.

Run by hand, never in CI (it needs Debian's python3-torch and python3-torchvision):

    bench/compare_torch.py [--threads 2] [--build build/release]

Times ResNet-18 at 224x224, batch 1 and 8, batch norm in training mode (batch statistics),
in PyTorch (torchvision's resnet18, eval of nothing: model.train(), under torch.no_grad())
and in ytape (bench_runtime, the same network built with the C++ builder), and prints the
ratio ytape / PyTorch for time (median of repeated runs after a warm-up) and for peak
memory growth during the first run. Each measurement runs in a process of its own.

PyTorch 1.13 from Debian runs its convolutions through oneDNN (MKL-DNN) and its matmul
through a generic reference BLAS; ytape uses im2col + OpenBLAS GEMM.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def torch_forward(batch, threads, repeat):
    import torch
    import torchvision

    torch.set_num_threads(threads)
    model = torchvision.models.resnet18(weights=None)
    model.train()
    image = torch.rand(batch, 3, 224, 224) * 2 - 1
    with torch.no_grad():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        model(image).sum()
        growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            model(image).sum()
            times.append((time.perf_counter() - start) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "rss_growth_mb": growth}


def ytape_forward(build, batch, threads):
    out = subprocess.run([os.path.join(build, "bench", "bench_runtime"), "--json", "--threads",
                          str(threads), f"resnet18-b{batch}"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one PyTorch measurement in a fresh process
        batch = int(args.child)
        print(json.dumps(torch_forward(batch, args.threads, 10 if batch == 1 else 5)))
        return
    import torch

    print(f"PyTorch {torch.__version__} (oneDNN convolutions: {torch.backends.mkldnn.is_available()}),"
          f" {args.threads} threads; ytape from {args.build}")
    print(f"{'ResNet-18 forward':<22} {'ytape ms':>9} {'torch ms':>9} {'ratio':>6}   "
          f"{'ytape MB':>8} {'torch MB':>8} {'ratio':>6}")
    for batch in (1, 8):
        child = subprocess.run([sys.executable, __file__, "--threads", str(args.threads), "--child",
                                str(batch)], check=True, capture_output=True, text=True).stdout
        t = json.loads(child)
        y = ytape_forward(args.build, batch, args.threads)
        print(f"{'batch ' + str(batch) + ', train-mode BN':<22} {y['median_ms']:>9.1f} "
              f"{t['median_ms']:>9.1f} {y['median_ms'] / t['median_ms']:>6.2f}   "
              f"{y['rss_growth_mb']:>8.1f} {t['rss_growth_mb']:>8.1f} "
              f"{y['rss_growth_mb'] / max(t['rss_growth_mb'], 0.1):>6.2f}")
    print("ratio < 1: ytape is faster / uses less. Memory: growth of the peak resident set "
          "during the first forward.")


if __name__ == "__main__":
    main()
