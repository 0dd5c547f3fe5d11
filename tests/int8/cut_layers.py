#!/usr/bin/env python3
"""Cuts quantized layers out of QDQ models and imports each as a model of its own.

    cut_layers.py MODELS_DIR OUT_DIR --importer tools/partita_import.py MODEL [MODEL...]

For every QuantizeLinear of MODELS_DIR/MODEL.onnx that reads an op (a node unit: the
DequantizeLinear of quantized activations, the float op, the QuantizeLinear), the layer's kind is
its op with the attributes that pick a different kernel (kernel size, stride, depthwise, a 1x1
convolution that widens or narrows the channels). The first layer of each kind is cut out with
onnx.utils.Extractor, its quantized inputs becoming graph inputs, and imported by the importer
as namespace MODEL_lNN (NN: the QuantizeLinear's index among the model's). Writes, in OUT_DIR:

  MODEL_lNN.onnx, MODEL_lNN.hpp, MODEL_lNN.safetensors   the layer and its import
  layers.json    each layer's namespace, model, kind, input and output tensor names
  layers.hpp     includes every import; `int8_layer_names` and the tuple `int8_layer_nets`

The quantized inputs and outputs are tensors of MODEL.intermediate.safetensors (make_models.py),
so a layer can be fed ONNX Runtime's input and compared with ONNX Runtime's output.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import onnx
from onnx import helper, shape_inference


def attributes(node: onnx.NodeProto) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def unit_nodes(graph: onnx.GraphProto, quantize: onnx.NodeProto) -> tuple[list, list]:
    """The float ops between a QuantizeLinear and the DequantizeLinear of activations it reads
    (in graph order), and the quantized activations those read."""
    constant = {i.name for i in graph.initializer} | {n.output[0] for n in graph.node if n.op_type == "Constant"}
    producer = {o: n for n in graph.node for o in n.output}
    ops, inputs, pending, seen = [], [], [quantize.input[0]], set()
    while pending:
        name = pending.pop()
        if name in seen or name in constant:
            continue
        seen.add(name)
        node = producer.get(name)
        if node is None:  # a graph input, quantized by this QuantizeLinear itself
            inputs.append(name)
        elif node.op_type == "DequantizeLinear":
            if node.input[0] not in constant:
                inputs.append(node.input[0])
        else:
            ops.append(node)
            pending.extend(node.input)
    order = {id(n): i for i, n in enumerate(graph.node)}
    return sorted(ops, key=lambda n: order[id(n)]), sorted(inputs)


def kind(graph: onnx.GraphProto, ops: list, shapes: dict) -> str:
    """The layer's kind: what decides which kernel runs it."""
    if not ops:
        return "QuantizeLinear of the float input"
    words = []
    for node in ops:
        a = attributes(node)
        if node.op_type == "Conv":
            k = "x".join(map(str, a.get("kernel_shape", [])))
            s = "x".join(map(str, a.get("strides", [1, 1])))
            cin = shapes[node.input[0]][1]
            cout = shapes[node.output[0]][1]
            if a.get("group", 1) > 1 and a.get("group") == cin:
                words.append(f"Conv {k} s{s} depthwise")
            elif k == "1x1":
                words.append(f"Conv {k} s{s} " + ("widening" if cout > cin else "narrowing"))
            else:
                words.append(f"Conv {k} s{s}")
        elif node.op_type in ("MaxPool", "AveragePool"):
            words.append(f"{node.op_type} {'x'.join(map(str, a['kernel_shape']))} s{'x'.join(map(str, a.get('strides', [1])))}")
        else:
            words.append(node.op_type)
    return " + ".join(words)


def tensor_shapes(model: onnx.ModelProto) -> dict:
    shapes = {}
    for v in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    return shapes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models_dir")
    ap.add_argument("out_dir")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--importer", required=True)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)

    layers = []
    for name in args.models:
        model = shape_inference.infer_shapes(onnx.load(os.path.join(args.models_dir, name + ".onnx")))
        shapes = tensor_shapes(model)
        extractor = onnx.utils.Extractor(model)
        seen_kinds = set()
        quantizes = [n for n in model.graph.node if n.op_type == "QuantizeLinear"]
        for index, q in enumerate(quantizes):
            ops, inputs = unit_nodes(model.graph, q)
            what = kind(model.graph, ops, shapes)
            if what in seen_kinds:
                continue
            seen_kinds.add(what)
            ns = f"{name}_l{index:02d}"
            cut = extractor.extract_model(inputs, [q.output[0]])
            cut.graph.name = ns
            path = os.path.join(args.out_dir, ns + ".onnx")
            onnx.save(cut, path)
            subprocess.run([sys.executable, args.importer, path, "--out", args.out_dir, "--namespace", ns],
                           check=True, stdout=subprocess.DEVNULL)
            layers.append({"namespace": ns, "model": name, "kind": what, "node": ops[0].name if ops else q.name,
                           "inputs": inputs, "output": q.output[0]})

    with open(os.path.join(args.out_dir, "layers.json"), "w") as f:
        json.dump(layers, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out_dir, "layers.hpp"), "w") as f:
        f.write("#pragma once\n// Generated by tests/int8/cut_layers.py; do not edit.\n#include <tuple>\n\n")
        f.writelines(f'#include "{layer["namespace"]}.hpp"\n' for layer in layers)
        f.write("\ninline constexpr const char* int8_layer_names[] = {\n")
        f.writelines(f'    "{layer["namespace"]}",\n' for layer in layers)
        f.write("};\nusing int8_layer_nets = std::tuple<\n")
        f.write(",\n".join(f"    {layer['namespace']}::net" for layer in layers))
        f.write(">;\n")
    print(f"cut_layers.py: {len(layers)} layers into {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
