# Makes regions/torch_for_loop.onnx and regions/torch_newton.onnx (PyTorch 1.13, Debian's
# python3-torch): a scripted for loop and a scripted while loop, exported to ONNX as Loop.
# Run from tests/cli/regions: /usr/bin/python3 torch_loops.py
import torch
class Cell(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4) * 0.3)
    def forward(self, xs, h):
        for t in range(xs.shape[0]):
            h = torch.tanh(h @ self.w + xs[t])
        return h
m = torch.jit.script(Cell())
torch.onnx.export(m, (torch.randn(16, 2, 4), torch.zeros(2, 4)), "torch_for_loop.onnx", input_names=["xs", "h"], output_names=["out"], opset_version=13)
class Newton(torch.nn.Module):
    def forward(self, a, x):
        while bool(torch.abs(x * x - a) > 1e-6):
            x = (x + a / x) / 2
        return x
torch.onnx.export(torch.jit.script(Newton()), (torch.tensor(2.0), torch.tensor(1.5)), "torch_newton.onnx", input_names=["a", "x"], output_names=["r"], opset_version=13)
print("ok")
