#!/usr/bin/env python3
"""Writes the int8 test models: quantized ONNX graphs (QDQ form) and ONNX Runtime's results on them.

    make_models.py OUT_DIR [--only NAME,NAME...] [--size SIDE]

Models (each OUT_DIR/NAME.onnx, opset 13, activations u8 asymmetric per tensor, weights s8
symmetric per output channel, biases i32 with scale = input scale * weight scale):
  built with onnx.helper, scales from ONNX Runtime's float run of the same graph on seeded inputs:
    conv_relu      per-channel 3x3 conv, relu quantized after the relu
    residual       conv-relu-conv, add of the block's input, relu
    mlp            Gemm (transB) + relu, MatMul by a weight
    matmul2        MatMul of two activations
    concat_pool    concat of two differently scaled inputs, average pool, global average pool
    dwconv_relu6   depthwise 3x3 conv, Clip(0, 6)
  quantized by onnxruntime.quantization.quantize_static (QDQ, per-channel) from PyTorch exports:
    resnet18       torchvision, random seeded weights, 64x64 input (--size: another side)
    mobilenet_v2   torchvision, random seeded weights, 64x64 input (--size: another side)
    digits_cnn     a small CNN trained on scikit-learn's 8x8 digits; float and int8 top-1 agree
  quantized by PyTorch's quantization-aware training (torch.ao.quantization, fake quantization
  exported as QDQ by torch.onnx.export; its per-tensor scales have shape [1]):
    torch_qat_cnn           a small CNN, conv-bn + ReLU6 (a Clip between QDQ pairs), a few
                            seeded training steps, 16x16 input
    torch_qat_mobilenet_v2  torchvision's quantizable MobileNetV2, calibration passes, 64x64

For each model OUT_DIR also gets:
  NAME.input.safetensors         the graph inputs, by name (f32)
  NAME.output.safetensors        the reference outputs, by name: ONNX Runtime (CPU) with graph
                                 optimizations off, which evaluates the graph as written, float
                                 ops between exact QuantizeLinear/DequantizeLinear: ONNX's meaning
                                 of a QDQ graph, and the same on every machine. An integer
                                 implementation is within 1 LSB of it per quantized layer.
  NAME.intermediate.safetensors  the output of every QuantizeLinear (u8/i8), by tensor name, from
                                 the same run with those tensors added as graph outputs, for
                                 layer-by-layer comparison
  NAME.ort_int8.safetensors      ONNX Runtime's outputs with all optimizations: its integer
                                 kernels (QLinearConv...). Not a reference: on x86 without VNNI its
                                 u8 x s8 kernels add pairs of products in saturating 16-bit lanes
                                 (vpmaddubsw), so large activations times large weights come out
                                 wrong; the manifest records how far from the reference they are.
                                 For torch_qat_* both run on a copy whose shape-[1] scales and
                                 zero points are scalars (scalar_qdq): ONNX Runtime refuses them.
  NAME.float.onnx, NAME.calibration.safetensors   (quantize_static's models) the float model and
                                 the calibration batches quantize_static saw: each input stacked
                                 on a new leading axis, the form partita_import.py --calibrate reads
and OUT_DIR/manifest.json lists, per model, these files, the input and output names, the op
counts and the integer run's largest distance from the reference in units of the output's scale.
digits_cnn.test.safetensors holds the 397 held-out digits ("input" [N, 1, 1, 8, 8], "label"
[N]) with the float and int8 (reference) top-1 predictions; the script fails when they agree on
fewer than 97% of them.

Deterministic (seeds, one thread). Exits 77 when numpy, onnx, onnxruntime, PyTorch, torchvision or
scikit-learn is missing, except under CI=true, where that fails.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import struct
import sys

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import sklearn  # noqa: F401
    import torch
    import torchvision  # noqa: F401
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    what = f"{e.name} is not installed for {sys.executable}"
    if os.environ.get("CI") == "true":
        print(f"make_models.py: {what}; required under CI=true (.ci/run installs it)", file=sys.stderr)
        sys.exit(1)
    print(f"make_models.py: skipped: {what} (onnxruntime: run .ci/run, or pip install onnxruntime into "
          f"a venv made with --system-site-packages and configure with -DPARTITA_PYTHON_VENV=...)")
    sys.exit(SKIPPED)

OPSET = 13
_ST_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8",
              np.dtype(np.int32): "I32", np.dtype(np.int64): "I64"}


def write_safetensors(path: str, arrays: dict[str, np.ndarray]) -> None:
    """A safetensors file of `arrays`, in the order given."""
    header, blobs, offset = {}, [], 0
    for name, a in arrays.items():
        a = np.ascontiguousarray(a)
        data = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _ST_DTYPES[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def session(model: onnx.ModelProto | str, optimized: bool = True) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def with_outputs(model: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    """A copy of `model` with `names` added as graph outputs (type left to the runtime)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    have = {o.name for o in out.graph.output}
    out.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in have)
    return out


# --- QDQ graphs built by hand -----------------------------------------------------------------

def activation_params(lo: float, hi: float) -> tuple[np.float32, np.uint8]:
    """u8 asymmetric scale and zero point of the range [lo, hi], widened to include 0."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi == lo:
        return np.float32(1.0), np.uint8(0)
    scale = np.float32((hi - lo) / 255.0)
    return scale, np.uint8(np.clip(np.round(-lo / float(scale)), 0, 255))


class Net:
    """A graph under construction, built twice from the same description: first in float with
    every quantization point observed, then in QDQ form with the ranges the float run found."""

    def __init__(self, rng: np.random.Generator, ranges: dict[str, tuple[float, float]] | None):
        self.rng = rng
        self.ranges = ranges
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.observed: list[str] = []
        self.scale_of: dict[str, float] = {}  # a dequantized activation -> its scale

    @property
    def quantized(self) -> bool:
        return self.ranges is not None

    def input(self, name: str, shape: list[int]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=output + "/" + op, **attrs))
        return output

    def act(self, x: str) -> str:
        """A quantization point: x -> QuantizeLinear (u8) -> DequantizeLinear."""
        if not self.quantized:
            self.observed.append(x)
            return x
        scale, zp = activation_params(*self.ranges[x])
        s = self.const(x + ".scale", scale)
        z = self.const(x + ".zero_point", zp)
        q = self.node("QuantizeLinear", [x, s, z], x + ".q")
        out = self.node("DequantizeLinear", [q, s, z], x + ".dq")
        self.scale_of[out] = float(scale)
        return out

    def weight(self, name: str, w: np.ndarray, axis: int) -> tuple[str, np.ndarray]:
        """s8 symmetric per-channel along `axis`: (the dequantized weight, its scales)."""
        if not self.quantized:
            return self.const(name, w.astype(np.float32)), np.ones(w.shape[axis], np.float32)
        other = tuple(i for i in range(w.ndim) if i != axis)
        scale = (np.abs(w).max(axis=other) / 127.0).astype(np.float32)
        scale[scale == 0] = 1.0
        shaped = scale.reshape([-1 if i == axis else 1 for i in range(w.ndim)])
        q = np.clip(np.round(w / shaped), -127, 127).astype(np.int8)
        s = self.const(name + ".scale", scale)
        z = self.const(name + ".zero_point", np.zeros(scale.shape, np.int8))
        self.const(name + ".quantized", q)
        return self.node("DequantizeLinear", [name + ".quantized", s, z], name, axis=axis), scale

    def bias(self, name: str, b: np.ndarray, x: str, w_scale: np.ndarray) -> str:
        """i32 with scale x_scale * w_scale, zero point 0, as QDQ exporters write it."""
        if not self.quantized:
            return self.const(name, b.astype(np.float32))
        scale = (np.float32(self.scale_of[x]) * w_scale).astype(np.float32)
        q = np.round(b / scale).astype(np.int32)
        s = self.const(name + ".scale", scale)
        z = self.const(name + ".zero_point", np.zeros(scale.shape, np.int32))
        self.const(name + ".quantized", q)
        return self.node("DequantizeLinear", [name + ".quantized", s, z], name, axis=0)

    def conv(self, name: str, x: str, cin: int, cout: int, k: int, group: int = 1, gain: float = 1.0, **attrs) -> str:
        fan_in = cin // group * k * k
        w = self.rng.normal(0.0, gain * fan_in ** -0.5, (cout, cin // group, k, k)).astype(np.float32)
        b = self.rng.normal(0.0, 0.1, cout).astype(np.float32)
        wq, ws = self.weight(name + ".weight", w, 0)
        bq = self.bias(name + ".bias", b, x, ws)
        return self.node("Conv", [x, wq, bq], name, kernel_shape=[k, k], group=group, **attrs)

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        out = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        graph = helper.make_graph(self.nodes, "int8_test", self.inputs, out, self.initializers)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="partita tests/int8")
        m.ir_version = 7
        inferred = onnx.shape_inference.infer_shapes(m).graph
        typed = {v.name: v for v in [*inferred.value_info, *inferred.output]}
        for o in m.graph.output:
            o.type.CopyFrom(typed[o.name].type)
        onnx.checker.check_model(m)
        return m


def conv_relu(n: Net) -> list[str]:
    x = n.act(n.input("x", [1, 3, 16, 16]))
    c = n.conv("conv", x, 3, 8, 3, pads=[1, 1, 1, 1])
    return [n.act(n.node("Relu", [c], "relu"))]


def residual(n: Net) -> list[str]:
    x = n.act(n.input("x", [1, 8, 12, 12]))
    r1 = n.act(n.node("Relu", [n.conv("conv1", x, 8, 8, 3, pads=[1, 1, 1, 1])], "relu1"))
    c2 = n.act(n.conv("conv2", r1, 8, 8, 3, pads=[1, 1, 1, 1]))
    s = n.node("Add", [c2, x], "add")
    return [n.act(n.node("Relu", [s], "relu2"))]


def mlp(n: Net) -> list[str]:
    x = n.act(n.input("x", [1, 32]))
    w1, s1 = n.weight("fc1.weight", n.rng.normal(0, 32 ** -0.5, (64, 32)).astype(np.float32), 0)
    b1 = n.bias("fc1.bias", n.rng.normal(0, 0.1, 64).astype(np.float32), x, s1)
    h = n.act(n.node("Relu", [n.node("Gemm", [x, w1, b1], "fc1", transB=1)], "relu"))
    w2, _ = n.weight("fc2.weight", n.rng.normal(0, 64 ** -0.5, (64, 10)).astype(np.float32), 1)
    return [n.act(n.node("MatMul", [h, w2], "fc2"))]


def matmul2(n: Net) -> list[str]:
    a = n.act(n.input("a", [2, 8, 16]))
    b = n.act(n.input("b", [2, 16, 12]))
    return [n.act(n.node("MatMul", [a, b], "matmul"))]


def concat_pool(n: Net) -> list[str]:
    a = n.act(n.input("a", [1, 4, 9, 9]))
    b = n.act(n.input("b", [1, 6, 9, 9]))  # fed five times larger values: a different scale
    c = n.act(n.node("Concat", [a, b], "concat", axis=1))
    p = n.act(n.node("AveragePool", [c], "avgpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     count_include_pad=0))
    return [n.act(n.node("GlobalAveragePool", [p], "gap"))]


def dwconv_relu6(n: Net) -> list[str]:
    x = n.act(n.input("x", [1, 8, 10, 10]))
    c = n.conv("dwconv", x, 8, 8, 3, group=8, gain=2.0, pads=[1, 1, 1, 1])
    lo, hi = n.const("clip.min", np.float32(0.0)), n.const("clip.max", np.float32(6.0))
    return [n.act(n.node("Clip", [c, lo, hi], "relu6"))]


HAND_BUILT = {"conv_relu": conv_relu, "residual": residual, "mlp": mlp, "matmul2": matmul2,
              "concat_pool": concat_pool, "dwconv_relu6": dwconv_relu6}
_INPUT_GAIN = {("concat_pool", "b"): 5.0, ("dwconv_relu6", "x"): 3.0}


def hand_built(name: str, seed: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The QDQ model `name` and its test input: ranges from the float graph on four seeded
    inputs (the test input among them), weights drawn again from the same seed."""
    build = HAND_BUILT[name]
    float_net = Net(np.random.default_rng(seed), None)
    outputs = build(float_net)
    float_model = float_net.model(outputs)
    data = np.random.default_rng(seed + 1)
    batches = [{vi.name: (_INPUT_GAIN.get((name, vi.name), 1.0)
                          * data.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim])).astype(np.float32)
                for vi in float_net.inputs} for _ in range(4)]
    run = session(with_outputs(float_model, float_net.observed))
    ranges: dict[str, tuple[float, float]] = {}
    for feed in batches:
        for o, v in zip(float_net.observed, run.run(float_net.observed, feed)):
            lo, hi = ranges.get(o, (np.inf, -np.inf))
            ranges[o] = (min(lo, float(v.min())), max(hi, float(v.max())))
    net = Net(np.random.default_rng(seed), ranges)
    return net.model(build(net)), batches[0]


# --- models quantized by ONNX Runtime's quantize_static -----------------------------------------

def export(module: torch.nn.Module, example: torch.Tensor, path: str) -> None:
    torch.onnx.export(module.eval(), example, path, opset_version=OPSET, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)


def quantize_with_ort(float_path: str, out_path: str, batches: list[dict[str, np.ndarray]]) -> onnx.ModelProto:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.rest = iter(batches)

        def get_next(self):
            return next(self.rest, None)

    quantize_static(float_path, out_path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return onnx.load(out_path)


def vision(name: str, seed: int, out_dir: str, side: int = 64) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "onnx_models"))
    from export_model import randomize  # the float model tests' batch-norm statistics

    torch.manual_seed(seed)
    module = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        randomize(module)
    gen = torch.Generator().manual_seed(seed + 1)
    batches = [{"input": torch.randn(1, 3, side, side, generator=gen).numpy()} for _ in range(4)]
    return ort_quantized(name, module, batches, out_dir), batches[0]


def ort_quantized(name: str, module: torch.nn.Module, batches: list[dict[str, np.ndarray]], out_dir: str) -> onnx.ModelProto:
    """Exports `module`, quantizes it with quantize_static on `batches`, and writes the float model
    and the batches (stacked) beside it."""
    float_path = os.path.join(out_dir, name + ".float.onnx")
    export(module, torch.from_numpy(batches[0]["input"]), float_path)
    write_safetensors(os.path.join(out_dir, name + ".calibration.safetensors"),
                      {k: np.stack([b[k] for b in batches]) for k in batches[0]})
    return quantize_with_ort(float_path, os.path.join(out_dir, name + ".onnx"), batches)


class DigitsNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        return self.fc(torch.flatten(x, 1))


def digits_cnn(seed: int, out_dir: str, report: dict) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A CNN trained on scikit-learn's digits (the first 1400 images), int8 by quantize_static
    calibrated on 32 training images; float and int8 top-1 compared on the other 397."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # [N, 1, 8, 8] in [0, 1]
    labels = digits.target.astype(np.int64)
    train, test = slice(0, 1400), slice(1400, None)
    torch.manual_seed(seed)
    net = DigitsNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    x, y = torch.from_numpy(images[train]), torch.from_numpy(labels[train])
    order = torch.Generator().manual_seed(seed)
    for _ in range(15):
        for batch in torch.randperm(len(x), generator=order).split(64):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(net(x[batch]), y[batch]).backward()
            optimizer.step()
    batches = [{"input": images[i:i + 1]} for i in range(32)]
    model = ort_quantized("digits_cnn", net, batches, out_dir)

    float_run = session(os.path.join(out_dir, "digits_cnn.float.onnx"))
    int8_run = session(model, optimized=False)
    held_out = images[test]
    f_top1 = np.array([float_run.run(None, {"input": im[None]})[0].argmax() for im in held_out])
    q_top1 = np.array([int8_run.run(None, {"input": im[None]})[0].argmax() for im in held_out])
    write_safetensors(os.path.join(out_dir, "digits_cnn.test.safetensors"),
                      {"input": held_out[:, None], "label": labels[test], "float_top1": f_top1.astype(np.int64),
                       "int8_top1": q_top1.astype(np.int64)})
    report.update(test_images=int(len(held_out)), float_accuracy=float((f_top1 == labels[test]).mean()),
                  int8_accuracy=float((q_top1 == labels[test]).mean()), top1_agreement=float((f_top1 == q_top1).mean()))
    return model, {"input": held_out[:1]}


# --- models quantized by PyTorch's quantization-aware training (fake quantization) ---------------

class TorchQatCnn(torch.nn.Module):
    """A small CNN as eager-mode QAT users write it: stubs around the body, conv-bn (ReLU6 cannot
    be fused in eager mode, so it stays a module of its own: a Clip between QDQ pairs), conv-relu,
    an average pool and a classifier."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.quant, self.dequant = torch.ao.quantization.QuantStub(), torch.ao.quantization.DeQuantStub()
        self.conv1, self.bn1, self.relu1 = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU6()
        self.conv2, self.relu2 = nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU()
        self.conv3, self.relu3 = nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.ReLU6()
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(16, 10)

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(self.quant(x))))
        x = self.relu3(self.conv3(self.relu2(self.conv2(x))))
        return self.dequant(self.fc(torch.flatten(self.pool(x), 1)))

    def fuse(self) -> None:
        torch.ao.quantization.fuse_modules_qat(self, [["conv1", "bn1"], ["conv2", "relu2"]], inplace=True)


def torch_qat(name: str, seed: int, side: int = 64) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """`name`'s module through PyTorch's eager-mode QAT (fuse, prepare_qat with fake quantization:
    u8 activations per tensor, s8 weights per channel), a few seeded steps (training for the CNN,
    calibration passes for MobileNetV2: observers and batch-norm statistics), exported at opset 13
    as QDQ. The qconfig is qnnpack's: fbgemm's narrows activations to [0, 127], which PyTorch
    exports as a Clip on the integers between QuantizeLinear and DequantizeLinear. FakeQuantize
    (version 0), since PyTorch 1.13 cannot export the fused observer of the default qconfig."""
    tq = torch.ao.quantization
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    if name == "torch_qat_cnn":
        module, shape, steps = TorchQatCnn(), (8, 3, 16, 16), 8
    else:
        module = torchvision.models.quantization.mobilenet_v2(weights=None, quantize=False)
        shape, steps = (2, 3, side, side), 3
    module.train()
    module.fuse() if name == "torch_qat_cnn" else module.fuse_model(is_qat=True)
    module.qconfig = tq.get_default_qat_qconfig("qnnpack", version=0)
    tq.prepare_qat(module, inplace=True)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01) if name == "torch_qat_cnn" else None
    for _ in range(steps):
        x = torch.randn(*shape, generator=gen)
        if optimizer is None:
            with torch.no_grad():
                module(x)
            continue
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(module(x), torch.randint(0, 10, shape[:1], generator=gen)).backward()
        optimizer.step()
    module.eval()
    module.apply(tq.disable_observer)  # else the export traces the observers' in-place updates
    example = torch.randn(1, *shape[1:], generator=gen)
    buffer = io.BytesIO()
    torch.onnx.export(module, example, buffer, opset_version=OPSET, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    return onnx.load_from_string(buffer.getvalue()), {"input": example.numpy()}


def scalar_qdq(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose per-tensor scales and zero points of shape [1] (PyTorch 1.13 writes
    them so) are scalars: ONNX Runtime refuses the former ("Scale and Zero-point must be a
    scalar"), Partita reads both as per tensor. The reference runs on this copy."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    operands = {i for n in out.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear") for i in n.input[1:]}
    operands |= {n.input[0] for n in out.graph.node if n.op_type == "Identity" and n.output[0] in operands}
    values = [*out.graph.initializer, *(a.t for n in out.graph.node if n.op_type == "Constant" and n.output[0] in operands
                                        for a in n.attribute if a.name == "value")]
    for t in values:
        if (t.name in operands or not t.name) and list(t.dims) == [1]:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).reshape(()), t.name))
    return out


TORCH_QAT = ("torch_qat_cnn", "torch_qat_mobilenet_v2")


# --- results --------------------------------------------------------------------------------------

def output_scales(model: onnx.ModelProto) -> dict[str, float]:
    """Each graph output produced by a DequantizeLinear: its scale."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    made = {o: n for n in model.graph.node for o in n.output}
    out = {}
    for o in model.graph.output:
        n = made.get(o.name)
        if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            out[o.name] = float(inits[n.input[1]].reshape(-1)[0])
    return out


def record(name: str, model: onnx.ModelProto, feed: dict[str, np.ndarray], out_dir: str, extra: dict,
           runnable: onnx.ModelProto | None = None) -> dict:
    """Writes NAME.onnx, the input, the reference outputs and intermediates, and ONNX Runtime's
    integer run; returns the manifest entry. ONNX Runtime runs `runnable` when given: `model` in a
    form it accepts (scalar_qdq)."""
    path = os.path.join(out_dir, name + ".onnx")
    onnx.save(model, path)
    runnable = runnable or model
    quantized = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear"]
    reference = session(with_outputs(runnable, quantized), optimized=False)
    names = [o.name for o in model.graph.output]
    values = dict(zip([o.name for o in reference.get_outputs()], reference.run(None, feed)))
    integer = dict(zip(names, session(runnable).run(names, feed)))
    scales = output_scales(model)
    lsb = {o: float(np.abs(integer[o].astype(np.float64) - values[o]).max() / scales[o]) for o in scales}
    files = {"model": name + ".onnx", "input": name + ".input.safetensors", "output": name + ".output.safetensors",
             "intermediate": name + ".intermediate.safetensors", "ort_int8_output": name + ".ort_int8.safetensors"}
    write_safetensors(os.path.join(out_dir, files["input"]), feed)
    write_safetensors(os.path.join(out_dir, files["output"]), {o: values[o] for o in names})
    write_safetensors(os.path.join(out_dir, files["intermediate"]), {q: values[q] for q in quantized})
    write_safetensors(os.path.join(out_dir, files["ort_int8_output"]), integer)
    counts: dict[str, int] = {}
    for n in model.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return {**files, **extra, "inputs": list(feed), "outputs": names, "intermediates": len(quantized),
            "ops": dict(sorted(counts.items())), "ort_int8_max_lsb_from_reference": lsb}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--size", type=int, default=64,
                        help="the input's height and width for resnet18 and mobilenet_v2 (the tests use 64)")
    args = parser.parse_args()
    all_names = [*HAND_BUILT, "resnet18", "mobilenet_v2", "digits_cnn", *TORCH_QAT]
    names = [n for n in args.only.split(",") if n] or all_names
    unknown = [n for n in names if n not in all_names]
    if unknown:
        parser.error(f"unknown models {unknown}; known: {', '.join(all_names)}")
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    manifest = {}
    for k, name in enumerate(all_names):
        if name not in names:
            continue
        seed = 1000 + k
        extra: dict = {"source": "onnx.helper"}
        runnable = None
        if name in HAND_BUILT:
            model, feed = hand_built(name, seed)
        elif name in TORCH_QAT:
            extra = {"source": "PyTorch QAT", "torch": torch.__version__}
            model, feed = torch_qat(name, seed, args.size)
            runnable = scalar_qdq(model)
        else:
            extra = {"source": "quantize_static", "float_model": name + ".float.onnx",
                     "calibration": name + ".calibration.safetensors"}
            if name == "digits_cnn":
                model, feed = digits_cnn(seed, args.out_dir, extra)
                extra["test_set"] = "digits_cnn.test.safetensors"
            else:
                model, feed = vision(name, seed, args.out_dir, args.size)
        manifest[name] = record(name, model, feed, args.out_dir, extra, runnable)
        entry = manifest[name]
        worst = max(entry["ort_int8_max_lsb_from_reference"].values(), default=0.0)
        print(f"{name}: {sum(entry['ops'].values())} nodes, {entry['intermediates']} quantized tensors; "
              f"ONNX Runtime's integer kernels are {worst:.2f} LSB of the output from the reference"
              + (f"; digits top-1: float {extra['float_accuracy']:.3f}, int8 {extra['int8_accuracy']:.3f}, "
                 f"agreement {extra['top1_agreement']:.3f}" if name == "digits_cnn" else ""))
        if name == "digits_cnn" and extra["top1_agreement"] < 0.97:
            print(f"make_models.py: digits_cnn: float and int8 top-1 agree on {extra['top1_agreement']:.3f} of the "
                  f"held-out digits (0.97 expected)", file=sys.stderr)
            return 1
    with open(os.path.join(args.out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"onnxruntime": ort.__version__, "onnx": onnx.__version__, "models": manifest}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
