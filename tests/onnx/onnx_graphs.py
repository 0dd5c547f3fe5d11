"""Small ONNX graphs built with onnx.helper, shared by the importer's tests."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def const(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes: list, inputs: list, outputs: list, inits: list | None = None, opset: int = 13) -> onnx.ModelProto:
    """A model of `nodes`; inputs and outputs are (name, elem_type, shape) triples (shape None: unknown)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs], inits or [])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
    m.ir_version = 8
    # The checker wants a shape on every output: take the ones shape inference finds.
    inferred = onnx.shape_inference.infer_shapes(m, data_prop=True)
    for o, io in zip(m.graph.output, inferred.graph.output):
        if not o.type.tensor_type.HasField("shape"):
            o.CopyFrom(io)
    return m


def w(shape, seed=1, scale=0.5) -> np.ndarray:
    return (scale * rng(seed).standard_normal(shape)).astype(np.float32)


def conv_net(opset: int = 13) -> onnx.ModelProto:
    """Conv (asymmetric pads, groups), BatchNorm, Clip (relu6), MaxPool (ceil_mode), AveragePool,
    GlobalAveragePool, Flatten, Gemm (transB), Softmax."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 2, 2], strides=[2, 2]),
        n("BatchNormalization", ["c1", "g", "be", "m", "v"], ["bn"], name="bn", epsilon=1e-3),
        n("Clip", ["bn", "lo", "hi"], ["r6"], name="relu6"),
        n("Conv", ["r6", "dw"], ["c2"], name="dw", group=4, auto_pad="SAME_UPPER", kernel_shape=[3, 3]),
        n("MaxPool", ["c2"], ["mp"], name="mp", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        n("AveragePool", ["mp"], ["ap"], name="ap", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        n("GlobalAveragePool", ["ap"], ["gp"], name="gp"),
        n("Flatten", ["gp"], ["fl"], name="fl"),
        n("Gemm", ["fl", "fc", "fcb"], ["logits"], name="fc", transB=1),
        n("Softmax", ["logits"], ["probs"], name="sm", axis=-1),
    ]
    inits = [const("w1", w((4, 3, 3, 3))), const("b1", w(4, 2)), const("g", 1 + w(4, 3, 0.1)), const("be", w(4, 4)),
             const("m", w(4, 5, 0.1)), const("v", 0.5 + np.abs(w(4, 6))), const("lo", np.float32(0)),
             const("hi", np.float32(6)), const("dw", w((4, 1, 3, 3), 7)), const("fc", w((5, 4), 8)),
             const("fcb", w(5, 9))]
    return model(nodes, [("x", F, [1, 3, 11, 11])], [("probs", F, None), ("gp", F, None)], inits, opset)


def encoder_block(opset: int = 13) -> onnx.ModelProto:
    """MatMul + Add (dense), the opset < 17 layer norm decomposition, erf GELU, a packed QKV
    cut by Slice, heads by Reshape / Transpose, scaled Q·Kᵀ, Softmax."""
    n = helper.make_node
    d, s, h = 8, 4, 2
    nodes = [
        n("MatMul", ["x", "wqkv"], ["mm"], name="qkv_mm"), n("Add", ["bqkv", "mm"], ["qkv"], name="qkv_add"),
        n("Slice", ["qkv", "s0", "s1", "ax"], ["q"], name="sq"), n("Slice", ["qkv", "s1", "s2", "ax"], ["k"], name="sk"),
        n("Slice", ["qkv", "s2", "s3", "ax"], ["v"], name="sv"),
        n("Reshape", ["q", "heads"], ["qh"], name="rq"), n("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3], name="tq"),
        n("Reshape", ["k", "heads"], ["kh"], name="rk"), n("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1], name="tk"),
        n("Reshape", ["v", "heads"], ["vh"], name="rv"), n("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3], name="tv"),
        n("MatMul", ["qt", "kt"], ["sc"], name="qk"), n("Div", ["sc", "sqrtd"], ["scs"], name="scale"),
        n("Softmax", ["scs"], ["p"], name="softmax", axis=-1), n("MatMul", ["p", "vt"], ["ctx"], name="pv"),
        n("Transpose", ["ctx"], ["ct"], perm=[0, 2, 1, 3], name="merge_t"),
        n("Reshape", ["ct", "back"], ["att"], name="merge_r"), n("Add", ["x", "att"], ["res"], name="residual"),
        # layer norm, decomposed as opset < 17 exporters write it
        n("ReduceMean", ["res"], ["mu"], axes=[-1], name="ln_mean"), n("Sub", ["res", "mu"], ["dif"], name="ln_sub"),
        n("Pow", ["dif", "two"], ["sq"], name="ln_pow"), n("ReduceMean", ["sq"], ["var"], axes=[-1], name="ln_var"),
        n("Add", ["var", "eps"], ["ve"], name="ln_eps"), n("Sqrt", ["ve"], ["sd"], name="ln_sqrt"),
        n("Div", ["dif", "sd"], ["nrm"], name="ln_div"), n("Mul", ["nrm", "lng"], ["lnm"], name="ln_mul"),
        n("Add", ["lnm", "lnb"], ["ln"], name="ln_add"),
        # erf GELU as PyTorch exports it
        n("MatMul", ["ln", "w1"], ["f1"], name="ff1"), n("Add", ["f1", "b1"], ["f1b"], name="ff1_add"),
        n("Div", ["f1b", "sqrt2"], ["gd"], name="g_div"), n("Erf", ["gd"], ["ge"], name="g_erf"),
        n("Add", ["ge", "one"], ["g1"], name="g_add"), n("Mul", ["f1b", "g1"], ["gm"], name="g_mul"),
        n("Mul", ["gm", "half"], ["gelu"], name="g_half"), n("MatMul", ["gelu", "w2"], ["out"], name="ff2"),
    ]
    inits = [const("wqkv", w((d, 3 * d), 11)), const("bqkv", w(3 * d, 12)), const("ax", np.array([2])),
             const("s0", np.array([0])), const("s1", np.array([d])), const("s2", np.array([2 * d])),
             const("s3", np.array([3 * d])), const("heads", np.array([1, s, h, d // h])),
             const("back", np.array([0, 0, -1])), const("sqrtd", np.float32(np.sqrt(d // h))),
             const("two", np.float32(2)), const("eps", np.float32(1e-5)), const("lng", 1 + w(d, 13, 0.1)),
             const("lnb", w(d, 14, 0.1)), const("w1", w((d, 2 * d), 15)), const("b1", w(2 * d, 16)),
             const("sqrt2", np.float32(np.sqrt(2))), const("one", np.float32(1)), const("half", np.float32(0.5)),
             const("w2", w((2 * d, 3), 17))]
    return model(nodes, [("x", F, [1, s, d])], [("out", F, None)], inits, opset)


def misc_ops(opset: int = 14) -> onnx.ModelProto:
    """Resize (nearest, bilinear), Pad, Concat, Slice backwards, Gather (a scalar index, an
    embedding of int64 ids), HardSwish, HardSigmoid, LeakyRelu, PRelu, reductions, Squeeze /
    Unsqueeze, broadcasting binary ops, Pow, Sqrt, Exp, Erf, and a Shape chain into a Reshape."""
    n = helper.make_node
    nodes = [
        n("Resize", ["img", "", "sc2"], ["up"], name="up", mode="nearest", coordinate_transformation_mode="asymmetric",
          nearest_mode="floor"),
        n("Resize", ["img", "", "sc2"], ["bil"], name="bil", mode="linear",
          coordinate_transformation_mode="pytorch_half_pixel"),
        n("Pad", ["img", "pads", "pv"], ["pd"], name="pad"),
        n("Concat", ["up", "bil"], ["cat"], name="cat", axis=1),
        n("Slice", ["cat", "st", "en", "axs", "stp"], ["sl"], name="rev"),
        n("HardSwish", ["sl"], ["hs"], name="hs"), n("HardSigmoid", ["pd"], ["hsg"], name="hsg", alpha=0.25, beta=0.4),
        n("LeakyRelu", ["hsg"], ["lr"], name="lr", alpha=0.1), n("PRelu", ["hs", "slope"], ["pr"], name="pr"),
        n("ReduceMean", ["pr"], ["rm"], name="rm", axes=[2, 3], keepdims=0),
        n("ReduceSum", ["lr", "rsax"], ["rs"], name="rs", keepdims=1),
        n("Gather", ["rm", "idx0"], ["g0"], name="g0", axis=1),
        n("Unsqueeze", ["g0", "uax"], ["g0u"], name="unsq"),
        n("Mul", ["rm", "g0u"], ["bm"], name="bm"), n("Sub", ["bm", "row"], ["bs"], name="bs"),
        n("Pow", ["bs", "three"], ["pw"], name="pw"), n("Abs", ["pw"], ["ab"], name="ab"),
        n("Sqrt", ["ab"], ["sq"], name="sq"), n("Exp", ["sq"], ["ex"], name="ex"), n("Erf", ["ex"], ["er"], name="er"),
        n("Gather", ["table", "ids"], ["emb"], name="emb"),
        n("Shape", ["emb"], ["shp"], name="shape"), n("Gather", ["shp", "i1"], ["d1"], name="dim1"),
        n("Unsqueeze", ["d1", "uax"], ["d1u"], name="d1u"), n("Concat", ["d1u", "m1"], ["tgt"], name="tgt", axis=0),
        n("Reshape", ["emb", "tgt"], ["embr"], name="embr"), n("Squeeze", ["rs", "sqax"], ["rsq"], name="rsq"),
        n("ReduceMax", ["rsq"], ["rmax"], name="rmax", axes=[-1], keepdims=0),
    ]
    inits = [const("sc2", np.array([1, 1, 2, 2], dtype=np.float32)), const("pads", np.array([0, 0, 1, 0, 0, 0, 0, 2])),
             const("pv", np.float32(0.5)), const("st", np.array([-1])), const("en", np.array([-100])),
             const("axs", np.array([3])), const("stp", np.array([-2])), const("slope", w((4, 1, 1), 21, 0.2)),
             const("rsax", np.array([1])), const("idx0", np.array(1)), const("uax", np.array([0])),
             const("row", w(4, 22)), const("three", np.float32(3)), const("table", w((10, 6), 23)),
             const("i1", np.array(1)), const("m1", np.array([-1])), const("sqax", np.array([1]))]
    return model(nodes, [("img", F, [1, 2, 3, 4]), ("ids", I64, [2, 3])],
                 [("er", F, [1, 4]), ("embr", F, [3, 12]), ("rmax", F, [1, 4])], inits, opset)


def mask_ops(opset: int = 14) -> onnx.ModelProto:
    """Masks as exporters write them: a padding mask compared from int64 ids at run time, a causal
    mask as a bool initializer (PyTorch folds `tril(ones)` into one), Not, Or, And, Xor, Where as
    masked_fill before a Softmax, Trilu of a computed value, comparisons of floats, and Casts
    between bool, int32 and float; TopK's values and indices (the smallest, along an inner axis);
    ArgMax, ArgMin (the last of equals), CumSum (exclusive, reversed), GatherElements by TopK's
    indices."""
    n = helper.make_node
    nodes = [
        n("Equal", ["keep", "zero"], ["pad"], name="pad"),  # [2, 5]
        n("Unsqueeze", ["pad", "ax12"], ["pad4"], name="pad4"),  # [2, 1, 1, 5]
        n("Not", ["causal"], ["future"], name="future"),
        n("Or", ["future", "pad4"], ["hidden"], name="hidden"),  # [2, 1, 5, 5]
        n("Where", ["hidden", "minus_big", "s"], ["masked"], name="masked_fill"),
        n("Softmax", ["masked"], ["p"], name="softmax", axis=-1),
        n("Trilu", ["s", "k1"], ["low"], name="tril", upper=0),
        n("Trilu", ["s"], ["up"], name="triu", upper=1),
        n("Add", ["low", "up"], ["tri"], name="tri"),
        n("Greater", ["s", "half"], ["big"], name="big"), n("LessOrEqual", ["s", "row"], ["small"], name="small"),
        n("And", ["big", "causal"], ["both"], name="both"), n("Xor", ["big", "small"], ["either"], name="either"),
        n("GreaterOrEqual", ["s", "s"], ["same"], name="same"), n("Less", ["row", "s"], ["below"], name="below"),
        n("Or", ["both", "either"], ["any"], name="any"), n("And", ["any", "same"], ["all"], name="all"),
        n("Xor", ["all", "below"], ["mix"], name="mix"),
        n("Cast", ["mix"], ["mixf"], name="mixf", to=F),
        n("Mul", ["s", "ten"], ["s10"], name="s10"), n("Cast", ["s10"], ["si"], name="toint", to=TensorProto.INT32),
        n("Cast", ["si"], ["sf"], name="tofloat", to=F),
        n("Where", ["big", "sf", "tri"], ["sel"], name="select"),
        n("TopK", ["sel", "two"], ["tv", "ti"], name="top2", axis=2, largest=0),
        n("Cast", ["ti"], ["tif"], name="tif", to=F),
        n("ArgMax", ["s"], ["am"], name="am", axis=-1, keepdims=0),
        n("ArgMin", ["s"], ["an"], name="an", axis=1, select_last_index=1),
        n("Cast", ["am"], ["amf"], name="amf", to=F), n("Cast", ["an"], ["anf"], name="anf", to=F),
        n("CumSum", ["sel", "ax3"], ["cs"], name="cs", exclusive=1, reverse=1),
        n("GatherElements", ["sel", "ti"], ["ge"], name="ge", axis=2),
    ]
    causal = np.tril(np.ones((5, 5), dtype=bool)).reshape(1, 1, 5, 5)
    inits = [const("zero", np.array(0)), const("ax12", np.array([1, 2])), const("causal", causal),
             const("minus_big", np.float32(-1e9)), const("k1", np.array(1)), const("half", np.float32(0.5)),
             const("row", w(5, 24)), const("ten", np.float32(10)), const("two", np.array([2])),
             const("ax3", np.array(3))]
    return model(nodes, [("s", F, [2, 3, 5, 5]), ("keep", I64, [2, 5])],
                 [("p", F, [2, 3, 5, 5]), ("mixf", F, [2, 3, 5, 5]), ("sel", F, [2, 3, 5, 5]), ("tv", F, [2, 3, 2, 5]),
                  ("tif", F, [2, 3, 2, 5]), ("amf", F, [2, 3, 5]), ("anf", F, [2, 1, 5, 5]), ("cs", F, [2, 3, 5, 5]),
                  ("ge", F, [2, 3, 2, 5])], inits, opset)


def recurrent_ops(opset: int = 14) -> onnx.ModelProto:
    """The recurrent layers as ONNX writes them beyond PyTorch's exports: an LSTM read backwards
    from given initial states with a clip, a GRU without linear_before_reset in layout 1
    (batch first) from a given state, a bidirectional RNN with Relu, and every output used."""
    n = helper.make_node
    hid = 6
    nodes = [
        n("LSTM", ["x", "lw", "lr", "lb", "", "h0", "c0"], ["ly", "lh", "lc"], name="lstm", hidden_size=hid,
          direction="reverse", clip=2.5),
        n("GRU", ["xb", "gw", "gr", "gb", "", "gh0"], ["gy", "gh"], name="gru", hidden_size=hid, layout=1),
        n("RNN", ["x", "rw", "rr", ""], ["ry", "rh"], name="rnn", hidden_size=hid, direction="bidirectional",
          activations=["Relu", "Relu"]),
    ]
    inits = [const("lw", w((1, 4 * hid, 5), 31)), const("lr", w((1, 4 * hid, hid), 32)), const("lb", w((1, 8 * hid), 33)),
             const("gw", w((1, 3 * hid, 5), 34)), const("gr", w((1, 3 * hid, hid), 35)), const("gb", w((1, 6 * hid), 36)),
             const("rw", w((2, hid, 5), 37)), const("rr", w((2, hid, hid), 38))]
    return model(nodes, [("x", F, [7, 2, 5]), ("xb", F, [2, 7, 5]), ("h0", F, [1, 2, hid]), ("c0", F, [1, 2, hid]),
                         ("gh0", F, [2, 1, hid])],
                 [("ly", F, [7, 1, 2, hid]), ("lh", F, [1, 2, hid]), ("lc", F, [1, 2, hid]), ("gy", F, [2, 7, 1, hid]),
                  ("gh", F, [2, 1, hid]), ("ry", F, [7, 2, 2, hid]), ("rh", F, [2, 2, hid])], inits, opset)


def conv_ops(opset: int = 13) -> onnx.ModelProto:
    """Conv with pads larger before (and after) each axis and SAME_LOWER, a 1-D Conv with groups,
    dilation, asymmetric pads and a bias; ConvTranspose with strides, output_padding, groups,
    dilation and a bias, with an output_shape (an odd total padding, and one beyond the natural
    extent) and with SAME_UPPER; DepthToSpace in both modes, SpaceToDepth; MaxPool and
    AveragePool (counting the padding or not) with asymmetric pads or SAME_LOWER, and 1-D, one
    with ceil_mode; a 1-D ConvTranspose with groups, dilation and output_padding, and one with an
    output_shape."""
    n = helper.make_node
    nodes = [
        n("Conv", ["img", "cw"], ["c_begin"], name="c_begin", pads=[2, 1, 1, 1]),
        n("Conv", ["img", "cw"], ["c_end"], name="c_end", pads=[0, 1, 1, 2], strides=[2, 2]),
        n("Conv", ["img", "cw", "cb"], ["c_same"], name="c_same", auto_pad="SAME_LOWER", strides=[2, 2]),
        n("Conv", ["seq", "w1d", "b1d"], ["c1d"], name="c1d", group=2, dilations=[2], pads=[3, 1], strides=[2]),
        n("Conv", ["seq", "w1d"], ["c1d_same"], name="c1d_same", group=2, auto_pad="SAME_UPPER", strides=[2]),
        n("ConvTranspose", ["c_same", "tw", "tb"], ["up"], name="up", strides=[2, 2], pads=[1, 0, 1, 1],
          output_padding=[1, 0], group=2),
        n("ConvTranspose", ["img", "tw2"], ["up_shape"], name="up_shape", strides=[2, 3], output_shape=[12, 15],
          dilations=[1, 2]),
        n("ConvTranspose", ["img", "tw2"], ["up_same"], name="up_same", strides=[2, 2], auto_pad="SAME_UPPER"),
        n("DepthToSpace", ["up_shape"], ["d2s_dcr"], name="d2s_dcr", blocksize=2),
        n("DepthToSpace", ["up_same"], ["d2s_crd"], name="d2s_crd", blocksize=2, mode="CRD"),
        n("SpaceToDepth", ["c_begin"], ["s2d"], name="s2d", blocksize=2),
        n("MaxPool", ["img"], ["mp"], name="mp", kernel_shape=[2, 3], pads=[1, 0, 0, 2], strides=[2, 2]),
        n("MaxPool", ["img"], ["mp_same"], name="mp_same", kernel_shape=[3, 3], auto_pad="SAME_LOWER", strides=[2, 2]),
        n("AveragePool", ["img"], ["ap"], name="ap", kernel_shape=[3, 2], pads=[0, 1, 2, 0]),
        n("AveragePool", ["img"], ["ap_in"], name="ap_in", kernel_shape=[3, 3], pads=[2, 0, 1, 1], strides=[2, 1],
          count_include_pad=1),
        n("ConvTranspose", ["seq", "tw1d", "tb1d"], ["up1d"], name="up1d", strides=[2], pads=[1, 0], output_padding=[1],
          group=2, dilations=[2]),
        n("ConvTranspose", ["seq", "tw1d"], ["up1d_shape"], name="up1d_shape", strides=[3], output_shape=[32]),
        n("MaxPool", ["seq"], ["mp1d"], name="mp1d", kernel_shape=[3], pads=[1, 0], strides=[2], ceil_mode=1),
        n("AveragePool", ["seq"], ["ap1d"], name="ap1d", kernel_shape=[2], pads=[1, 1], strides=[3],
          count_include_pad=1),
    ]
    inits = [const("cw", w((4, 4, 3, 3), 31)), const("cb", w(4, 32)), const("w1d", w((6, 2, 3), 33)),
             const("b1d", w(6, 34)), const("tw", w((4, 3, 3, 3), 35)), const("tb", w(6, 36)),
             const("tw2", w((4, 4, 3, 2), 37)), const("tw1d", w((4, 3, 3), 38)), const("tb1d", w(6, 39))]
    outs = ["c_end", "c1d", "c1d_same", "up", "d2s_dcr", "d2s_crd", "s2d", "mp", "mp_same", "ap", "ap_in", "mp1d", "ap1d", "up1d",
            "up1d_shape"]
    return model(nodes, [("img", F, [1, 4, 5, 6]), ("seq", F, [1, 4, 11])], [(o, F, None) for o in outs], inits, opset)


def inputs_for(m: onnx.ModelProto, seed: int = 3) -> dict[str, np.ndarray]:
    """Random feeds for the model's inputs (int64 ids within [0, 10))."""
    feeds = {}
    for i, vi in enumerate(m.graph.input):
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == I64:
            feeds[vi.name] = rng(seed + i).integers(0, 10, shape).astype(np.int64)
        else:
            feeds[vi.name] = rng(seed + i).standard_normal(shape).astype(np.float32)
    return feeds
