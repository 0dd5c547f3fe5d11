#!/usr/bin/env python3
"""The importer's calibration (tools/partita_onnx/calibrate.py) against ONNX Runtime's quantize_static.

    compare_calibration.py MODELS_DIR [NAME...]     (default: resnet18 mobilenet_v2 digits_cnn)

For each model make_models.py quantized with quantize_static (MODELS_DIR/NAME.float.onnx and the
same calibration batches, NAME.calibration.safetensors), quantizes the float model with the
calibrator, min/max and per-channel weights, and compares the two QDQ graphs parameter by
parameter: the tensors quantized, activation scales and zero points, weight scales and values,
bias scales and values. Twice: with the calibrator's own numpy evaluation of the ranges, and
with the ranges taken from ONNX Runtime's float run, which must give identical parameters. Then
both graphs' outputs on NAME.input.safetensors. Exits 77 when onnxruntime is missing, except
under CI=true, where that fails.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))

import make_models as mm  # noqa: E402  (exits 77 without onnxruntime and the rest)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from partita_onnx import calibrate as cal  # noqa: E402
from partita_onnx.limits import Budget  # noqa: E402


def parameters(model: onnx.ModelProto) -> tuple[dict, dict]:
    """(activation -> (scale, zero point), constant -> (scale, quantized values)) of a QDQ graph;
    an activation that is a graph output is named by the output."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    outputs = {o.name for o in model.graph.output}
    dq_out = {n.input[0]: n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"}
    acts, consts = {}, {}
    for n in model.graph.node:
        if n.op_type == "QuantizeLinear":
            name = dq_out[n.output[0]] if dq_out.get(n.output[0]) in outputs else n.input[0]
            acts[name] = (inits[n.input[1]], inits[n.input[2]])
        elif n.op_type == "DequantizeLinear" and n.input[0] in inits:
            consts[n.input[0].removesuffix("_quantized")] = (inits[n.input[1]], inits[n.input[0]])
    return acts, consts


def ort_ranges(float_model: onnx.ModelProto, batches: list[dict[str, np.ndarray]]) -> dict[str, tuple[float, float]]:
    """Every tensor's min and max over the batches, as ONNX Runtime's float run computes them."""
    names = [*{i: None for i in batches[0]}, *(o for n in float_model.graph.node for o in n.output)]
    run = mm.session(mm.with_outputs(float_model, names), optimized=False)
    out, ranges = [o.name for o in run.get_outputs()], {}
    for feed in batches:
        values = dict(zip(out, run.run(None, feed)))
        values.update(feed)
        for name in names:
            v = values[name]
            lo, hi = ranges.get(name, (np.inf, -np.inf))
            ranges[name] = (min(lo, float(v.min())), max(hi, float(v.max())))
    return ranges


def compare(mine: onnx.ModelProto, theirs: onnx.ModelProto) -> dict:
    (ma, mc), (ta, tc) = parameters(mine), parameters(theirs)
    if set(ma) != set(ta) or set(mc) != set(tc):
        raise SystemExit(f"compare_calibration.py: different tensors quantized: only the calibrator's "
                         f"{sorted(set(ma) ^ set(ta) | set(mc) ^ set(tc))[:6]}")
    weights = [c for c in mc if mc[c][1].dtype == np.int8]
    biases = [c for c in mc if mc[c][1].dtype == np.int32]

    def rel(pairs):
        return max((float(np.max(np.abs(a[0].astype(np.float64) - b[0]) / b[0])) for a, b in pairs), default=0.0)

    return {"activations": len(ma), "scales_equal": sum(np.array_equal(ma[t][0], ta[t][0]) for t in ma),
            "zero_points_equal": sum(np.array_equal(ma[t][1], ta[t][1]) for t in ma),
            "max_rel_scale": rel((ma[t], ta[t]) for t in ma),
            "weights": len(weights), "weights_equal": sum(np.array_equal(mc[w][0], tc[w][0])
                                                          and np.array_equal(mc[w][1], tc[w][1]) for w in weights),
            "biases": len(biases), "biases_equal": sum(np.array_equal(mc[b][0], tc[b][0])
                                                       and np.array_equal(mc[b][1], tc[b][1]) for b in biases),
            "max_rel_bias_scale": rel((mc[b], tc[b]) for b in biases)}


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    models_dir, names = sys.argv[1], sys.argv[2:] or ["resnet18", "mobilenet_v2", "digits_cnn"]
    failed = False
    for name in names:
        base = os.path.join(models_dir, name)
        float_model, theirs = onnx.load(base + ".float.onnx"), onnx.load(base + ".onnx")
        inputs = {vi.name: [d.dim_value or None for d in vi.type.tensor_type.shape.dim] for vi in float_model.graph.input}
        batches = cal.read_samples(base + ".calibration.safetensors", inputs, Budget())
        mine = cal.to_qdq(float_model, cal.calibrate(float_model, batches, cal.Options()), cal.Options())
        same_ranges = cal.to_qdq(float_model, ort_ranges(float_model, batches), cal.Options())
        own, exact = compare(mine, theirs), compare(same_ranges, theirs)
        feed = cal.read_samples(base + ".input.safetensors", inputs, Budget())[0]
        a, b = (mm.session(m, optimized=False).run(None, feed)[0] for m in (mine, theirs))
        scale = max(parameters(theirs)[0].get(o.name, (np.float32(1),))[0].item() for o in theirs.graph.output)
        print(f"{name}: {own['activations']} activations: scales equal {own['scales_equal']}, zero points equal "
              f"{own['zero_points_equal']}, scales within {own['max_rel_scale']:.1e} (relative); "
              f"{own['weights']} weights equal {own['weights_equal']}; {own['biases']} biases equal "
              f"{own['biases_equal']}, scales within {own['max_rel_bias_scale']:.1e}; outputs within "
              f"{float(np.abs(a - b).max()) / scale:.0f} LSB. With ONNX Runtime's ranges: "
              f"{exact['scales_equal'] + exact['weights_equal'] + exact['biases_equal']} of "
              f"{exact['activations'] + exact['weights'] + exact['biases']} parameters identical")
        if own["max_rel_scale"] > 1e-4 or own["zero_points_equal"] != own["activations"] \
                or own["weights_equal"] != own["weights"] \
                or exact["scales_equal"] != exact["activations"] or exact["zero_points_equal"] != exact["activations"] \
                or exact["weights_equal"] != exact["weights"] or exact["biases_equal"] != exact["biases"]:
            print(f"compare_calibration.py: {name}: the calibrator and quantize_static disagree", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
