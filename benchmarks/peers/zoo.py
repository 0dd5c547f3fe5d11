#!/usr/bin/env python3
"""The peer benchmark's model zoo: each model built in PyTorch with seeded random weights and
exported to ONNX, the file that Partita's importer, ONNX Runtime and OpenVINO all read.

    zoo.py NAME OUT_DIR        writes OUT_DIR/NAME.onnx, NAME.input.safetensors (the input, under
                               its graph name) and NAME.output.safetensors (PyTorch's output)
    zoo.py --list              the names

As a module, `build(name)` returns the PyTorch model (eval mode) and its input, the same every
time (seeded), for bench_peers.py's PyTorch peer.

The vision models are torchvision's at 224 × 224 with randomized batch norms (as the ONNX model
tests do: tests/onnx_models/export_model.py); vit_s16 is a ViT-S/16 (12 layers, width 384, 6
heads) built with torchvision's VisionTransformer; bert_base is a BERT-base-sized encoder stack
(width 768, 12 heads, FFN 3072, GELU, post-norm) on a sequence of 128 embeddings. w1 … w7 are the
runtime benchmark's workloads (benchmarks/README.md): w5 is resnet18, w7 mobilenet_v2, w6 the
encoder of examples/transformer on 128 token ids. mobilenet_v2_batchN and resnet50_batchN are
those models, with the same weights, on batches of N images (8 and 32), for throughput.
kws_lstm and kws_gru are the keyword spotters of the ONNX model tests (a two-layer LSTM, a
two-layer bidirectional GRU, 48 units, over 49 frames of 10 MFCCs).
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "onnx_models"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import harness  # noqa: E402  benchmarks/harness.py

SEED = 2024
TORCHVISION = ("mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "resnet18", "resnet50", "resnext50_32x4d",
               "convnext_tiny", "regnet_y_400mf")
BERT_LAYERS, BERT_WIDTH, BERT_HEADS, BERT_FFN, BERT_SEQ = 12, 768, 12, 3072, 128
# Throughput: batches of images for two of the vision models (NAME_batchN).
BATCHED = ("mobilenet_v2_batch8", "mobilenet_v2_batch32", "resnet50_batch8", "resnet50_batch32")
# Keyword spotters over 49 frames of 10 MFCCs (tests/onnx_models/export_model.py): a two-layer
# LSTM, a two-layer bidirectional GRU.
RECURRENT = ("kws_lstm", "kws_gru")
NAMES = TORCHVISION + ("vit_s16", "bert_base", "w1_mlp", "w2_mlp_batch64", "w3_basic_block", "w4_lenet",
                       "w6_encoder") + BATCHED + RECURRENT


def _image(batch: int = 1) -> torch.Tensor:
    return torch.randn(batch, 3, 224, 224)


def _torchvision(name: str, batch: int = 1):
    import torchvision
    from export_model import randomize  # tests/onnx_models: random batch norms and classifier gains
    model = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        randomize(model)
    return model, _image(batch)


def _vit():
    from torchvision.models.vision_transformer import VisionTransformer
    from export_model import randomize
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=6, hidden_dim=384,
                              mlp_dim=1536, num_classes=1000)
    with torch.no_grad():
        randomize(model)
    return model, _image()


class _Bert(torch.nn.Module):
    """BERT-base's encoder layers on embeddings, with a pooled classifier of 2 logits."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(BERT_WIDTH, BERT_HEADS, BERT_FFN, dropout=0.0, activation="gelu",
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, BERT_LAYERS, enable_nested_tensor=False)
        self.classifier = torch.nn.Linear(BERT_WIDTH, 2)
        # TransformerEncoder copies one layer: every layer gets weights of its own, as a trained
        # model has (equal weights would be stored, and read, once).
        with torch.no_grad():
            for name, p in self.encoder.named_parameters():
                if p.dim() > 1:
                    torch.nn.init.xavier_uniform_(p)
                elif "norm" in name:
                    p.copy_(1.0 + 0.1 * torch.randn_like(p))
                else:
                    p.copy_(0.02 * torch.randn_like(p))

    def forward(self, x):
        return self.classifier(self.encoder(x)[:, 0])


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                               torch.nn.ReLU(), torch.nn.Linear(512, 10))


class _BasicBlock(torch.nn.Module):
    """W3: conv3×3 + bias + relu, conv3×3 + bias, add, relu on 64 × 56 × 56."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(64, 64, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(64, 64, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv2(torch.relu(self.conv1(x))) + x)


def _lenet() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Conv2d(6, 16, 5), torch.nn.ReLU(), torch.nn.AvgPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(400, 120), torch.nn.ReLU(), torch.nn.Linear(120, 84), torch.nn.ReLU(),
        torch.nn.Linear(84, 10))


def build(name: str):
    """(model in eval mode, input tensor) for `name`, seeded."""
    if name not in NAMES:
        raise SystemExit(f"zoo.py: no model {name!r}; the zoo has {', '.join(NAMES)}")
    torch.manual_seed(SEED)
    if name in TORCHVISION:
        model, x = _torchvision(name)
    elif name in BATCHED:
        base, batch = name.rsplit("_batch", 1)
        model, x = _torchvision(base, int(batch))
    elif name == "vit_s16":
        model, x = _vit()
    elif name == "bert_base":
        model, x = _Bert(), torch.randn(1, BERT_SEQ, BERT_WIDTH)
    elif name == "w1_mlp":
        model, x = _mlp(), torch.randn(1, 784)
    elif name == "w2_mlp_batch64":
        model, x = _mlp(), torch.randn(64, 784)
    elif name == "w3_basic_block":
        model, x = _BasicBlock(), torch.randn(1, 64, 56, 56)
    elif name == "w4_lenet":
        model, x = _lenet(), torch.randn(1, 1, 28, 28)
    elif name in RECURRENT:
        from export_model import kws_model
        model, inputs = kws_model(name)
        x = inputs["x"]
    else:
        from export_model import transformer_model
        model, inputs = transformer_model()
        x = inputs["ids"]
    return model.eval(), x


def export(name: str, out: str) -> None:
    model, x = build(name)
    os.makedirs(out, exist_ok=True)
    input_name = "ids" if x.dtype == torch.int64 else "x"
    # Gradients stay enabled: under no_grad, PyTorch 1.13 runs an eval-mode encoder layer as one
    # fused op that has no ONNX export.
    expected = model(x).detach().float().numpy()
    torch.onnx.export(model, (x,), os.path.join(out, f"{name}.onnx"), input_names=[input_name], output_names=["y"],
                      opset_version=13, do_constant_folding=True)
    harness.write_safetensors(os.path.join(out, f"{name}.input.safetensors"), {input_name: x.numpy()})
    harness.write_safetensors(os.path.join(out, f"{name}.output.safetensors"), {"y": np.ascontiguousarray(expected)})
    print(f"zoo.py: {name} -> {out}/{name}.onnx, input {list(x.shape)}, output {list(expected.shape)}")


def main() -> int:
    if sys.argv[1:] == ["--list"]:
        print("\n".join(NAMES))
        return 0
    if len(sys.argv) != 3:
        print(f"usage: zoo.py NAME OUT_DIR | zoo.py --list  (NAME: {', '.join(NAMES)})", file=sys.stderr)
        return 2
    export(sys.argv[1], sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
