#!/usr/bin/python3
"""ytape against PyTorch on ResNet-18: the same weights give the same loss and gradients; timing.

Run by hand, never in CI (it needs Debian's python3-torch and python3-torchvision):

    bench/compare_torch.py [--threads 2] [--build build/release] [--check-only]
                           [--timing both|forward|train] [--tolerance 1e-4]
                           [--grad-tolerance 1e-3]

1. Weight exchange (always, a few seconds). samples/resnet18.jl is traced with
   `ytape trace ... -f loss model image`; its tape inputs are torchvision's
   resnet18().state_dict() parameters, named "model." + the torchvision name with indices
   1-based, shape reversed, the same bytes (running_mean, running_var and
   num_batches_tracked have no input: batch norm runs in training mode).
   - torchvision -> ytape: torchvision's resnet18 built with a fixed seed writes its
     parameters and an image to a safetensors file, `ytape run` runs the traced tape on it,
     and its loss (the sum of the 1000 logits) is compared with PyTorch's on the same
     weights and image (model.train(): batch statistics, as ytape).
   - ytape -> torchvision: the example values of `ytape trace --save-inputs` (the weights
     resnet18.jl draws, and its image) are loaded into torchvision's resnet18 and compared
     the same way.
   Both are also compared with PyTorch in float64, which shows how much of the difference
   is f32 rounding on either side. Fails (exit 1) if a relative difference of ytape and
   PyTorch exceeds --tolerance.
2. Gradients (always, some seconds more), at batch 1 and at batch 8 (where the
   Winograd convolutions run). `ytape grad --wrt model` of the tape traced at that batch,
   run on torchvision's weights and images, against torch.autograd (loss = output.sum(),
   gradients of the parameters only), PyTorch run with ytape's relu signs (see
   relu_signs): for every parameter the relative difference ||g_ytape - g_torch|| /
   ||g_torch||, the largest printed with the parameter's name, both sides also against
   torch.autograd in float64. Fails (exit 1) above --grad-tolerance.
3. Timing (unless --check-only): ResNet-18 at 224x224, batch 1 and 8, train-mode batch
   norm, printing the ratio ytape / PyTorch for time (median of repeated runs after a
   warm-up) and for the growth of the peak resident memory during the first run. Each
   measurement runs in a process of its own.
   - forward: PyTorch's torchvision resnet18, model.train() under torch.no_grad(); ytape's
     bench_runtime, which traces samples/resnet18.jl with an f32[224,224,3,N] image.
   - train (the training step, forward + backward): PyTorch's forward, loss =
     output.sum(), backward, gradients zeroed between runs (not timed); ytape's `ytape run
     --random --repeat N` of `ytape grad --wrt model` of the traced tape. ytape's memory is
     the peak of `ytape run --random` (one run) less the peak of the same command on a tape
     with the same inputs and no ops: what the run itself allocates, as PyTorch's growth.

PyTorch runs in turn with glibc's allocator defaults, with glibc told never to trim or
unmap (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at 4 GiB), and with Debian's
jemalloc preloaded if libjemalloc2 is installed; each is printed, and ytape is compared with
the fastest. The training step's rate is also given as a share of the machine's f32 FMA peak
(bench_peak, for the widest instruction set the processor has).

PyTorch 1.13 from Debian runs its convolutions through oneDNN (MKL-DNN) and its matmul
through a generic reference BLAS; ytape runs f32 convolutions through the same oneDNN.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "samples", "resnet18.jl")
TORCH_ONLY = ("running_mean", "running_var", "num_batches_tracked")  # buffers, not inputs

# ---- safetensors: the format is small enough to read and write here ---------------------

DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "BOOL": "?"}


def write_safetensors(path, tensors):
    """tensors: name -> numpy array (row-major; its shape is the reversed ytape shape)."""
    import numpy as np

    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        shape = list(np.shape(array))  # before ascontiguousarray, which makes a scalar 1-d
        array = np.ascontiguousarray(array)
        dtype = next(k for k, v in DTYPES.items() if np.dtype(v) == array.dtype)
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def read_safetensors(path):
    import numpy as np

    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[8 + n + begin:8 + n + end], dtype=DTYPES[entry["dtype"]])
        out[name] = array.reshape(entry["shape"]).copy()
    return out


# ---- names: torchvision (0-based) <-> ytape (1-based, under "model.") ------------------------

def ytape_name(torch_name):
    return "model." + ".".join(str(int(p) + 1) if p.isdigit() else p for p in torch_name.split("."))


def torch_name(ytape_name):
    assert ytape_name.startswith("model."), ytape_name
    return ".".join(str(int(p) - 1) if p.isdigit() else p for p in ytape_name[6:].split("."))


def tape_inputs(tape_path):
    """name -> ytape shape (column-major, as the tape declares it) of the tape's inputs."""
    with open(tape_path) as f:
        tape = json.load(f)
    inputs = {}
    for op in tape["ops"]:
        if op["op"] == "input":
            dtype, dims = re.fullmatch(r"(\w+)\[([\d,]*)\]", op["type"][0]).groups()
            assert dtype == "f32", op
            inputs[op["name"]] = [int(d) for d in dims.split(",") if d]
    return inputs


# ---- weight exchange -------------------------------------------------------------------------

def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr.strip()}")
    return result.stdout


def torch_losses(model, image):
    """The loss in train-mode batch norm, in float32 and in float64 (a reference for both)."""
    import copy

    import torch

    with torch.no_grad():
        f64 = copy.deepcopy(model).double().train()
        f32 = model.train()
        return f32(image).sum().item(), f64(image.double()).sum().item()


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def seeded_model(batch=1):
    """torchvision's resnet18 and `batch` images in [-1, 1), from a fixed seed."""
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None)
    # torchvision initializes batch norm to scale 1, bias 0; other values test the mapping.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            torch.nn.init.uniform_(m.weight, 0.5, 1.5)
            torch.nn.init.uniform_(m.bias, -0.5, 0.5)
    return model, torch.rand(batch, 3, 224, 224) * 2 - 1


def exchange(ytape, tolerance, threads, work):
    """Checks the loss both ways, ytape -> PyTorch and PyTorch -> ytape."""
    import torch
    import torchvision

    torch.set_num_threads(threads)
    tape = os.path.join(work, "resnet18.json")
    examples = os.path.join(work, "resnet18_examples.safetensors")
    run([ytape, "trace", PROGRAM, "-f", "loss", "model", "image", "-o", tape, "--save-inputs",
         examples])
    inputs = tape_inputs(tape)

    # The tape's inputs are torchvision's parameters and the image, one to one, shapes reversed.
    reference = torchvision.models.resnet18(weights=None)
    params = {ytape_name(k): v for k, v in reference.state_dict().items()
              if not k.endswith(TORCH_ONLY)}
    expected = {k: list(reversed(v.shape)) for k, v in params.items()}
    expected["image"] = [224, 224, 3, 1]
    if inputs != expected:
        missing = sorted(set(expected) - set(inputs))
        extra = sorted(set(inputs) - set(expected))
        shapes = sorted(k for k in set(inputs) & set(expected) if inputs[k] != expected[k])
        sys.exit(f"tape inputs differ from torchvision's parameters: not in the tape {missing}, "
                 f"not in torchvision {extra}, other shapes {shapes}")
    print(f"tape inputs: {len(params)} torchvision parameters (shapes reversed) + image; "
          f"{sum(v.numel() for v in params.values())} weights")

    results = []

    # torchvision -> ytape: a seeded torchvision model and image, run by ytape.
    model, image = seeded_model()
    weights = {ytape_name(k): v.numpy() for k, v in model.state_dict().items()
               if not k.endswith(TORCH_ONLY)}
    weights["image"] = image.numpy()
    given = os.path.join(work, "torch_weights.safetensors")
    write_safetensors(given, weights)
    out = os.path.join(work, "out_torch_weights.safetensors")
    run([ytape, "run", tape, "--inputs", given, "-o", out, "--threads", str(threads)])
    y = float(read_safetensors(out)["out"])
    t32, t64 = torch_losses(model, image)
    results.append(("torchvision weights -> ytape", y, t32, t64))

    # ytape -> torchvision: resnet18.jl's example weights and image, loaded into torchvision.
    values = read_safetensors(examples)
    model = torchvision.models.resnet18(weights=None)
    state = {torch_name(k): torch.from_numpy(v) for k, v in values.items() if k != "image"}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not k.endswith(TORCH_ONLY) for k in missing):
        sys.exit(f"ytape's weights do not load into torchvision: missing {missing}, "
                 f"unexpected {unexpected}")
    image = torch.from_numpy(values["image"])
    out = os.path.join(work, "out_ytape_weights.safetensors")
    run([ytape, "run", tape, "--inputs", examples, "-o", out, "--threads", str(threads)])
    y = float(read_safetensors(out)["out"])
    t32, t64 = torch_losses(model, image)
    results.append(("ytape weights -> torchvision", y, t32, t64))

    print(f"{'ResNet-18 loss, batch 1':<30} {'ytape':>14} {'PyTorch f32':>14} {'rel diff':>9}   "
          f"{'vs PyTorch f64: ytape':>21} {'PyTorch':>9}")
    ok = True
    for label, y, t32, t64 in results:
        d = rel(y, t32)
        ok = ok and d <= tolerance
        print(f"{label:<30} {y:>14.7g} {t32:>14.7g} {d:>9.2e}   {rel(y, t64):>21.2e} "
              f"{rel(t32, t64):>9.2e}{'' if d <= tolerance else '   > tolerance'}")
    print(f"tolerance: relative difference ytape / PyTorch f32 <= {tolerance:g}")
    return ok


# ---- gradients -------------------------------------------------------------------------------
#
# A relu input within f32 rounding of 0 can have one sign in ytape and the other in PyTorch;
# the cotangent element it passes or stops then moves a batch-norm bias gradient (a sum of a
# few hundred elements) by up to 1e-2 relative. That is no error of either side, so the
# check runs PyTorch with ytape's relu signs (read from the tape's relu inputs), and reports
# how many inputs differ and what PyTorch's own signs give. The signs and the gradients
# compared come from one run (an output asked for changes no other: the executor copies
# blocked outputs plain after computing them as it would without them).

def run_with_relu_signs(ytape, grad_tape, inputs, threads, work):
    """One run of the gradient tape that also returns its relu inputs: its outputs, and the
    signs (x > 0) of the relu inputs in the tape's order as torch bool tensors."""
    import torch

    with open(grad_tape) as f:
        tape = json.load(f)
    relus = [op["args"][0] for op in tape["ops"] if op["op"] == "relu"]
    tape["outputs"] += [{"var": v, "name": f"relu_input.{i}"} for i, v in enumerate(relus)]
    more = grad_tape.replace(".json", "_relu_inputs.json")
    with open(more, "w") as f:
        json.dump(tape, f)
    out = more.replace(".json", ".safetensors")
    run([ytape, "run", more, "--inputs", inputs, "-o", out, "--threads", str(threads)])
    values = read_safetensors(out)
    return values, [torch.from_numpy(values[f"relu_input.{i}"] > 0) for i in range(len(relus))]


def torch_gradients(model, image, signs=None):
    """Parameter name -> gradient of output.sum() in train mode, as float64 numpy arrays, and
    with `signs` the number of relu inputs whose sign differs from them: every relu then
    passes exactly the elements its sign says (call i takes signs[i])."""
    import copy

    import torch

    class ReluWithSigns(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = self.differ = 0

        def forward(self, x):
            keep = signs[self.calls]
            self.calls += 1
            self.differ += int(((x > 0) != keep).sum())
            return x * keep.to(x.dtype)

    model = copy.deepcopy(model).train()
    relu = ReluWithSigns()
    if signs is not None:  # torchvision's resnet18 calls model.relu, then each block's twice
        model.relu = relu
        for layer in (model.layer1, model.layer2, model.layer3, model.layer4):
            for block in layer:
                block.relu = relu
    model(image).sum().backward()
    if signs is not None and relu.calls != len(signs):
        sys.exit(f"PyTorch's resnet18 calls relu {relu.calls} times, ytape's tape has "
                 f"{len(signs)} relu ops")
    return {k: p.grad.double().numpy() for k, p in model.named_parameters()}, relu.differ


def gradients(ytape, tolerance, threads, work, batch):
    """`ytape grad --wrt model` on seeded_model's weights and images against torch.autograd."""
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    model, image = seeded_model(batch)
    tape = os.path.join(work, f"resnet18_b{batch}.json")
    grad_tape = os.path.join(work, f"resnet18_b{batch}_grad.json")
    weights = os.path.join(work, f"torch_weights_b{batch}.safetensors")
    run([ytape, "trace", PROGRAM, "-f", "loss", "model", f"f32[224,224,3,{batch}]", "-o", tape])
    values = {ytape_name(k): v.numpy() for k, v in model.state_dict().items()
              if not k.endswith(TORCH_ONLY)}
    values["image"] = image.numpy()
    write_safetensors(weights, values)
    run([ytape, "grad", tape, "--wrt", "model", "-o", grad_tape])
    outputs, signs = run_with_relu_signs(ytape, grad_tape, weights, threads, work)
    ours = {torch_name(k[len("grad."):]): v.astype(np.float64)
            for k, v in outputs.items() if k.startswith("grad.")}

    own32, _ = torch_gradients(model, image)
    t32, differ32 = torch_gradients(model, image, signs)
    t64, differ64 = torch_gradients(model.double(), image.double(), signs)
    if set(ours) != set(t32) or any(ours[k].shape != t32[k].shape for k in t32):
        sys.exit(f"ytape's gradients differ from torchvision's parameters: "
                 f"{sorted(set(ours) ^ set(t32))}, shapes "
                 f"{sorted(k for k in set(ours) & set(t32) if ours[k].shape != t32[k].shape)}")

    def rel_norm(a, b):
        return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))

    rows = sorted(((rel_norm(ours[k], t32[k]), rel_norm(ours[k], t64[k]),
                    rel_norm(t32[k], t64[k]), k) for k in t32), reverse=True)
    print(f"{'ResNet-18 gradients, batch ' + str(batch):<34} {'ytape/torch':>11}   "
          f"{'vs PyTorch f64: ytape':>21} {'PyTorch':>9}")
    for d, y64, t, name in rows[:5]:
        print(f"{name:<34} {d:>11.2e}   {y64:>21.2e} {t:>9.2e}")
    print(f"{'largest of ' + str(len(rows)) + ' parameters':<34} {rows[0][0]:>11.2e}   "
          f"{max(r[1] for r in rows):>21.2e} {max(r[2] for r in rows):>9.2e}")
    own = max((rel_norm(ours[k], own32[k]), k) for k in own32)
    print(f"PyTorch runs with ytape's relu signs: {differ32} of {sum(x.numel() for x in signs)} "
          f"relu inputs have the other sign in PyTorch f32 ({differ64} in f64); with its own "
          f"signs the largest difference is {own[0]:.2e} ({own[1]})")
    worst = rows[0]
    ok = worst[0] <= tolerance
    print(f"largest relative difference ||g_ytape - g_torch|| / ||g_torch||: {worst[0]:.2e} "
          f"({worst[3]}); tolerance {tolerance:g}{'' if ok else ': exceeded'}")
    return ok


# ---- timing ----------------------------------------------------------------------------------

def torch_forward(batch, threads, repeat):
    import torch
    import torchvision

    torch.set_num_threads(threads)
    model = torchvision.models.resnet18(weights=None)
    model.train()
    model, image = memory_format(model, torch.rand(batch, 3, 224, 224) * 2 - 1)
    with torch.no_grad():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        model(image).sum()
        growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            model(image).sum()
            times.append((time.perf_counter() - start) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "rss_growth_mb": growth,
            "version": torch.__version__, "mkldnn": torch.backends.mkldnn.is_available()}


def ytape_forward(build, batch, threads):
    out = subprocess.run([os.path.join(build, "bench", "bench_runtime"), "--json", "--threads",
                          str(threads), f"resnet18-b{batch}"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.splitlines()[-1])


def repeats(batch):
    return 10 if batch == 1 else 5


# PyTorch is timed under each allocator setting it can run with, each in a process of its
# own, and ytape is compared with the fastest. With glibc's defaults every large tensor
# PyTorch frees goes back to the kernel and the next one is faulted in again; on these
# virtual machines the faults cost more than the math, so the default is not PyTorch at its
# best, and a ratio against it would flatter ytape.
TUNED_GLIBC = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296"}
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"  # Debian's libjemalloc2


# PyTorch's convolutions on CPU are faster in the channels_last memory format for some
# shapes (its recommended setting): each allocator setting is timed in both formats.
CHANNELS_LAST = {"YTAPE_BENCH_CHANNELS_LAST": "1"}


def torch_configs():
    configs = [("glibc defaults", {}), ("glibc, no trim or mmap", TUNED_GLIBC)]
    if os.path.exists(JEMALLOC):
        configs.append(("jemalloc", {"LD_PRELOAD": JEMALLOC}))
    return configs + [(name + ", channels_last", {**env, **CHANNELS_LAST}) for name, env in configs]


def memory_format(model, image):
    """The model and image in the format the environment asks (torch_configs)."""
    import torch

    if os.environ.get("YTAPE_BENCH_CHANNELS_LAST") != "1":
        return model, image
    return (model.to(memory_format=torch.channels_last),
            image.contiguous(memory_format=torch.channels_last))


def torch_child(kind, batch, threads, env):
    """One PyTorch measurement, in a fresh process of its own with `env` added."""
    child = subprocess.run([sys.executable, __file__, "--threads", str(threads),
                            "--child-" + kind, str(batch)], check=True, capture_output=True,
                           text=True, env={**os.environ, **env}).stdout
    return json.loads(child)


def torch_best(kind, batch, threads):
    """PyTorch under every allocator setting: the fastest (by median) and all of them."""
    results = []
    for name, env in torch_configs():
        result = torch_child(kind, batch, threads, env)
        result["config"] = name
        results.append(result)
    return min(results, key=lambda r: r["median_ms"]), results


def config_rows(results, best):
    return "\n".join(f"  PyTorch, {r['config']:<38} {r['median_ms']:>9.1f} ms (min {r['min_ms']:.1f})"
                     f"{'  <- fastest' if r is best else ''}" for r in results)


def row(label, y, t):
    return (f"{label:<26} {y['median_ms']:>9.1f} {t['median_ms']:>9.1f} "
            f"{y['median_ms'] / t['median_ms']:>6.2f}   {y['rss_growth_mb']:>8.1f} "
            f"{t['rss_growth_mb']:>8.1f} {y['rss_growth_mb'] / max(t['rss_growth_mb'], 0.1):>6.2f}")


def header(title):
    return (f"{title:<26} {'ytape ms':>9} {'torch ms':>9} {'ratio':>6}   {'ytape MB':>8} "
            f"{'torch MB':>8} {'ratio':>6}")


def timing(build, threads):
    print(header("ResNet-18 forward"))
    for batch in (1, 8):
        t, configs = torch_best("forward", batch, threads)
        y = ytape_forward(build, batch, threads)
        print(row(f"batch {batch}, train-mode BN", y, t))
        print(config_rows(configs, t))
    print(f"PyTorch {t['version']} (oneDNN convolutions: {t['mkldnn']}) at its fastest allocator "
          f"setting, {threads} threads; ytape from {build} (the tape traced from "
          "samples/resnet18.jl). ratio < 1: ytape is faster / uses less. Memory: growth of the "
          "peak resident set during the first forward.")


# ---- training step ---------------------------------------------------------------------------

def torch_train(batch, threads, repeat):
    import torch
    import torchvision

    torch.set_num_threads(threads)
    model = torchvision.models.resnet18(weights=None)
    model.train()
    model, image = memory_format(model, torch.rand(batch, 3, 224, 224) * 2 - 1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model(image).sum().backward()
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    times = []
    for _ in range(repeat):
        model.zero_grad()
        start = time.perf_counter()
        model(image).sum().backward()
        times.append((time.perf_counter() - start) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "rss_growth_mb": growth}


def peak_mb(cmd, work):
    """The peak resident memory of `cmd`'s process, in MB. It starts from this process's
    peak (inherited through fork), which stays far below what is measured here."""
    with open(os.path.join(work, "stderr.txt"), "w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err.read().strip()}")
    return usage.ru_maxrss / 1024


def ytape_train(ytape, batch, threads, work):
    """`ytape grad --wrt model` of the traced tape at `batch`, run on made-up inputs."""
    tape = os.path.join(work, f"resnet18_b{batch}.json")
    grad_tape = os.path.join(work, f"resnet18_b{batch}_grad.json")
    run([ytape, "trace", PROGRAM, "-f", "loss", "model", f"f32[224,224,3,{batch}]", "-o", tape])
    run([ytape, "grad", tape, "--wrt", "model", "-o", grad_tape])
    # The same inputs and nothing else: what loading the tape and making up its inputs take.
    with open(grad_tape) as f:
        empty = json.load(f)
    empty["ops"] = [op for op in empty["ops"] if op["op"] == "input"]
    empty["outputs"] = [{"var": empty["ops"][0]["out"][0], "name": "out"}]
    empty_tape = os.path.join(work, f"resnet18_b{batch}_inputs.json")
    with open(empty_tape, "w") as f:
        json.dump(empty, f)

    base = [ytape, "run", "--random", "--threads", str(threads)]
    # One run: `ytape run --repeat` keeps the last run's outputs while the next one runs.
    growth = peak_mb(base + [grad_tape], work) - peak_mb(base + [empty_tape], work)
    # The first run allocates the buffers: one more than PyTorch's timed runs, as its warm-up.
    out = run(base + [grad_tape, "--repeat", str(repeats(batch) + 1)])
    median, best = re.search(r"time: median ([\d.]+) ms over \d+ runs \(min ([\d.]+)",
                             out).groups()
    return {"median_ms": float(median), "min_ms": float(best), "rss_growth_mb": growth}


def step_flops(ytape, grad_tape):
    """FLOPs of one run of a tape, from `ytape stats`."""
    out = run([ytape, "stats", grad_tape])
    return sum(int(m.group(1).replace(",", ""))
               for m in re.finditer(r"^\S+\s+\d+\s+([\d,]+)\s+[\d.]+%$", out, re.M))


def fma_peak(build, threads):
    """bench_peak's f32 FMA peak at `threads`: (instruction set, GFLOP/s, cpu name)."""
    out = run([os.path.join(build, "bench", "bench_peak"), "--json", "--threads", str(threads)])
    peak = json.loads(out)
    isa = "avx512" if "avx512" in peak else "avx2"
    return isa, peak[isa], peak["cpu"]


def training(build, threads):
    ytape = os.path.join(build, "cli", "ytape")
    isa, peak, cpu = fma_peak(build, threads)
    print(header("ResNet-18 training step"))
    with tempfile.TemporaryDirectory(prefix="ytape-torch-") as work:
        for batch in (1, 8):
            t, configs = torch_best("train", batch, threads)
            y = ytape_train(ytape, batch, threads, work)
            print(row(f"batch {batch}, train-mode BN", y, t))
            print(config_rows(configs, t))
            flops = step_flops(ytape, os.path.join(work, f"resnet18_b{batch}_grad.json"))
            rate = flops / y["min_ms"] * 1e-6
            print(f"  ytape: {flops / 1e9:.2f} GFLOP per step, {rate:.0f} GFLOP/s at its fastest "
                  f"run = {100 * rate / peak:.0f}% of the {isa} FMA peak (a Winograd "
                  "convolution's work counted as the direct one's)")
    print(f"{threads} threads on {cpu}; FMA peak {peak:.0f} GFLOP/s ({isa}, bench_peak). Forward, "
          "loss = sum of the logits, gradients of the parameters (PyTorch: backward, gradients "
          "zeroed between runs; ytape: `ytape run --repeat` of `ytape grad --wrt model`). Memory: "
          "growth of the peak resident set during the first step (ytape: `ytape run` less the "
          "same inputs with no ops).")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--check-only", "--exchange-only", action="store_true",
                        help="check the weight exchange and the gradients, skip the timing")
    parser.add_argument("--timing", choices=("both", "forward", "train"), default="both",
                        help="what to time after the checks (default both)")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest relative loss difference ytape / PyTorch (default 1e-4)")
    parser.add_argument("--grad-tolerance", type=float, default=1e-3,
                        help="largest relative difference ||g_ytape - g_torch|| / ||g_torch|| of "
                        "a parameter's gradient (default 1e-3)")
    parser.add_argument("--child-forward", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-train", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_forward:  # one PyTorch measurement in a fresh process
        print(json.dumps(torch_forward(args.child_forward, args.threads,
                                       repeats(args.child_forward))))
        return
    if args.child_train:
        print(json.dumps(torch_train(args.child_train, args.threads, repeats(args.child_train))))
        return
    if args.check_only:
        ytape = os.path.join(args.build, "cli", "ytape")
        with tempfile.TemporaryDirectory(prefix="ytape-torch-") as work:
            same_loss = exchange(ytape, args.tolerance, args.threads, work)
            same_grads = True
            for batch in (1, 8):
                print()
                same_grads = gradients(ytape, args.grad_tolerance, args.threads, work,
                                       batch) and same_grads
        if not (same_loss and same_grads):
            sys.exit("ytape and PyTorch disagree beyond the tolerance")
        return
    # The checks run in a process of their own and this one never imports torch: a process
    # started from this one inherits its peak resident set (ru_maxrss survives fork and exec),
    # which would hide the memory growth the timing children measure.
    checked = subprocess.run([sys.executable, __file__, "--check-only", "--build", args.build,
                              "--threads", str(args.threads), "--tolerance", str(args.tolerance),
                              "--grad-tolerance", str(args.grad_tolerance)])
    if args.timing in ("both", "forward"):
        print()
        timing(args.build, args.threads)
    if args.timing in ("both", "train"):
        print()
        training(args.build, args.threads)
    if checked.returncode != 0:
        sys.exit(checked.returncode)


if __name__ == "__main__":
    main()
