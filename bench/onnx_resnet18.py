#!/usr/bin/python3
"""ResNet-18 from PyTorch through ONNX: torch.onnx.export, `ytape import`, `ytape run`.

Run by hand, never in CI (it needs Debian's python3-torch and python3-torchvision):

    bench/onnx_resnet18.py [--build build/release] [--batch 1] [--opset 13] [--tolerance 1e-4]

torchvision's resnet18, built with a fixed seed, in eval mode (batch norm with its running
statistics, which the export keeps as initializers), is exported to ONNX with a fixed
input size; `ytape import` makes a tape and its weights file of it, and `ytape run` runs
it on the weights and an image, whose logits are compared with PyTorch's on the same image.
The same is then done for the gradient tape: `ytape grad --vjp` of the imported tape gives
the gradients of the sum of the logits (seed 1), checked against torch.autograd for the
image. Exits 1 when a relative difference exceeds --tolerance.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import read_safetensors, write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def relative(a, b):
    import numpy as np
    return float(np.linalg.norm(a.astype("f8") - b.astype("f8")) / max(np.linalg.norm(b.astype("f8")), 1e-30))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--opset", type=int, default=13)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    import torch
    import torchvision

    ytape = os.path.join(args.build, "cli", "ytape")
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    # Running statistics other than 0 and 1, so that the import of batch norm is tested.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    image = torch.randn(args.batch, 3, 224, 224)
    with tempfile.TemporaryDirectory() as d:
        path = lambda name: os.path.join(d, name)  # noqa: E731
        torch.onnx.export(model, image, path("resnet18.onnx"), opset_version=args.opset,
                          input_names=["image"], output_names=["logits"])
        subprocess.run([ytape, "import", path("resnet18.onnx"), "-o", path("tape.json"),
                        "--weights", path("weights.safetensors")], check=True)
        inputs = read_safetensors(path("weights.safetensors"))
        inputs["image"] = image.numpy()
        write_safetensors(path("inputs.safetensors"), inputs)
        subprocess.run([ytape, "run", path("tape.json"), "--inputs", path("inputs.safetensors"),
                        "-o", path("out.safetensors")], check=True, stdout=subprocess.DEVNULL)
        logits = read_safetensors(path("out.safetensors"))["logits"]
        image.requires_grad_(True)
        want = model(image)
        forward = relative(logits, want.detach().numpy())
        print(f"forward: relative difference of the logits {forward:.2e}")
        # The gradient of sum(logits) with respect to the image.
        subprocess.run([ytape, "grad", path("tape.json"), "--vjp", "--wrt", "image", "-o", path("grad.json")],
                       check=True)
        import numpy as np
        inputs["seed.logits"] = np.ones_like(logits)
        write_safetensors(path("inputs.safetensors"), inputs)
        subprocess.run([ytape, "run", path("grad.json"), "--inputs", path("inputs.safetensors"),
                        "-o", path("grad.safetensors")], check=True, stdout=subprocess.DEVNULL)
        got = read_safetensors(path("grad.safetensors"))["grad.image"]
        want.sum().backward()
        backward = relative(got, image.grad.numpy())
        print(f"gradient: relative difference for the image {backward:.2e}")
    worst = max(forward, backward)
    if worst > args.tolerance:
        print(f"FAILED: {worst:.2e} > {args.tolerance:.0e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
