#!/usr/bin/env python3
"""Exports one model of the ONNX model tests from PyTorch, with what the comparison needs.

    export_model.py MODEL OUTPUT_DIR        MODEL: resnet18, mobilenet_v2, mobilenet_v3_large,
                                            efficientnet_b0, transformer, gpt2, kws_lstm,
                                            kws_gru

writes, into OUTPUT_DIR:
  model.onnx           torch.onnx.export of the model in eval mode (opset 13)
  input.<name>.bin     each graph input, raw little-endian (f32, or i64 token ids)
  expected.bin         PyTorch's output, f32

Weights are random with a fixed seed; batch norms get random scales, shifts and running
statistics, so that a statistic applied in the wrong place shows in the output. Exit status 77
when PyTorch or torchvision is missing (the test driver decides whether that skips or fails).
"""
import os
import sys

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import torch
except ImportError:
    print("export_model.py: PyTorch is not installed (Debian package python3-torch)", file=sys.stderr)
    sys.exit(SKIPPED)

VISION = ("resnet18", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0")


def randomize(model):
    """Random affine parameters and running statistics for every batch norm (PyTorch starts them
    at 1, 0, 0 and 1, which would hide a swapped mean and bias), and classifier weights of unit
    gain (torchvision's N(0, 0.01) leaves MobileNet's scores near 0.01, too small for an
    absolute tolerance to mean much)."""
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            m.weight.normal_(0.0, m.in_features ** -0.5)
            m.bias.normal_(0.0, 0.1)
        elif isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.weight.copy_(1.0 + 0.1 * torch.randn(c))
            m.bias.copy_(0.1 * torch.randn(c))
            m.running_mean.copy_(0.1 * torch.randn(c))
            m.running_var.copy_(0.5 + torch.rand(c))


def vision_model(name):
    try:
        import torchvision
    except ImportError:
        print("export_model.py: torchvision is not installed (Debian package python3-torchvision)", file=sys.stderr)
        sys.exit(SKIPPED)
    model = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        randomize(model)
    return model, {"x": torch.randn(1, 3, 224, 224)}


def transformer_model():
    # The BERT-style encoder of examples/transformer, built and initialised as its export.py does.
    sys.path.insert(0, os.path.join(ROOT, "examples", "transformer"))
    import export as encoder
    model = encoder.Encoder()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn_like(p))
            elif "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
    return model, {"ids": torch.randint(0, encoder.VOCAB, (1, encoder.SEQ), dtype=torch.int64)}


class _GptBlock(torch.nn.Module):
    """A GPT-2 block as nanoGPT and Hugging Face write it: pre-norm attention whose causal mask is
    a registered buffer applied with masked_fill (exported as Where on a bool tensor), a padding
    mask compared at run time, and a GELU (tanh) MLP."""

    def __init__(self, d, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x, pad):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(c, dim=2))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = att.masked_fill(pad, -1e4)
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class _Gpt(torch.nn.Module):
    """A two-block GPT-2-style decoder: token and position embeddings, blocks, a tied LM head."""
    VOCAB, SEQ, D, HEADS = 97, 24, 64, 4

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(self.VOCAB, self.D)
        self.pos = torch.nn.Parameter(0.1 * torch.randn(self.SEQ, self.D))
        self.blocks = torch.nn.ModuleList(_GptBlock(self.D, self.HEADS, self.SEQ) for _ in range(2))
        self.ln = torch.nn.LayerNorm(self.D)

    def forward(self, ids, keep):
        # keep: 1 for a real token, 0 for padding (Hugging Face's attention_mask)
        pad = (keep == 0)[:, None, None, :]
        x = self.tok(ids) + self.pos
        for blk in self.blocks:
            x = blk(x, pad)
        return self.ln(x) @ self.tok.weight.t()


def gpt2_model():
    model = _Gpt()
    ids = torch.randint(0, _Gpt.VOCAB, (1, _Gpt.SEQ), dtype=torch.int64)
    keep = torch.ones(1, _Gpt.SEQ, dtype=torch.int64)
    keep[0, :3] = 0  # left padding, as batched generation pads
    return model, {"ids": ids, "keep": keep}


class _Kws(torch.nn.Module):
    """A keyword spotter over 49 frames of 10 MFCCs (the DS-CNN's input): a recurrent stack, the
    last frame's features, a linear classifier of 12 keywords."""

    def __init__(self, cell, bidirectional):
        super().__init__()
        self.rnn = cell(10, 48, num_layers=2, batch_first=True, bidirectional=bidirectional)
        self.fc = torch.nn.Linear(48 * (2 if bidirectional else 1), 12)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def kws_model(name):
    # The LSTM one-way, the GRU both ways (PyTorch's GRU: linear_before_reset).
    model = _Kws(torch.nn.LSTM, False) if name == "kws_lstm" else _Kws(torch.nn.GRU, True)
    return model, {"x": torch.randn(1, 49, 10)}


MODELS = VISION + ("transformer", "gpt2", "kws_lstm", "kws_gru")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        print(f"usage: export_model.py {{{','.join(MODELS)}}} OUTPUT_DIR", file=sys.stderr)
        return 2
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(2024)
    model, inputs = vision_model(name) if name in VISION else transformer_model() if name == "transformer" \
        else gpt2_model() if name == "gpt2" else kws_model(name)
    model.eval()
    args = tuple(inputs.values())
    # Gradients stay enabled: under no_grad, PyTorch 1.13 runs an eval-mode encoder layer as one
    # fused op (_transformer_encoder_layer_fwd) that has no ONNX export.
    expected = model(*args).detach()
    torch.onnx.export(model, args, os.path.join(out, "model.onnx"), input_names=list(inputs),
                      output_names=["y"], opset_version=13, do_constant_folding=True)
    for k, v in inputs.items():
        v.contiguous().numpy().tofile(os.path.join(out, f"input.{k}.bin"))
    expected.contiguous().float().numpy().tofile(os.path.join(out, "expected.bin"))
    print(f"export_model.py: {name} -> {out}/model.onnx, output {list(expected.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
