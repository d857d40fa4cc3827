"""Float narrowing written once, over the integer operations every code generator has.

`f32_to_bf16_bits` is the one rounding of an f32's bits to bf16: nearest even or toward zero; subnormals kept (bf16
has f32's exponent range); overflow to inf; a NaN keeps its sign and the top of its payload, made quiet only where
that payload would be empty, so a bf16 NaN widened to f32 and narrowed back keeps every bit. It is written against
`IntOps`, so each backend realizes the same algorithm in its own language: `PY` folds constants (the IR reader,
cpu_ref's constants), cpu_ref passes llvmlite builder ops, opencl C-expression ops. A backend only chooses the
spelling of and/or/add/sub/shift/compare/select on unsigned 32-bit values. The fp8 rounding, written the same way,
is in `numerics_fp8`.
"""

from __future__ import annotations

import math
import struct
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")
C = TypeVar("C")


class IntOps(Protocol, Generic[V, C]):
    """Unsigned 32-bit integer operations (`V` a value, `C` a condition), wrapping; every shift amount, constant
    (`shr`, `shl`) or variable (`shrv`), is below 32, so no backend meets its language's undefined shifts."""

    def const(self, v: int) -> V: ...
    def and_(self, a: V, b: V) -> V: ...
    def or_(self, a: V, b: V) -> V: ...
    def add(self, a: V, b: V) -> V: ...
    def sub(self, a: V, b: V) -> V: ...
    def shr(self, a: V, k: int) -> V: ...
    def shl(self, a: V, k: int) -> V: ...
    def shrv(self, a: V, k: V) -> V: ...
    def ugt(self, a: V, b: V) -> C: ...
    def eq(self, a: V, b: V) -> C: ...
    def select(self, c: C, a: V, b: V) -> V: ...


def f32_to_bf16_bits(o: IntOps[V, C], x: V, rtz: bool = False) -> V:
    """The bf16 bits (in the low 16 bits) of the f32 whose bits are `x`."""
    high = o.shr(x, 16)
    if rtz:
        rounded = high
    else:  # add just under half an ulp, plus one when the kept part is odd: ties go to even
        rounded = o.shr(o.add(x, o.add(o.and_(high, o.const(1)), o.const(0x7FFF))), 16)
    nan = o.ugt(o.and_(x, o.const(0x7FFFFFFF)), o.const(0x7F800000))
    payload = o.ugt(o.and_(high, o.const(0x7F)), o.const(0))
    return o.select(nan, o.select(payload, high, o.or_(high, o.const(0x40))), rounded)


class _PyOps:
    """Python ints: constant folding."""

    def const(self, v: int) -> int:
        return v

    def and_(self, a: int, b: int) -> int:
        return a & b

    def or_(self, a: int, b: int) -> int:
        return a | b

    def add(self, a: int, b: int) -> int:
        return (a + b) & 0xFFFFFFFF

    def sub(self, a: int, b: int) -> int:
        return (a - b) & 0xFFFFFFFF

    def shr(self, a: int, k: int) -> int:
        return a >> k

    def shl(self, a: int, k: int) -> int:
        return (a << k) & 0xFFFFFFFF

    def shrv(self, a: int, k: int) -> int:
        assert k < 32, k
        return a >> k

    def ugt(self, a: int, b: int) -> bool:
        return a > b

    def eq(self, a: int, b: int) -> bool:
        return a == b

    def select(self, c: bool, a: int, b: int) -> int:
        return a if c else b


PY = _PyOps()


def float_bits(v: float) -> int:
    """The f32 bits of `v` (rounded to f32 first; beyond f32's range: inf)."""
    try:
        return struct.unpack("<I", struct.pack("<f", v))[0]
    except OverflowError:
        return 0xFF800000 if v < 0 else 0x7F800000


def bits_float(b: int) -> float:
    """The f32 whose bits are `b`, as a Python float (NaN payloads and signs kept)."""
    return struct.unpack("<f", struct.pack("<I", b))[0]


def f32_bits_toward_zero(v: float) -> int:
    """The f32 bits of `v` rounded toward zero (beyond f32's range: the largest finite f32)."""
    b = float_bits(v)
    if not math.isnan(v) and abs(bits_float(b)) > abs(v):
        b -= 1  # one ulp toward zero: sign-magnitude bits
    return b


def f32_bits_odd(v: float) -> int:
    """The f32 bits of `v` rounded to odd: toward zero, the last bit set when inexact; a later rounding to a format
    with at most 22 significand bits then equals rounding `v` directly (no double rounding)."""
    b = f32_bits_toward_zero(v)
    return b | 1 if not math.isnan(v) and bits_float(b) != v else b


def bf16_bits(v: float, rtz: bool = False) -> int:
    """`v` (a Python float, taken as f32) as bf16 bits."""
    return f32_to_bf16_bits(PY, float_bits(v), rtz)


def bf16_value(v: float) -> float:
    """`v` rounded to bf16, as a Python float."""
    return struct.unpack("<f", struct.pack("<I", bf16_bits(v) << 16))[0]
