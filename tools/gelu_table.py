#!/usr/bin/env python3
"""Writes the cpu backend's GELU table: include/partita/backends/cpu/detail/simd/simd_gelu_table.hpp.

The AVX-512 GELU computes the upper tail of the standard normal, Q(y) = erfc(y / sqrt 2) / 2,
for y = |x| below 3.9375 from 32 polynomials, one per interval of width 1/8 centred on
y = i / 8. Each is Q's Taylor polynomial of degree 6 about its centre, in h = 8 y - i
(|h| <= 1/2), with coefficients

    a_0 = Q(c),    a_n = -phi^(n-1)(c) / (n! 8^n)  (n >= 1),

where phi is the standard normal density and phi^(m)(c) = (-1)^m He_m(c) phi(c) (He_m the
probabilists' Hermite polynomials). The largest relative error of a truncated polynomial on
its interval is printed (2^-28.5): far under a float's rounding, so the function's error is
that of evaluating it in float.

    python3 tools/gelu_table.py          rewrites the header
    python3 tools/gelu_table.py --check  exits 1 if the header differs from what it would write
"""

import math
import pathlib
import struct
import sys

INTERVALS = 32  # one AVX-512 two-register permute picks among 32 floats
SCALE = 8.0  # intervals per unit of y
DEGREE = 6
HEADER = pathlib.Path(__file__).resolve().parent.parent / "include/partita/backends/cpu/detail/simd/simd_gelu_table.hpp"


def hermite(n: int, x: float) -> float:
    """He_n(x), by the recurrence He_(k+1) = x He_k - k He_(k-1)."""
    if n == 0:
        return 1.0
    a, b = 1.0, x
    for k in range(1, n):
        a, b = b, x * b - k * a
    return b


def upper_tail(y: float) -> float:
    return 0.5 * math.erfc(y / math.sqrt(2.0))


def density(y: float) -> float:
    return math.exp(-0.5 * y * y) / math.sqrt(2.0 * math.pi)


def coefficients() -> list[list[float]]:
    """coefficients()[n][i]: the coefficient of h^n on interval i, in double."""
    table = [[0.0] * INTERVALS for _ in range(DEGREE + 1)]
    for i in range(INTERVALS):
        c = i / SCALE
        table[0][i] = upper_tail(c)
        for n in range(1, DEGREE + 1):
            derivative = -((-1) ** (n - 1)) * hermite(n - 1, c) * density(c)
            table[n][i] = derivative / math.factorial(n) / SCALE**n
    return table


def truncation_error(table: list[list[float]]) -> float:
    """The largest relative distance from Q of the double polynomials, on a grid of each interval."""
    worst = 0.0
    for i in range(INTERVALS):
        for step in range(201):
            h = -0.5 + step / 200.0
            y = (i + h) / SCALE
            if y < 0.0:
                continue
            p = sum(table[n][i] * h**n for n in range(DEGREE + 1))
            worst = max(worst, abs(p - upper_tail(y)) / upper_tail(y))
    return worst


def as_float(v: float) -> str:
    """v rounded to float, as a C++ hexadecimal literal without trailing zeros."""
    mantissa, exponent = float.hex(struct.unpack("f", struct.pack("f", v))[0]).split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + exponent + "f"


def render(table: list[list[float]]) -> str:
    rows = []
    for n in range(DEGREE + 1):
        values = [as_float(v) for v in table[n]]
        lines = ["      " + ", ".join(values[j : j + 4]) for j in range(0, INTERVALS, 4)]
        rows.append("    {\n" + ",\n".join(lines) + "},")
    return (
        "#pragma once\n"
        "/// The coefficients of the AVX-512 GELU's 32 polynomials for the normal tail (generated).\n"
        "// Written by tools/gelu_table.py, which says how they are derived; do not edit by hand.\n"
        "// gelu_tail_table[n][i]: the coefficient of h^n on interval i, where y = (i + h) / 8 and\n"
        f"// |h| <= 1/2; the polynomial approximates erfc(y / sqrt 2) / 2 (degree {DEGREE}).\n\n"
        "namespace partita::detail::simd::math_detail {\n\n"
        f"alignas(64) inline constexpr float gelu_tail_table[{DEGREE + 1}][{INTERVALS}] = {{\n"
        + "\n".join(rows)
        + "\n};\n\n}  // namespace partita::detail::simd::math_detail\n"
    )


def main() -> int:
    table = coefficients()
    text = render(table)
    if "--check" in sys.argv[1:]:
        if HEADER.read_text(encoding="utf-8") != text:
            print(f"{HEADER} differs from what tools/gelu_table.py writes")
            return 1
        return 0
    HEADER.write_text(text, encoding="utf-8")
    error = truncation_error(table)
    print(f"wrote {HEADER}: largest relative truncation error {error:.3g} (2^{math.log2(error):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
