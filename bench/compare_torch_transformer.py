#!/usr/bin/python3
"""ytape against PyTorch on the GPT of samples/gpt.jl: the same weights give the same loss
and gradients; the forward pass and the training step timed side by side.

Run by hand, never in CI (it needs Debian's python3-torch and python3-numpy):

    bench/compare_torch_transformer.py [--threads 2] [--build build/release]
                                       [--configs sample,large] [--rounds 5] [--check-only]

Configurations: `sample` is samples/gpt.jl as it is (width 128, 4 heads, 2 layers,
context 64, batch 32); `large` is 6 layers, width 512, 8 heads, context 256, batch 8. For
each, samples/gpt.jl with those numbers is traced (`train_step`: forward, gradient and
AdamW's update; `next_character_loss`: the forward pass and the loss) and PyTorch builds
the same model (explicit q, k, v and output projections, causal mask, tanh GELU,
pre-norm blocks) from the example weights of the trace. ytape's gradient tapes go through
`ytape remat --policy all-but-elementwise` (the values a few elementwise ops compute again
are not kept for the backward: GELU's and LayerNorm's intermediates), as a user short of
memory runs them; the step's FLOPs are counted without what that recomputes. The step
without it is timed too ("nothing recomputed"), against the same PyTorch step.

1. Check: the loss and every parameter's gradient (`ytape grad --wrt model` of the loss
   tape) against PyTorch's on the same weights and a random batch; the largest relative
   difference ||g_ytape - g_torch|| / ||g_torch|| is printed and fails the run (exit 1)
   above --tolerance (1e-5).
2. ONNX: PyTorch's model and loss exported with torch.onnx.export, imported with `ytape
   import`, differentiated with `ytape grad`: its loss and gradients checked the same way
   (the exporter keeps one initializer for parameters of equal values: its gradient is
   compared with the sum of theirs), its forward
   (the imported tape) and forward + backward (the gradient tape) timed.
3. Timing (unless --check-only): in rounds, each side in a process of its own, alternating
   (PyTorch's times are noisy): ytape's `ytape run --repeat N` (the minimum), PyTorch's N
   runs after a warm-up (the minimum), with glibc told never to trim or unmap
   (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at 4 GiB, PyTorch's best on these
   machines) and AdamW with and without foreach (the faster). The minimum over rounds is
   compared. The step's rate is given as a share of the machine's f32 FMA peak
   (bench_peak), its FLOPs from `ytape stats`. ytape's step runs as a training loop does
   (`run --carry`: each run goes on from the last one's weights and optimizer state, its
   new ones written over them), as PyTorch's does. Memory: the growth of the peak resident
   set over a process that holds the same weights and optimizer state and runs nothing
   (ytape: a tape that only reads its inputs; PyTorch: the process before its first step,
   AdamW's state made as its first step makes it).
"""
import argparse
import json
import os
import re
import resource
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "samples", "gpt.jl")
CONFIGS = {
    "sample": dict(width=128, heads=4, layers=2, context=64, batch=32),
    "large": dict(width=512, heads=8, layers=6, context=256, batch=8),
}

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import (TUNED_GLIBC, fma_peak, read_safetensors, run,  # noqa: E402
                           step_flops, write_safetensors)


# What ytape's gradient tapes keep for their backward: all but the values a few elementwise
# ops compute again (GELU's and LayerNorm's intermediates; docs/remat.md).
REMAT = ["--policy", "all-but-elementwise"]


def run_measured(cmd, env=None):
    """(stdout, peak resident set of the process in MB), the peak by GNU time (Debian's
    `time`): a child forked from this process would count its size, torch included (the
    kernel keeps the largest across exec)."""
    with tempfile.NamedTemporaryFile("r") as peak:
        out = run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd], env=env)
        return out, int(peak.read().split()[-1]) / 1024


# ---- the model on both sides -----------------------------------------------------------------

def program_for(config, work):
    """samples/gpt.jl with the configuration's numbers, in `work`."""
    with open(PROGRAM, encoding="utf-8") as f:
        text = f.read()
    c = config
    for old, new in ((r"^const context = \d+$", f"const context = {c['context']}"),
                     (r"^const batch = \d+$", f"const batch = {c['batch']}"),
                     (r"width=\d+, heads=\d+, layers=\d+",
                      f"width={c['width']}, heads={c['heads']}, layers={c['layers']}")):
        text, count = re.subn(old, new, text, flags=re.M)
        if count != 1:
            sys.exit(f"samples/gpt.jl: no line matching {old!r}: update this script")
    path = os.path.join(work, "gpt.jl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def torch_model(config, vocab, weights):
    """PyTorch's GPT with ytape's example weights (ytape name -> row-major array)."""
    import torch
    import torch.nn.functional as F

    c = config
    d, h = c["width"], c["heads"]

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
            self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x, mask):
            b, t, _ = x.shape
            y = self.norm1(x)
            q, k, v = (p(y).view(b, t, h, d // h).transpose(1, 2) for p in (self.q, self.k, self.v))
            scores = (q / (d // h) ** 0.5) @ k.transpose(-2, -1)
            a = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh"))

    class GPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.token = torch.nn.Embedding(vocab, d)
            self.position = torch.nn.Embedding(c["context"], d)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(c["layers"]))
            self.norm, self.head = torch.nn.LayerNorm(d), torch.nn.Linear(d, vocab)

        def forward(self, ids, targets):
            t = ids.shape[1]
            x = self.token(ids) + self.position.weight[:t]
            mask = torch.ones(t, t, dtype=torch.bool).triu(1)
            for block in self.blocks:
                x = block(x, mask)
            logits = self.head(self.norm(x))
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    model = GPT()
    state = model.state_dict()
    for name in state:
        state[name].copy_(torch.from_numpy(weights[ytape_name(name)]).reshape(state[name].shape)
                          if "token" in name or "position" in name or "norm" in name
                          or name.endswith("bias")
                          else torch.from_numpy(weights[ytape_name(name)]).T)
    return model


RENAME = {"q": "attention.q_proj", "k": "attention.k_proj", "v": "attention.v_proj",
          "o": "attention.out_proj", "fc1": "mlp.layers.1", "fc2": "mlp.layers.2"}


def ytape_name(torch_name):
    """PyTorch's parameter name -> the step tape's input: blocks 1-based, Flux's names."""
    parts = torch_name.split(".")
    if parts[0] == "blocks":
        parts[1] = str(int(parts[1]) + 1)
        parts[2] = RENAME.get(parts[2], parts[2])
    if parts[-1] == "weight" and ("norm" in parts[-2] or parts[-2] == "norm"):
        parts[-1] = "scale"
    return "model." + ".".join(parts)


# ---- check -----------------------------------------------------------------------------------

def check(ytape, config, work, tolerance):
    """Traces the configuration; compares loss and gradients. Returns the files made."""
    import numpy as np
    import torch

    program = program_for(config, work)
    files = {k: os.path.join(work, k) for k in
             ("step.json", "step_remat.json", "loss.json", "grad.json", "grad_remat.json",
              "init.safetensors", "batch.safetensors")}
    run([ytape, "trace", program, "-f", "train_step", "model", "opt_state", "step", "tokens",
         "-o", files["step.json"], "--save-inputs", files["init.safetensors"]])
    run([ytape, "opt", files["step.json"], "-o", files["step.json"]])
    run([ytape, "trace", program, "-f", "next_character_loss", "model", "tokens", "-o",
         files["loss.json"]])
    run([ytape, "grad", files["loss.json"], "--wrt", "model", "-o", files["grad.json"]])
    run([ytape, "opt", files["grad.json"], "-o", files["grad.json"]])
    run([ytape, "remat", files["step.json"], *REMAT, "--forward", "out.loss", "-o",
         files["step_remat.json"]])
    run([ytape, "remat", files["grad.json"], *REMAT, "-o", files["grad_remat.json"]])
    weights = read_safetensors(files["init.safetensors"])
    del weights["tokens"]  # the example batch: the random one below replaces it
    write_safetensors(files["init.safetensors"], weights)
    vocab = weights["model.token.weight"].shape[0]
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, vocab + 1, size=(config["batch"], config["context"] + 1))
    write_safetensors(files["batch.safetensors"], {"tokens": tokens.astype(np.int64)})
    model = torch_model(config, vocab, weights)
    ids = torch.from_numpy(tokens - 1)
    loss = model(ids[:, :-1], ids[:, 1:])
    loss.backward()
    out = os.path.join(work, "grads.safetensors")
    run([ytape, "run", files["grad_remat.json"], "--inputs", files["init.safetensors"],
         files["batch.safetensors"], "--skip-extra", "-o", out])
    mine = read_safetensors(out)
    loss_diff = abs(float(mine["out"]) - loss.item()) / abs(loss.item())
    # The key projection's bias has a gradient of zero (a shift of every key's score for a
    # query cancels in the softmax): rounding noise on both sides, measured against a
    # thousandth of the largest gradient rather than against itself.
    floor = 1e-3 * max(np.linalg.norm(p.grad.numpy()) for p in model.parameters())
    worst = (0.0, "")
    for name, p in model.named_parameters():
        theirs = p.grad.numpy()
        ours = mine["grad." + ytape_name(name)]
        if p.dim() == 2 and "token" not in name and "position" not in name:
            ours = ours.T  # a Linear's (out, in) is a Dense's, column-major
        worst = max(worst, (np.linalg.norm(ours - theirs) / max(np.linalg.norm(theirs), floor), name))
    print(f"  loss {loss.item():.6f} (ytape {float(mine['out']):.6f}, relative difference "
          f"{loss_diff:.1e}); gradients of {len(list(model.parameters()))} parameters, largest "
          f"relative difference {worst[0]:.1e} ({worst[1]})")
    if loss_diff > tolerance or worst[0] > tolerance:
        sys.exit(f"  the difference is above the tolerance {tolerance}")
    return files, model, ids


def onnx_files(ytape, model, ids, work, tolerance):
    """The model exported to ONNX, imported, and its gradient tape; the imported loss and
    gradients checked against PyTorch's (the model's gradients from check()). Returns the
    tapes' paths."""
    import torch

    path = os.path.join(work, "gpt.onnx")
    torch.onnx.export(model, (ids[:, :-1], ids[:, 1:]), path, input_names=["ids", "targets"],
                      output_names=["loss"], opset_version=14, do_constant_folding=False)
    tape, weights = os.path.join(work, "onnx.json"), os.path.join(work, "onnx.safetensors")
    grad = os.path.join(work, "onnx_grad.json")
    run([ytape, "import", path, "-o", tape, "--weights", weights])
    run([ytape, "grad", tape, "-o", grad])
    run([ytape, "opt", grad, "-o", grad])
    run([ytape, "remat", grad, *REMAT, "-o", grad.replace(".json", "_remat.json")])
    grad = grad.replace(".json", "_remat.json")
    import numpy as np
    batch = os.path.join(work, "onnx_batch.safetensors")
    write_safetensors(batch, {"ids": ids[:, :-1].numpy().astype(np.int64),
                              "targets": ids[:, 1:].numpy().astype(np.int64)})
    out = run([ytape, "run", tape, "--inputs", weights, batch])
    theirs = model(ids[:, :-1], ids[:, 1:]).item()
    mine = float(re.search(r"^loss f32\[\] (\S+)", out, re.M).group(1))
    grads = os.path.join(work, "onnx_grads.safetensors")
    run([ytape, "run", grad, "--inputs", weights, batch, "-o", grads])
    ours = read_safetensors(grads)
    # ONNX's weights keep PyTorch's names and (row-major) shapes, but the exporter keeps
    # one initializer of parameters that hold the same values (the example weights'
    # LayerNorm scales, biases of one shape): its gradient is the sum of theirs.
    shared = {}
    for name, p in model.named_parameters():
        shared.setdefault((tuple(p.shape), p.detach().numpy().tobytes()), []).append((name, p))
    floor = 1e-3 * max(np.linalg.norm(p.grad.numpy()) for p in model.parameters())
    worst, compared = (0.0, ""), 0
    for group in shared.values():
        kept = [name for name, _ in group if "grad." + name in ours]
        if len(kept) != 1:
            sys.exit(f"  ONNX: no single gradient for the parameters {[n for n, _ in group]}")
        theirs_g = sum(p.grad.numpy() for _, p in group)
        g, compared = ours["grad." + kept[0]].reshape(theirs_g.shape), compared + len(group)
        diff = np.linalg.norm(g - theirs_g) / max(np.linalg.norm(theirs_g), floor)
        worst = max(worst, (diff, kept[0]))
    loss_diff = abs(mine - theirs) / abs(theirs)
    print(f"  ONNX: imported loss {mine:.6f}, PyTorch's {theirs:.6f} (relative difference "
          f"{loss_diff:.1e}); gradients of {compared} parameters ({len(shared)} initializers), "
          f"largest relative difference {worst[0]:.1e} ({worst[1]})")
    if loss_diff > tolerance or worst[0] > tolerance:
        sys.exit(f"  the difference is above the tolerance {tolerance}")
    return {"forward": (tape, [weights, batch]), "step": (grad, [weights, batch])}


# ---- timing ----------------------------------------------------------------------------------

def noop_tape(tape, work):
    """A tape with `tape`'s inputs that computes nothing: the baseline of ytape's memory."""
    with open(tape) as f:
        data = json.load(f)
    inputs = [op for op in data["ops"] if op["op"] == "input"]
    path = os.path.join(work, "noop_" + os.path.basename(tape))
    with open(path, "w") as f:
        json.dump({"format": "ytape-tape", "version": 1, "name": "noop", "meta": {},
                   "ops": inputs, "outputs": [{"var": inputs[0]["out"][0], "name": "x"}]}, f)
    return path


def ytape_time(ytape, tape, inputs, repeat, threads, work, carry):
    """(fastest run in ms, peak growth in MB) of `ytape run --repeat` (a training step with
    --carry: each run goes on from the last one's weights and state, written over them)."""
    common = ["--inputs", *inputs, "--skip-extra", "--threads", str(threads)]
    # ytape runs with glibc's defaults even where this script was started with PyTorch's
    # tuned settings: those keep freed memory, which would raise ytape's peak (the large
    # step's 180 MB read 386).
    env = {k: v for k, v in os.environ.items() if k not in TUNED_GLIBC}
    out, peak = run_measured([ytape, "run", tape, *common, "--repeat", str(repeat),
                              *(["--carry"] if carry else [])], env=env)
    _, base = run_measured([ytape, "run", noop_tape(tape, work), *common], env=env)
    fastest = float(re.search(r"time: median \S+ ms over \d+ runs \(min (\S+),", out).group(1))
    return fastest, peak - base


def torch_time(args, config, kind, work, foreach):
    """(fastest run in ms, peak growth in MB) of PyTorch in a process of its own."""
    env = dict(os.environ, **TUNED_GLIBC)
    out, _ = run_measured([sys.executable, os.path.abspath(__file__), "--worker", kind,
                           "--work", work, "--config", json.dumps(config), "--repeat",
                           str(args.repeat), "--threads", str(args.threads), "--foreach",
                           str(int(foreach))], env=env)
    result = json.loads(out.strip().splitlines()[-1])
    return result["ms"], result["growth_mb"]


def worker(args):
    """Times PyTorch's forward (`forward`) or training step (`step`); prints one JSON line."""
    import time

    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    config = json.loads(args.config)
    weights = read_safetensors(os.path.join(args.work, "init.safetensors"))
    tokens = read_safetensors(os.path.join(args.work, "batch.safetensors"))["tokens"]
    model = torch_model(config, weights["model.token.weight"].shape[0], weights)
    ids = torch.from_numpy(np.ascontiguousarray(tokens - 1))
    x, y = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=bool(args.foreach))
    if args.worker == "step":  # the state AdamW's first step makes, as its step makes it:
        for p in model.parameters():  # held before the step, as ytape's inputs hold it
            opt.state[p] = {"step": torch.tensor(0.0), "exp_avg": torch.zeros_like(p),
                            "exp_avg_sq": torch.zeros_like(p)}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def step():
        if args.worker == "forward":
            with torch.no_grad():
                model(x, y)
            return
        opt.zero_grad(set_to_none=True)
        model(x, y).backward()
        if args.worker == "step":
            opt.step()

    times = []
    for _ in range(args.repeat + 1):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps({"ms": min(times[1:]), "growth_mb": growth}))


def timing(args, ytape, config, files, onnx, work):
    isa, peak, cpu = fma_peak(args.build, args.threads)
    inputs = [files["init.safetensors"], files["batch.safetensors"]]
    # label: (tape, its inputs, what PyTorch runs for it)
    rows = {"forward": (files["loss.json"], inputs, "forward"),
            "step": (files["step_remat.json"], inputs, "step"),
            "step, nothing recomputed": (files["step.json"], inputs, "step"),
            "ONNX forward": (*onnx["forward"], "forward"),
            "ONNX forward + backward": (*onnx["step"], "backward")}
    runs = {label: ([], []) for label in rows}  # (ytape's, PyTorch's) (ms, MB) per round
    for _ in range(args.rounds):
        for label, (tape, tape_inputs, kind) in rows.items():
            runs[label][0].append(ytape_time(ytape, tape, tape_inputs, args.repeat, args.threads,
                                             work, carry=kind == "step"))
            runs[label][1].append(min((torch_time(args, config, kind, work, foreach)
                                       for foreach in (False, True)), key=lambda v: v[0]))
    # PyTorch's fastest run of each kind, over every row that ran it: one figure for the two
    # steps, the two forwards.
    theirs = {}
    for label, (_, t) in runs.items():
        kind = rows[label][2]
        theirs[kind] = min(theirs.get(kind, t[0]), *t, key=lambda v: v[0])
    best = {label: (min(y, key=lambda v: v[0]), theirs[rows[label][2]])
            for label, (y, _) in runs.items()}
    step = step_flops(ytape, files["step.json"])
    print(f"  {'':26} {'ytape ms':>9} {'PyTorch ms':>10} {'ratio':>6} {'ytape MB':>9} {'PyTorch MB':>10}")
    for label, ((y, ym), (t, tm)) in best.items():
        print(f"  {label:26} {y:9.2f} {t:10.2f} {y / t:6.2f} {ym:9.0f} {tm:10.0f}")
    rate = step / best["step"][0][0] * 1e-6
    print(f"  step: {step / 1e9:.2f} GFLOP, {rate:.0f} GFLOP/s at ytape's fastest run = "
          f"{100 * rate / peak:.0f}% of the {isa} FMA peak ({peak:.0f} GFLOP/s, bench_peak, "
          f"{args.threads} threads on {cpu})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--configs", default="sample,large")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--foreach", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    import torch

    torch.set_num_threads(args.threads)
    ytape = os.path.join(args.build, "cli", "ytape")
    for name in args.configs.split(","):
        config = CONFIGS[name]
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in config.items()))
        with tempfile.TemporaryDirectory(prefix="ytape-gpt-") as work:
            files, model, ids = check(ytape, config, work, args.tolerance)
            onnx = onnx_files(ytape, model, ids, work, args.tolerance)
            if not args.check_only:
                timing(args, ytape, config, files, onnx, work)


if __name__ == "__main__":
    main()
