#!/usr/bin/env python3
"""Builds the BERT-style encoder of model.hpp in PyTorch and writes what the C++ example needs.

    export.py OUTPUT_DIR

writes, into OUTPUT_DIR:
  weights.safetensors  every parameter, f32, under its PyTorch state_dict name
  ids.safetensors      "ids": the token ids, I64 [1, 128]
  logits.safetensors   "logits": PyTorch's output for those ids, F32 [1, 10]

The weights are random (fixed seed) and so are the biases and LayerNorm parameters, which
PyTorch initializes to zeros and ones: a swapped bias or a missing scale must show in the logits.
The safetensors files are written here by hand (8-byte little-endian header length, JSON header,
raw little-endian data), so only PyTorch (Debian: python3-torch) is needed.
"""
import json
import os
import struct
import sys

try:
    import torch
except ImportError:
    print("export.py: PyTorch is not installed (Debian package python3-torch)", file=sys.stderr)
    sys.exit(77)

VOCAB, SEQ, D, HEADS, FF, LAYERS, CLASSES = 1000, 128, 256, 4, 1024, 2, 10
EMBEDDING_EPS = 1e-12  # BERT's embedding LayerNorm; the encoder layers keep PyTorch's 1e-5


class Encoder(torch.nn.Module):
    """Token + position embeddings, LayerNorm, two post-norm encoder layers, a tanh pooler on
    the first token and a linear classifier."""

    def __init__(self):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(VOCAB, D)
        self.pos_emb = torch.nn.Embedding(SEQ, D)
        self.emb_norm = torch.nn.LayerNorm(D, eps=EMBEDDING_EPS)
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(d_model=D, nhead=HEADS, dim_feedforward=FF, activation="gelu",
                                             batch_first=True, norm_first=False, dropout=0.0)
            for _ in range(LAYERS))
        self.pooler = torch.nn.Linear(D, D)
        self.classifier = torch.nn.Linear(D, CLASSES)

    def forward(self, ids):
        x = self.tok_emb(ids) + self.pos_emb.weight[: ids.shape[1]]
        x = self.emb_norm(x)
        for layer in self.layers:
            x = layer(x)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def safetensors_bytes(tensors):
    """The safetensors encoding of `tensors` (name -> contiguous CPU tensor), in the given order."""
    names = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        data = t.numpy().astype(t.numpy().dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # data starts 8-byte aligned, as the reference writer does
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def write(path, tensors):
    with open(path, "wb") as f:
        f.write(safetensors_bytes(tensors))


def main():
    if len(sys.argv) != 2:
        print("usage: export.py OUTPUT_DIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    torch.manual_seed(2024)
    model = Encoder()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn_like(p))
            elif "norm" in name:  # LayerNorm scales
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
    model.eval()
    ids = torch.randint(0, VOCAB, (1, SEQ), dtype=torch.int64)
    with torch.no_grad():
        logits = model(ids)
        # Informative: how far float32 PyTorch is from float64 PyTorch on these ids.
        exact = model.double()(ids)
    model.float()

    weights = {name: t.float() for name, t in model.state_dict().items()}
    write(os.path.join(out, "weights.safetensors"), weights)
    write(os.path.join(out, "ids.safetensors"), {"ids": ids})
    write(os.path.join(out, "logits.safetensors"), {"logits": logits})
    print(f"export.py: {len(weights)} weights, ids [1, {SEQ}] and logits [1, {CLASSES}] written to {out}")
    print(f"export.py: logits {[round(v, 4) for v in logits[0].tolist()]}")
    print(f"export.py: float32 vs float64 PyTorch: max abs diff {(logits.double() - exact).abs().max().item():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
