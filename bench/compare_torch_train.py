#!/usr/bin/python3
"""ytape against PyTorch training the handwritten digits: test accuracy and time per epoch.

Run by hand, never in CI (it needs Debian's python3-torch; libjemalloc2 to time PyTorch with
jemalloc too):

    bench/compare_torch_train.py [--build build/release] [--threads 2] [--epochs 40]
                                 [--models cnn,mlp] [--seed 1] [--accuracy-seeds 5]

Both sides train the models of samples/digits.jl from the same initial weights on the same
data (samples/data/digits_{train,test}.safetensors), side by side in one run:

- the CNN: Conv 1=>32 3x3 pad 1, BatchNorm(32, relu), Conv 32=>32, BatchNorm(32, relu),
  MaxPool 2, Conv 32=>64, BatchNorm(64, relu), MaxPool 2, flatten, Dropout(0.5),
  Dense 256=>10; each batch shifted at random by up to a pixel in each direction (one of the
  9 shifts, uniformly, zero padding: digits.jl's `jitter`);
- the MLP: flatten, Dense 64=>128 relu, Dropout(0.2), Dense 128=>10 (no shifts).

Batches of 32, shuffled every epoch, the last incomplete batch dropped (46 steps of the 1,500
training samples); mean logit cross-entropy; Optimisers.jl 0.3's AdamW as the prelude
(tracer/prelude/optimisers.jl) implements it: OptimiserChain(Adam(η, (0.9, 0.999), 1e-8),
WeightDecay(1e-4)), i.e. x -= Adam's step + λ x, the decay not scaled by η (not
torch.optim.AdamW's x -= η λ x), on every trainable array (BatchNorm's scale and bias too);
η of step t (1-based) is CosAnneal(3f-3, 1f-4, period, false):
(3e-3 - 1e-4) (1 + cos(π (t - 1) / period)) / 2 + 1e-4, with period = 40 * 46 steps, the
`const epochs` of digits.jl whatever --epochs is (the traced tape has it as a constant).
BatchNorm (momentum 0.1, eps 1e-5, running variance unbiased) and dropout train during the
steps; the test set (297 samples, one batch) is evaluated after every epoch in test mode
(running statistics, no dropout).

- ytape: `ytape trace samples/digits.jl -f train_step MODEL opt_MODEL step x y --save-inputs
  init.safetensors` and `-f evaluate MODEL xtest ytest`, `ytape opt` of both, then `ytape
  train ... --threads N --seed S` (as scripts/train.sh). Its time per epoch is the epoch's samples (46 * 32) over
  the samples/s it prints: the steps alone, without evaluation or process start. The whole
  `ytape train` process (reading the tapes and data, every step and evaluation) is timed
  too.
- PyTorch: nn.Conv2d / BatchNorm2d / MaxPool2d / Dropout / Linear, loaded with the initial
  values ytape's trace saved (the `--save-inputs` file: conv weights (kw, kh, cin, cout) are
  PyTorch's (cout, cin, kh, kw) byte for byte; Dense weights are Flux's (out, in), whose
  row-major view is (in, out), transposed for nn.Linear; BatchNorm's μ and σ² are the running
  statistics), torch.optim.Adam (foreach) plus the decay term, torch.set_num_threads(N),
  seeded with --seed (its shuffles, shifts and dropout masks are its own, not ytape's). Each
  epoch's steps are timed (shuffle, batch gather, shift, forward, backward, update), not the
  evaluation. It runs in a process of its own under each allocator setting: glibc's defaults,
  glibc with MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at 4 GiB, and Debian's
  jemalloc preloaded if installed; each is printed, and ytape is compared with the fastest.
- A check of the weight mapping: the first PyTorch process also evaluates ytape's final
  weights (`ytape train -o`); its test loss and accuracy must be ytape's own evaluation's.

Printed per model: the final test accuracy of both and the mean of the last 5 epochs' (less
noisy); the final test accuracy of both for --accuracy-seeds seeds (default 5: --seed and
the next four; PyTorch at its fastest allocator setting, not timed) and their means, on which
the accuracy goal (within one point) is judged: one seed's final accuracy moves by a digit or
two of the 297 (0.3-0.7 points) with any change in rounding, on either side; the median time
per epoch of both and the ratio ytape / PyTorch at its best (goal: <= 0.2x). Goals missed
are reported, not failed: the exit status is non-zero only on errors.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "samples", "digits.jl")
TRAIN = os.path.join(ROOT, "samples", "data", "digits_train.safetensors")
TEST = os.path.join(ROOT, "samples", "data", "digits_test.safetensors")
BATCH = 32
LR_MAX, LR_MIN = 3e-3, 1e-4  # CosAnneal(3f-3, 1f-4, steps, false) in digits.jl
ACCURACY_GOAL = 0.01         # one point
RATIO_GOAL = 0.2             # ytape / PyTorch, time per epoch

# What this script mirrors of digits.jl: if these lines change, so must the script.
EXPECTED = [
    r"CrossCor\(\(3, 3\), 1 => 32; pad=1\), BatchNorm\(32, relu\)",
    r"CrossCor\(\(3, 3\), 32 => 32; pad=1\), BatchNorm\(32, relu\), MaxPool\(\(2, 2\)\)",
    r"CrossCor\(\(3, 3\), 32 => 64; pad=1\), BatchNorm\(64, relu\), MaxPool\(\(2, 2\)\)",
    r"Flux\.flatten, Dropout\(0\.5\), Dense\(256 => 10\)\)",
    r"mlp = Chain\(Flux\.flatten, Dense\(64 => 128, relu\), Dropout\(0\.2\), Dense\(128 => 10\)\)",
    r"const steps = epochs \* \(1500 ÷ 32\)",
    r"CosAnneal\(3f-3, 1f-4, steps, false\)",
    r"AdamW\(2f-3, \(0\.9f0, 0\.999f0\), 1f-4\)",
    r"Flux\.logitcrossentropy\(m\(x\), y\)",
]

# The safetensors reader of compare_torch.py, in the same folder.
from compare_torch import read_safetensors  # noqa: E402


def schedule_period():
    """The CosAnneal period of digits.jl: its `const epochs` times 46 steps."""
    with open(PROGRAM) as f:
        text = f.read()
    for pattern in EXPECTED:
        if not re.search(pattern, text):
            sys.exit(f"{PROGRAM} no longer matches /{pattern}/: update "
                     f"{os.path.relpath(__file__, ROOT)} to the changed model or optimizer")
    m = re.search(r"^const epochs = (\d+)", text, re.M)
    if not m:
        sys.exit(f"{PROGRAM}: no `const epochs = N`")
    return int(m.group(1)) * (1500 // BATCH)


def learning_rate(t, period):
    """CosAnneal(3f-3, 1f-4, period, false) at the 1-based step t (the prelude's formula)."""
    return abs(LR_MAX - LR_MIN) * (1 + math.cos(math.pi * (t - 1) / period)) / 2 + min(LR_MAX,
                                                                                        LR_MIN)


# ---- PyTorch (in a child process) -------------------------------------------------------------

def torch_model(kind, init):
    """digits.jl's model in PyTorch with ytape's initial values (the --save-inputs file)."""
    import torch
    from torch import nn

    def tensor(name):
        return torch.from_numpy(init["model.layers." + name])

    if kind == "cnn":
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Dropout(0.5), nn.Linear(256, 10))
        # ytape's Chain index (1-based) -> the PyTorch module.
        convs = {1: model[0], 3: model[3], 6: model[7]}
        norms = {2: model[1], 4: model[4], 7: model[8]}
        linears = {11: model[13]}
        dropouts = {10: model[12]}
    else:
        model = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.2),
                              nn.Linear(128, 10))
        convs, norms = {}, {}
        linears = {2: model[1], 4: model[4]}
        dropouts = {3: model[3]}
    used = set()
    with torch.no_grad():
        for i, conv in convs.items():
            conv.weight.copy_(tensor(f"{i}.weight"))  # (kw,kh,cin,cout) reversed: the same bytes
            conv.bias.copy_(tensor(f"{i}.bias"))
            used |= {f"{i}.weight", f"{i}.bias"}
        for i, norm in norms.items():
            norm.weight.copy_(tensor(f"{i}.weight"))
            norm.bias.copy_(tensor(f"{i}.bias"))
            norm.running_mean.copy_(tensor(f"{i}.μ"))
            norm.running_var.copy_(tensor(f"{i}.σ²"))
            used |= {f"{i}.weight", f"{i}.bias", f"{i}.μ", f"{i}.σ²"}
            assert norm.momentum == 0.1 and norm.eps == 1e-5
        for i, linear in linears.items():
            linear.weight.copy_(tensor(f"{i}.weight").t())  # Flux's (out, in): row-major (in, out)
            linear.bias.copy_(tensor(f"{i}.bias"))
            used |= {f"{i}.weight", f"{i}.bias"}
        for i, dropout in dropouts.items():
            assert abs(float(init[f"model.layers.{i}.p"]) - dropout.p) < 1e-12
            used.add(f"{i}.p")
    names = {k[len("model.layers."):] for k in init if k.startswith("model.")}
    if names != used:
        sys.exit(f"ytape's initial values do not map onto the PyTorch {kind}: not used "
                 f"{sorted(names - used)}, missing {sorted(used - names)}")
    return model


def optimizer_hyperparameters(init):
    """β, ϵ and λ of the AdamW state the trace saved (the same for every array)."""
    suffix = ".rule.opts.2.lambda"
    lambdas = [k for k in init if k.startswith("opt_state.") and k.endswith(suffix)]
    if not lambdas:
        sys.exit("no AdamW state (opt_state.*.rule.opts.2.lambda) in ytape's initial values")
    rule = lambdas[0][:-len(suffix)] + ".rule.opts."
    return ((float(init[rule + "1.beta.1"]), float(init[rule + "1.beta.2"])),
            float(init[rule + "1.epsilon"]), float(init[rule + "2.lambda"]))


def shift(x, torch):
    """digits.jl's jitter: each image moved by up to one pixel in each direction, zero padded,
    one of the 9 shifts uniformly."""
    n, _, h, w = x.shape
    p = torch.nn.functional.pad(x, (1, 1, 1, 1))
    crops = torch.stack([p[:, :, a:a + h, b:b + w] for a in range(3) for b in range(3)], 1)
    k = torch.randint(0, 9, (n,))
    return crops[torch.arange(n), k]


def torch_evaluate(model, xtest, ytest, torch):
    """Test loss and accuracy in test mode (running statistics, no dropout)."""
    model.eval()
    with torch.no_grad():
        logits = model(xtest)
        return (torch.nn.functional.cross_entropy(logits, ytest).item(),
                (logits.argmax(1) == ytest).double().mean().item())


def torch_train(kind, init_path, epochs, threads, seed, check_path=None):
    """Trains in this process; returns per-epoch times, losses and test accuracies, and with
    check_path the test loss and accuracy of the weights in that file (ytape's final ones)."""
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    init = read_safetensors(init_path)
    model = torch_model(kind, init)
    betas, eps, decay = optimizer_hyperparameters(init)
    period = schedule_period()
    train, test = read_safetensors(TRAIN), read_safetensors(TEST)
    x = torch.from_numpy(train["x"])                      # (N, 1, 8, 8)
    labels = torch.from_numpy(np.argmax(train["y"], 1))   # one-hot (N, 10) -> 0..9
    xtest = torch.from_numpy(test["x"])
    ytest = torch.from_numpy(np.argmax(test["y"], 1))
    n = x.shape[0]
    steps = n // BATCH

    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=LR_MAX, betas=betas, eps=eps, foreach=True)
    loss_fn = torch.nn.functional.cross_entropy  # = logitcrossentropy of one-hot columns
    t = 1
    times, losses, accuracies, test_losses = [], [], [], []
    for _ in range(epochs):
        model.train()
        total = 0.0
        start = time.perf_counter()
        order = torch.randperm(n)
        for s in range(steps):
            batch = order[s * BATCH:(s + 1) * BATCH]
            xb = x[batch]
            if kind == "cnn":
                xb = shift(xb, torch)
            loss = loss_fn(model(xb), labels[batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            for group in opt.param_groups:
                group["lr"] = learning_rate(t, period)
            with torch.no_grad():
                # WeightDecay after Adam in the chain: x -= adam_step + λ x, x before the step.
                decayed = torch._foreach_mul(params, decay)
                opt.step()
                torch._foreach_sub_(params, decayed)
            total += loss.item()
            t += 1
        times.append(time.perf_counter() - start)
        losses.append(total / steps)
        test_loss, accuracy = torch_evaluate(model, xtest, ytest, torch)
        test_losses.append(test_loss)
        accuracies.append(accuracy)
    result = {"epoch_s": times, "loss": losses, "test_loss": test_losses,
              "accuracy": accuracies, "version": torch.__version__}
    if check_path:
        final = read_safetensors(check_path)
        result["check_loss"], result["check_accuracy"] = torch_evaluate(
            torch_model(kind, {k: v for k, v in final.items() if k.startswith("model.")}),
            xtest, ytest, torch)
    return result


TUNED_GLIBC = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296"}
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"  # Debian's libjemalloc2


def torch_configs():
    configs = [("glibc defaults", {}), ("glibc, no trim or mmap", TUNED_GLIBC)]
    if os.path.exists(JEMALLOC):
        configs.append(("jemalloc", {"LD_PRELOAD": JEMALLOC}))
    return configs


def torch_child(kind, init, args, config, seed, final=None):
    """One PyTorch training in a fresh process under the allocator setting `config`; with
    `final`, it also evaluates ytape's final weights in that file."""
    name, env = config
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, "--child-init", init,
           "--epochs", str(args.epochs), "--threads", str(args.threads),
           "--seed", str(seed)] + (["--child-check", final] if final else [])
    start = time.perf_counter()
    child = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
    wall = time.perf_counter() - start
    if child.returncode != 0:
        sys.exit(f"PyTorch ({name}) failed ({child.returncode}): {' '.join(cmd)}\n"
                 f"{child.stderr.strip()}")
    result = json.loads(child.stdout.splitlines()[-1])
    result.update(config=name, process_s=wall, median_s=statistics.median(result["epoch_s"]))
    return result


def torch_runs(kind, init, final, args):
    """PyTorch under every allocator setting, each in a fresh process; the first also
    evaluates ytape's final weights (`final`)."""
    results = [torch_child(kind, init, args, config, args.seed, final if i == 0 else None)
               for i, config in enumerate(torch_configs())]
    return min(results, key=lambda r: r["median_s"]), results


# ---- ytape ------------------------------------------------------------------------------------

EPOCH_LINE = re.compile(r"^epoch (\d+)/(\d+): loss (\S+) \((\d+) steps, ([\d.]+) samples/s\); "
                        r"eval: loss (\S+), accuracy (\S+)$")


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr.strip()}")
    return result.stdout


def ytape_trace(ytape, kind, work):
    step = os.path.join(work, f"{kind}.step.json")
    init = os.path.join(work, f"{kind}.init.safetensors")
    evaluate = os.path.join(work, f"{kind}.eval.json")
    run([ytape, "trace", PROGRAM, "-f", "train_step", kind, f"opt_{kind}", "step", "x", "y",
         "-o", step, "--save-inputs", init])
    run([ytape, "trace", PROGRAM, "-f", "evaluate", kind, "xtest", "ytest", "-o", evaluate])
    # The pipeline's optimization passes, as scripts/train.sh runs them (the same bytes).
    for tape in (step, evaluate):
        run([ytape, "opt", tape, "-o", tape])
    return step, init, evaluate


def final_path(kind, work):
    return os.path.join(work, f"{kind}.final.safetensors")


def ytape_train(ytape, kind, step, init, evaluate, args, work, seed):
    cmd = [ytape, "train", step, "--init", init, "--data", TRAIN, "--epochs", str(args.epochs),
           "--seed", str(seed), "--eval", evaluate, "--eval-data", TEST,
           "--threads", str(args.threads), "-o", final_path(kind, work)]
    start = time.perf_counter()
    out = run(cmd)
    wall = time.perf_counter() - start
    times, losses, accuracies, test_losses = [], [], [], []
    for line in out.splitlines():
        m = EPOCH_LINE.match(line.strip())
        if m:
            steps, rate = int(m.group(4)), float(m.group(5))
            times.append(steps * BATCH / rate)
            losses.append(float(m.group(3)))
            test_losses.append(float(m.group(6)))
            accuracies.append(float(m.group(7)))
    if len(times) != args.epochs:
        sys.exit(f"ytape train printed {len(times)} epoch lines, not {args.epochs}:\n{out}")
    return {"epoch_s": times, "loss": losses, "test_loss": test_losses, "accuracy": accuracies,
            "process_s": wall, "median_s": statistics.median(times)}


# ---- report -----------------------------------------------------------------------------------

def cpu():
    name, flags = "unknown", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name == "unknown":
                name = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = value
    return name, "avx512f" in flags.split()


def last_mean(values, k=5):
    return statistics.mean(values[-k:])


def compare(kind, args, ytape, work):
    step, init, evaluate = ytape_trace(ytape, kind, work)
    y = ytape_train(ytape, kind, step, init, evaluate, args, work, args.seed)
    best, results = torch_runs(kind, init, final_path(kind, work), args)
    seeds = range(args.seed, args.seed + args.accuracy_seeds)
    best_config = next(c for c in torch_configs() if c[0] == best["config"])
    y_final = [y["accuracy"][-1]] + [
        ytape_train(ytape, kind, step, init, evaluate, args, work, s)["accuracy"][-1]
        for s in seeds[1:]]
    t_final = [best["accuracy"][-1]] + [
        torch_child(kind, init, args, best_config, s)["accuracy"][-1] for s in seeds[1:]]
    k = min(5, args.epochs)

    print(f"{kind.upper()}, {args.epochs} epochs of 46 steps of 32")
    print(f"  {'':<34} {'test acc %':>10} {f'last {k} mean':>12} {'train loss':>10} "
          f"{'ms/epoch':>9} {'min':>7} {'first':>7} {'whole run s':>11}")

    def line(label, r, note=""):
        return (f"  {label:<34} {100 * r['accuracy'][-1]:>10.2f} "
                f"{100 * last_mean(r['accuracy'], k):>12.2f} {r['loss'][-1]:>10.4f} "
                f"{1e3 * r['median_s']:>9.1f} {1e3 * min(r['epoch_s']):>7.1f} "
                f"{1e3 * r['epoch_s'][0]:>7.1f} {r['process_s']:>11.2f}{note}")

    print(line("ytape", y))
    for r in results:
        print(line(f"PyTorch, {r['config']}", r, "  <- fastest" if r is best else ""))
    ratio = y["median_s"] / best["median_s"]
    gap = abs(y["accuracy"][-1] - best["accuracy"][-1])
    gap_mean = abs(last_mean(y["accuracy"], k) - last_mean(best["accuracy"], k))
    gap_seeds = abs(statistics.mean(y_final) - statistics.mean(t_final))
    accuracy_met = gap_seeds <= ACCURACY_GOAL + 1e-9
    ratio_met = ratio <= RATIO_GOAL
    print(f"  final test accuracy, seed {args.seed}: ytape {100 * y['accuracy'][-1]:.2f}%, "
          f"PyTorch {100 * best['accuracy'][-1]:.2f}%: {100 * gap:.2f} points apart (last {k} "
          f"epochs' mean: {100 * gap_mean:.2f})")

    def percents(values):
        return " ".join(f"{100 * v:.2f}" for v in values)

    print(f"  final test accuracy, seeds {seeds[0]}-{seeds[-1]}: ytape {percents(y_final)} "
          f"(mean {100 * statistics.mean(y_final):.2f}%), PyTorch {percents(t_final)} (mean "
          f"{100 * statistics.mean(t_final):.2f}%): means {100 * gap_seeds:.2f} points apart; "
          f"goal within 1 point: {'met' if accuracy_met else 'NOT met'}")
    check = results[0]
    print(f"  ytape's final weights evaluated by PyTorch: test accuracy "
          f"{100 * check['check_accuracy']:.2f}%, loss {check['check_loss']:.6f} (ytape's own "
          f"evaluation: {100 * y['accuracy'][-1]:.2f}%, {y['test_loss'][-1]:.6f})")
    print(f"  time per epoch (median): ytape {1e3 * y['median_s']:.1f} ms, PyTorch at its best "
          f"{1e3 * best['median_s']:.1f} ms ({best['config']}): ratio {ratio:.2f}x; "
          f"goal <= {RATIO_GOAL}x: {'met' if ratio_met else 'NOT met'}")
    return {"kind": kind, "ratio": ratio, "accuracy_met": accuracy_met, "ratio_met": ratio_met,
            "version": best["version"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--models", default="cnn,mlp", help="comma-separated: cnn, mlp")
    parser.add_argument("--seed", type=int, default=1,
                        help="ytape train's --seed and PyTorch's torch.manual_seed (default 1)")
    parser.add_argument("--accuracy-seeds", type=int, default=5,
                        help="train both sides with this many seeds from --seed, untimed, and "
                        "judge the accuracy goal on the mean final accuracy (default 5)")
    parser.add_argument("--child", choices=("cnn", "mlp"), help=argparse.SUPPRESS)
    parser.add_argument("--child-init", help=argparse.SUPPRESS)
    parser.add_argument("--child-check", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one PyTorch training in a fresh process
        print(json.dumps(torch_train(args.child, args.child_init, args.epochs, args.threads,
                                     args.seed, args.child_check)))
        return
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not models or any(m not in ("cnn", "mlp") for m in models):
        parser.error(f"--models: a comma-separated list of cnn and mlp, not '{args.models}'")
    if args.epochs < 1 or args.threads < 1 or args.accuracy_seeds < 1:
        parser.error("--epochs, --threads and --accuracy-seeds must be at least 1")
    build = args.build if os.path.isabs(args.build) else os.path.join(ROOT, args.build)
    ytape = os.path.join(build, "cli", "ytape")
    if not os.path.exists(ytape):
        sys.exit(f"{ytape} not found: build first (scripts/build.sh release)")
    period = schedule_period()

    name, avx512 = cpu()
    print(f"CPU: {name} ({'with' if avx512 else 'without'} avx512f), {os.cpu_count()} cores; "
          f"{args.threads} threads; seed {args.seed}; load average before: "
          f"{os.getloadavg()[0]:.2f}")
    if args.epochs * (1500 // BATCH) != period:
        print(f"note: the learning rate follows digits.jl's schedule over {period} steps "
              f"({period // (1500 // BATCH)} epochs) on both sides, whatever --epochs")
    print()
    summary = []
    with tempfile.TemporaryDirectory(prefix="ytape-torch-train-") as work:
        for kind in models:
            summary.append(compare(kind, args, ytape, work))
            print()
    print(f"PyTorch {summary[0]['version']} at its fastest allocator setting; ytape from "
          f"{args.build}. ms/epoch: the median over the epochs of the training steps alone "
          "(ytape: 46 * 32 samples over the samples/s `ytape train` prints; PyTorch: each epoch's "
          "loop of shuffle, gather, shift, forward, backward and update), without evaluation or "
          "process start; min and first: the fastest and the first epoch; train loss: the last "
          "epoch's mean. whole run: ytape, the `ytape train` process "
          "(reading tapes and data, every step and evaluation); PyTorch, its child process "
          "(including starting Python and importing torch). Accuracy on the 297 test digits: "
          "one point is 3 digits; the two sides draw different shuffles, shifts and dropout "
          "masks from the same initial weights.")
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 minute; the run needs the machine "
          "to itself)")
    print("goals: " + "; ".join(
        f"{s['kind']}: accuracy within 1 point {'met' if s['accuracy_met'] else 'NOT met'}, "
        f"ratio {s['ratio']:.2f}x <= {RATIO_GOAL}x {'met' if s['ratio_met'] else 'NOT met'}"
        for s in summary))


if __name__ == "__main__":
    main()
