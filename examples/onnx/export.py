#!/usr/bin/env python3
"""Exports the small CNN of examples/onnx from PyTorch, with an input and PyTorch's output.

    export.py OUTPUT_DIR

writes, into OUTPUT_DIR:
  small_cnn.onnx       torch.onnx.export of the model in eval mode (opset 13)
  io.safetensors       "image", F32 [1, 3, 32, 32], and "scores", PyTorch's output F32 [1, 10]

The weights are random (fixed seed), batch norms' statistics included. Needs PyTorch and onnx
(Debian: python3-torch python3-onnx); exits 77 without PyTorch.
"""
import argparse
import json
import os
import struct
import sys

try:
    import torch
except ImportError:
    print("export.py: PyTorch is not installed (Debian package python3-torch)", file=sys.stderr)
    sys.exit(77)


class SmallCNN(torch.nn.Module):
    """A stem, a depthwise-separable block with a residual, pooling and a classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1, bias=False),
                                        torch.nn.BatchNorm2d(16), torch.nn.ReLU())
        self.block = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False),
                                         torch.nn.BatchNorm2d(16), torch.nn.ReLU6(),
                                         torch.nn.Conv2d(16, 16, 1, bias=False), torch.nn.BatchNorm2d(16))
        self.pool = torch.nn.MaxPool2d(2)
        self.head = torch.nn.Sequential(torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.Hardswish(),
                                        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                        torch.nn.Linear(32, classes))

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.head(self.pool(x))


def save_safetensors(path, arrays):
    """Writes float32 numpy arrays as safetensors: header length, JSON header, raw data."""
    header, offset = {}, 0
    for name, a in arrays.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(a.astype("<f4").tobytes() for a in arrays.values()))


def main():
    parser = argparse.ArgumentParser(description="Exports examples/onnx's CNN to ONNX, with an input and its scores.")
    parser.add_argument("out", metavar="OUTPUT_DIR")
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(7)
    model = SmallCNN()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    model.eval()
    image = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        scores = model(image)
        torch.onnx.export(model, (image,), os.path.join(out, "small_cnn.onnx"), input_names=["image"],
                          output_names=["scores"], opset_version=13)
    save_safetensors(os.path.join(out, "io.safetensors"), {"image": image.numpy(), "scores": scores.numpy()})
    print(f"export.py: small_cnn.onnx and io.safetensors written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
