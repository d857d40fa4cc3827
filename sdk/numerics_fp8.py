"""fp8 formats and their conversions, written once for every backend.

`Fp8Format` describes each 8-bit float format Triton's IR has (`FP8_FORMATS`). `f32_to_fp8_bits` is the one
narrowing of an f32's bits to fp8, written against `IntOps` like the bf16 rounding in `numerics`, so a backend only
spells integer operations: nearest even or toward zero; out-of-range magnitudes, infinities included, saturate to the
largest finite value (PTX's `cvt.rn.satfinite`, the CUDA path's conversion); NaN becomes the format's NaN (0x7f with
the input's sign, or 0x80 where the format is "fnuz"), and a fnuz zero is never negative. `fp8_to_f32_bits` is the
one widening (exact; NaN a quiet NaN keeping the code's sign, and in e5m2, whose NaNs have three mantissas, which
one); `Fp8Format.f32_bits` is its 256-entry table, for a backend that would rather load than compute.
`fp8_bits_of_widened` is the widening's inverse, for a backend that holds fp8 values widened in registers: a load
and a store (or a bitcast) give every code back unchanged, infinities and each NaN included, where a conversion
would saturate them.

f16 and bf16 widen to f32 exactly before narrowing; f64 narrows to f32 rounded to odd (`numerics.f32_bits_odd`,
toward zero for `rtz`) first, which keeps the final rounding exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .ir.types import FloatKind
from .numerics import PY, C, IntOps, V, bits_float, f32_bits_odd, f32_bits_toward_zero, float_bits


@dataclass(frozen=True)
class Fp8Format:
    """An 8-bit float: sign, `ebits` exponent bits with `bias`, `mbits` mantissa bits."""

    #: the short name used in generated symbols (`e4m3`, `e5m2b16nz`, ...)
    name: str
    ebits: int
    mbits: int
    bias: int
    #: IEEE-like: the top exponent is inf (mantissa 0) or NaN; otherwise only the all-ones code (or 0x80) is NaN
    ieee: bool
    #: "fnuz": 0x80 is the only NaN, no negative zero, no inf
    fnuz: bool

    @property
    def max_code(self) -> int:
        """The code of the largest finite value."""
        if self.fnuz:
            return 0x7F
        if self.ieee:
            return (((1 << self.ebits) - 1) << self.mbits) - 1
        return 0x7E

    @property
    def nan_code(self) -> int:
        """The NaN a conversion gives (the sign of the input NaN is or'ed in where the format has signed NaNs)."""
        return 0x80 if self.fnuz else 0x7F

    def decode(self, code: int) -> float:
        """The exact value of `code`, as a Python float."""
        return bits_float(self.f32_bits[code])

    @cached_property
    def f32_bits(self) -> tuple[int, ...]:
        """`fp8_to_f32_bits` of each of the 256 codes."""
        return tuple(fp8_to_f32_bits(PY, c, self) for c in range(256))


FP8_FORMATS: dict[FloatKind, Fp8Format] = {
    FloatKind.F8E4M3FN: Fp8Format("e4m3", 4, 3, 7, ieee=False, fnuz=False),
    FloatKind.F8E5M2: Fp8Format("e5m2", 5, 2, 15, ieee=True, fnuz=False),
    FloatKind.F8E4M3FNUZ: Fp8Format("e4m3b8nz", 4, 3, 8, ieee=False, fnuz=True),
    FloatKind.F8E5M2FNUZ: Fp8Format("e5m2b16nz", 5, 2, 16, ieee=False, fnuz=True),
    FloatKind.F8E4M3B11FNUZ: Fp8Format("e4m3b11nz", 4, 3, 11, ieee=False, fnuz=True),
}


def f32_to_fp8_bits(o: IntOps[V, C], x: V, fmt: Fp8Format, rtz: bool = False) -> V:
    """The fp8 code (in the low 8 bits) of the f32 whose bits are `x`; branch-free.

    Normal and subnormal results share one path: the significand with its implicit bit is shifted right by
    `23 - mbits`, plus how far the exponent is below fp8's smallest normal one (capped at 31: everything is shifted
    out by then, f32 subnormals with their wrongly set implicit bit included), and rounded; the exponent above the smallest normal one is added on, so a carry out of the
    mantissa moves into the exponent, and a subnormal rounding up becomes the smallest normal."""
    shift = 23 - fmt.mbits
    e_min = 127 + 1 - fmt.bias  # f32 exponent field of fp8's smallest normal value
    top = float_bits(fmt.decode(fmt.max_code))
    ax = o.and_(x, o.const(0x7FFFFFFF))
    a = o.select(o.ugt(ax, o.const(top)), o.const(top), ax)  # satfinite: beyond the largest finite, inf included
    e = o.shr(a, 23)
    sig = o.or_(o.and_(a, o.const(0x7FFFFF)), o.const(0x800000))
    below = o.ugt(o.const(e_min), e)
    far = o.ugt(o.const(e_min + shift - 31), e)
    s = o.select(below, o.select(far, o.const(31), o.sub(o.const(e_min + shift), e)), o.const(shift))
    if rtz:
        r = o.shrv(sig, s)
    else:  # add just under half an ulp, plus one when the kept part is odd: ties go to even
        half = o.shrv(o.const(0x7FFFFFFF), o.sub(o.const(32), s))
        r = o.shrv(o.add(o.add(sig, half), o.and_(o.shrv(sig, s), o.const(1))), s)
    code = o.add(o.select(below, o.const(0), o.shl(o.sub(e, o.const(e_min)), fmt.mbits)), r)
    sign = o.and_(o.shr(x, 24), o.const(0x80))
    if fmt.fnuz:
        out = o.or_(code, o.select(o.ugt(code, o.const(0)), sign, o.const(0)))
        nan = o.const(fmt.nan_code)
    else:
        out = o.or_(code, sign)
        nan = o.or_(sign, o.const(fmt.nan_code))
    return o.select(o.ugt(ax, o.const(0x7F800000)), nan, out)


def fp8_to_f32_bits(o: IntOps[V, C], c: V, fmt: Fp8Format) -> V:
    """The f32 bits of the fp8 code `c` (zero-extended); exact, branch-free.

    A normal code moves its exponent and mantissa into place with one add of the rebias. A subnormal one, m units of
    2**(1 - bias - mbits), is normalized by its leading bit's position p (found by compares: m < 2**mbits is tiny),
    whose leading one, shifted to bit 23, carries into the exponent."""
    mb, bias = fmt.mbits, fmt.bias
    mag = o.and_(c, o.const(0x7F))
    m = o.and_(c, o.const((1 << mb) - 1))
    normal = o.add(o.shl(mag, 23 - mb), o.const((127 - bias) << 23))
    step = lambda k: o.select(o.ugt(m, o.const((1 << k) - 1)), o.const(1), o.const(0))
    p = step(1)  # every format has at least two mantissa bits
    for k in range(2, mb):
        p = o.add(p, step(k))
    tiny = o.add(o.add(o.const((127 - bias - mb) << 23), o.shl(p, 23)), o.shrv(o.shl(m, 23), p))
    no_m = o.eq(m, o.const(0))
    bits = o.select(o.ugt(mag, o.const((1 << mb) - 1)), normal, o.select(no_m, o.const(0), tiny))
    if fmt.ieee:  # the narrowing's NaN (mantissa all ones) is the canonical 0x7fc00000; another keeps its mantissa
        top = ((1 << fmt.ebits) - 1) << mb
        nan = o.or_(o.const(0x7FC00000), o.sub(o.const((1 << mb) - 1), m))
        special = o.select(no_m, o.const(0x7F800000), nan)
        bits = o.select(o.ugt(mag, o.const(top - 1)), special, bits)
    elif not fmt.fnuz:
        bits = o.select(o.eq(mag, o.const(0x7F)), o.const(0x7FC00000), bits)
    out = o.or_(bits, o.shl(o.and_(c, o.const(0x80)), 24))
    return o.select(o.eq(c, o.const(0x80)), o.const(0x7FC00000), out) if fmt.fnuz else out


def fp8_bits_of_widened(o: IntOps[V, C], x: V, fmt: Fp8Format) -> V:
    """The code whose widening (`fp8_to_f32_bits`) is the f32 with bits `x`: registers back to memory, and bitcasts.
    Other f32 values narrow as `f32_to_fp8_bits` rounds them, except that in an IEEE-like format (e5m2) an infinity
    stays infinite and any NaN gets a NaN code (the narrowing's, unless its low mantissa bits are another's)."""
    code = f32_to_fp8_bits(o, x, fmt)
    if not fmt.ieee:  # no infinity, one NaN per sign: the narrowing already inverts the widening
        return code
    full = (1 << fmt.mbits) - 1
    inf = ((1 << fmt.ebits) - 1) << fmt.mbits
    ax = o.and_(x, o.const(0x7FFFFFFF))
    sign = o.and_(o.shr(x, 24), o.const(0x80))
    q = o.and_(x, o.const(full))
    m = o.select(o.eq(q, o.const(full)), o.const(full), o.sub(o.const(full), q))
    nan = o.or_(sign, o.or_(o.const(inf), m))
    special = o.select(o.eq(ax, o.const(0x7F800000)), o.or_(sign, o.const(inf)), nan)
    return o.select(o.ugt(ax, o.const(0x7F7FFFFF)), special, code)


def fp8_bits(v: float, fmt: Fp8Format, rtz: bool = False) -> int:
    """`v` (a Python float, taken as f64) as an fp8 code: constant folding."""
    return f32_to_fp8_bits(PY, f32_bits_toward_zero(v) if rtz else f32_bits_odd(v), fmt, rtz)
