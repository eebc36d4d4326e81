#!/usr/bin/python3
"""ytape remat against PyTorch's checkpoint_sequential: ResNet-18's training step in less memory.

Run by hand, never in CI (it needs Debian's python3-torch and python3-torchvision):

    bench/compare_torch_remat.py [--build build/release] [--threads 2] [--batch 8]
                                 [--budget 50%] [--repeat 5]

- ytape: samples/resnet18.jl traced at f32[224,224,3,BATCH], `ytape grad --wrt model`,
  `ytape opt`, then `ytape remat --budget BUDGET`. For both tapes: the runtime plan's peak
  (`ytape stats`: intermediate buffers), the growth of the peak resident set of one `ytape
  run --random` over the same command on a tape of the same inputs and no ops (as
  bench/compare_torch.py measures), the median and minimum time of `ytape run --random
  --repeat`, and whether the two tapes' outputs are the same bytes.
- PyTorch: torchvision's resnet18 in train() mode as a Sequential of its stem, its eight
  residual blocks and its head, loss = the sum of the logits, backward; plain, and with
  torch.utils.checkpoint.checkpoint_sequential at 2, 3, 4, 6 and 8 segments (the image
  requires grad, as reentrant checkpointing needs an input that does). Each configuration
  runs in a process of its own with glibc told never to trim or unmap (PyTorch at its
  best), in both memory formats (contiguous and channels_last; the faster is kept), timed
  after a warm-up step; memory is the growth of the peak resident set during the first step.
- The comparison at the same memory: the checkpointed PyTorch configuration whose memory is
  nearest ytape's rematerialized run without being below it, and the ratio of the times.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_torch as ct  # noqa: E402  (the shared helpers: peak_mb, run, fma_peak)

SEGMENTS = (0, 2, 3, 4, 6, 8)  # 0: no checkpointing


def torch_child(batch, threads, segments, channels_last, repeat):
    import resource

    import torch
    import torchvision
    from torch.utils.checkpoint import checkpoint_sequential

    torch.set_num_threads(threads)
    torch.manual_seed(1)
    m = torchvision.models.resnet18(weights=None)
    m.train()
    # The stem's relu is in place in torchvision; a segment may start at it, whose input
    # checkpointing makes a leaf that must not be written.
    blocks = [m.conv1, m.bn1, torch.nn.ReLU(), m.maxpool, *m.layer1, *m.layer2, *m.layer3, *m.layer4,
              m.avgpool, torch.nn.Flatten(), m.fc]
    seq = torch.nn.Sequential(*blocks)
    image = torch.rand(batch, 3, 224, 224) * 2 - 1
    if channels_last:
        seq = seq.to(memory_format=torch.channels_last)
        image = image.contiguous(memory_format=torch.channels_last)
    if segments:
        image.requires_grad_(True)

    def step():
        seq.zero_grad(set_to_none=False)
        out = checkpoint_sequential(seq, segments, image) if segments else seq(image)
        out.sum().backward()

    for p in seq.parameters():  # the gradients exist before the first step, as ytape's outputs
        p.grad = torch.zeros_like(p)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    step()
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times),
                      "rss_growth_mb": growth, "version": torch.__version__}))


def torch_config(batch, threads, segments, repeat):
    best = None
    for channels_last in (False, True):
        out = subprocess.run([sys.executable, __file__, "--child", str(segments), "--batch",
                              str(batch), "--threads", str(threads), "--repeat", str(repeat)]
                             + (["--channels-last"] if channels_last else []),
                             check=True, capture_output=True, text=True,
                             env={**os.environ, **ct.TUNED_GLIBC}).stdout
        r = json.loads(out)
        r["format"] = "channels_last" if channels_last else "contiguous"
        if best is None or r["median_ms"] < best["median_ms"]:
            best = r
    return best


def planned_mib(ytape, tape):
    out = ct.run([ytape, "stats", tape])
    return int(re.search(r"intermediate buffers \(runtime plan\)\s+([\d,]+)", out)
               .group(1).replace(",", "")) / 1048576


def ytape_figures(ytape, tape, empty, threads, repeat, work):
    base = [ytape, "run", "--random", "--threads", str(threads)]
    growth = ct.peak_mb(base + [tape], work) - ct.peak_mb(base + [empty], work)
    out = ct.run(base + [tape, "--repeat", str(repeat + 1)])
    median, best = re.search(r"time: median ([\d.]+) ms over \d+ runs \(min ([\d.]+)",
                             out).groups()
    return {"median_ms": float(median), "min_ms": float(best), "rss_growth_mb": growth,
            "plan_mib": planned_mib(ytape, tape)}


def inputs_only(tape, path):
    with open(tape) as f:
        t = json.load(f)
    t["ops"] = [op for op in t["ops"] if op["op"] == "input"]
    t["outputs"] = [{"var": t["ops"][0]["out"][0], "name": "out"}]
    with open(path, "w") as f:
        json.dump(t, f)


def same_outputs(ytape, a, b, work):
    outs = []
    for k, tape in enumerate((a, b)):
        path = os.path.join(work, f"out{k}.safetensors")
        ct.run([ytape, "run", "--random", tape, "-o", path])
        with open(path, "rb") as f:
            outs.append(f.read())
    return outs[0] == outs[1]


def row(label, r):
    extra = f"  plan {r['plan_mib']:.1f} MiB" if "plan_mib" in r else f"  {r.get('format', '')}"
    return (f"{label:<34} {r['median_ms']:>9.1f} {r['min_ms']:>9.1f} "
            f"{r['rss_growth_mb']:>9.1f}{extra}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--budget", default="50%")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--channels-last", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        torch_child(args.batch, args.threads, args.child, args.channels_last, args.repeat)
        return
    ytape = os.path.join(args.build, "cli", "ytape")
    isa, peak, cpu = ct.fma_peak(args.build, args.threads)
    with tempfile.TemporaryDirectory(prefix="ytape-remat-") as work:
        f, g, o, r, empty = (os.path.join(work, n + ".json") for n in
                             ("f", "g", "o", "r", "inputs"))
        ct.run([ytape, "trace", ct.PROGRAM, "-f", "loss", "model",
                f"f32[224,224,3,{args.batch}]", "-o", f])
        ct.run([ytape, "grad", f, "--wrt", "model", "-o", g])
        ct.run([ytape, "opt", g, "-o", o])
        stats = subprocess.run([ytape, "remat", o, "--budget", args.budget, "-o", r, "--stats"],
                               check=True, capture_output=True, text=True).stderr
        inputs_only(o, empty)
        plain = ytape_figures(ytape, o, empty, args.threads, args.repeat, work)
        remat = ytape_figures(ytape, r, empty, args.threads, args.repeat, work)
        bits = same_outputs(ytape, o, r, work)
    print(stats.strip())
    print(f"\nResNet-18 training step, batch {args.batch}, {args.threads} threads on {cpu} "
          f"(FMA peak {peak:.0f} GFLOP/s, {isa})")
    print(f"{'':<34} {'median ms':>9} {'min ms':>9} {'RSS MB':>9}")
    print(row("ytape", plain))
    print(row(f"ytape remat --budget {args.budget}", remat))
    print(f"  gradients bit-identical: {'yes' if bits else 'NO'}; time {remat['median_ms'] / plain['median_ms']:.2f}x, "
          f"plan {remat['plan_mib'] / plain['plan_mib']:.2f}x, RSS growth "
          f"{remat['rss_growth_mb'] / plain['rss_growth_mb']:.2f}x")
    torch_rows = {}
    for segments in SEGMENTS:
        torch_rows[segments] = torch_config(args.batch, args.threads, segments, args.repeat)
        label = "PyTorch" if segments == 0 else f"PyTorch checkpoint_sequential({segments})"
        print(row(label, torch_rows[segments]))
    fits = [s for s in SEGMENTS if s and torch_rows[s]["rss_growth_mb"] >= remat["rss_growth_mb"]]
    match = min(fits or [s for s in SEGMENTS if s],
                key=lambda s: abs(torch_rows[s]["rss_growth_mb"] - remat["rss_growth_mb"]))
    t = torch_rows[match]
    print(f"\nAt the same memory: ytape remat {remat['rss_growth_mb']:.1f} MB in "
          f"{remat['median_ms']:.1f} ms; PyTorch checkpoint_sequential({match}) "
          f"{t['rss_growth_mb']:.1f} MB in {t['median_ms']:.1f} ms ({t['format']}): "
          f"time ratio {remat['median_ms'] / t['median_ms']:.2f}x, memory ratio "
          f"{remat['rss_growth_mb'] / t['rss_growth_mb']:.2f}x (PyTorch {t['version']}). "
          f"Plain PyTorch: {torch_rows[0]['rss_growth_mb']:.1f} MB in "
          f"{torch_rows[0]['median_ms']:.1f} ms.")


if __name__ == "__main__":
    main()
