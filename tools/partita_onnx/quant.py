"""ONNX's linear quantization, as every stage of the importer reads it.

`QuantizeLinear` computes q = saturate(round_half_even(x / scale) + zero_point) and
`DequantizeLinear` y = (q - zero_point) * scale; the scale is per tensor (rank 0, or one
element) or per axis (rank 1, one element per index of the `axis` of x), the zero point has the
scale's shape and gives the quantized type (u8, i8 or i32 in Partita). The checks here say, in
the user's terms, what makes a scale or zero point unusable; fold.py quantizes constants with
`quantize`, ops.py maps the nodes, qlinear.py expands operator forms into these two nodes.
"""
from __future__ import annotations

import math

import numpy as np

# The element types of a zero point (the quantized type) and their Partita dtypes.
ZERO_POINT_TYPES = {np.dtype(np.uint8): "u8", np.dtype(np.int8): "i8", np.dtype(np.int32): "i32"}

# The default quantized type of QuantizeLinear without a zero point (ONNX: uint8).
DEFAULT_TYPE = np.dtype(np.uint8)


def zero_point_type_problem(dtype: np.dtype | None) -> str | None:
    """Why a zero point of element type `dtype` cannot be Partita's, or None."""
    if dtype in ZERO_POINT_TYPES:
        return None
    name = str(dtype) if dtype is not None else "of an element type numpy cannot hold (float8?)"
    if dtype is not None and dtype.kind in "iu":
        return f"the zero point is {name}: Partita quantizes to u8, i8 or i32 ({name} is not supported)"
    return f"the zero point is {name}: Partita quantizes to u8, i8 or i32 (float8 and other types are not supported)"


def scale_problem(name: str, scale: np.ndarray) -> str | None:
    """Why `scale` (constant `name`) cannot scale a quantized tensor, or None."""
    if scale.dtype.kind != "f":
        return f"the scale '{name}' is {scale.dtype}, not a float"
    if scale.ndim > 1:
        return (f"the scale '{name}' has rank {scale.ndim}: Partita's scales are per tensor (one element) or per "
                f"axis (rank 1); block quantization is not supported")
    if scale.size == 0:
        return f"the scale '{name}' is empty"
    flat = scale.reshape(-1).astype(np.float64)
    bad = np.flatnonzero(~(np.isfinite(flat) & (flat > 0)))
    if bad.size:
        k = int(bad[0])
        where = f" at index {k}" if scale.size > 1 else ""
        return f"scale '{name}' is {flat[k]:g}{where}; a quantized tensor needs a positive finite scale"
    return None


def zero_point_problem(name: str, zp: np.ndarray, scale: np.ndarray) -> str | None:
    """Why zero point `zp` (constant `name`) does not go with `scale`, or None."""
    why = zero_point_type_problem(zp.dtype)
    if why is not None:
        return why
    if zp.shape != scale.shape:
        return (f"the zero point '{name}' has shape {list(zp.shape)} and the scale {list(scale.shape)}; they must "
                f"have the same shape")
    info = np.iinfo(zp.dtype)
    wide = zp.astype(np.int64).reshape(-1)
    bad = np.flatnonzero((wide < info.min) | (wide > info.max))
    if bad.size:
        return f"the zero point '{name}' holds {wide[bad[0]]}, outside {zp.dtype}'s range [{info.min}, {info.max}]"
    return None


def axis_problem(axis: int, rank: int, scale: np.ndarray, shape) -> tuple[int, str | None]:
    """The normalized axis of a per-axis `scale` on a tensor of `shape`, and what is wrong, if
    anything."""
    if not -rank <= axis < rank:
        return axis, f"axis {axis} is outside the input's rank {rank}"
    axis = axis + rank if axis < 0 else axis
    if scale.size != shape[axis]:
        return axis, (f"the scale has {scale.size} elements, but axis {axis} of the input has {shape[axis]}; a "
                      f"per-axis scale has one element per index")
    return axis, None


def per_axis(scale: np.ndarray) -> bool:
    """True for a per-axis scale (rank 1 of more than one element)."""
    return scale.ndim == 1 and scale.size > 1


def broadcast(v: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A per-axis vector shaped to broadcast along `axis` of a rank-`rank` tensor; a per-tensor
    value as a scalar."""
    if not per_axis(v):
        return v.reshape(())
    shape = [1] * rank
    shape[axis] = v.size
    return v.reshape(shape)


def quantize(x: np.ndarray, scale: np.ndarray, zp: np.ndarray, axis: int) -> np.ndarray:
    """ONNX's QuantizeLinear in float32, as ONNX Runtime computes it: x / scale rounded half to
    even, plus the zero point, saturated to the zero point's type. `axis` is normalized."""
    info = np.iinfo(zp.dtype)
    s = broadcast(scale.astype(np.float32), axis, x.ndim)
    z = broadcast(zp, axis, x.ndim).astype(np.float64)
    with np.errstate(all="ignore"):
        q = np.rint(x.astype(np.float32) / s).astype(np.float64) + z
    return np.clip(q, info.min, info.max).astype(zp.dtype)


def exact_accumulation(bound: float) -> bool:
    """True when integer sums whose magnitude is at most `bound` are exact in float32."""
    return math.isfinite(bound) and bound < 2 ** 24
