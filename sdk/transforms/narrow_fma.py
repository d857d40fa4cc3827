"""`math.fma` on f16 and bf16 rounds once: the exact a * b + c, rounded to the format, as CUDA's `fma.rn` does.

Computing it as an fma in a wider float and narrowing rounds twice, and the second rounding is wrong where the first
lands on a midpoint of the narrow format: fma(-4.75, -4.75, 2**-66) on bf16 is 22.5625 + 2**-66, which an f64 (or f32)
fma rounds to 22.5625, a bf16 tie that goes to even, 22.5; the correct result is 22.625. The pass instead computes,
in a wide type W (f32 for f16, f64 for bf16):

- p = a * b, exact in W: the product of two f16 significands has 22 bits, of two bf16 ones 16, and its exponent stays
  inside W's normal range (f16: 2**-48 .. 2**32; bf16: 2**-266 .. 2**256);
- s = p + c rounded, and its error e = (p + c) - s exactly (TwoSum: six adds, no branch, exact barring overflow,
  which these magnitudes never reach);
- s rounded to odd instead: when e != 0 and s's last bit is even, s moves one ulp toward p + c (its bits +-1). Every
  value here is a multiple of the smallest product or addend, so s is never 0 or subnormal unless exact;
- one rounding of that to the narrow format. Rounded to odd with at least two more bits than the target (24 >= 11 + 2,
  53 >= 8 + 2), the value rounds to nearest even exactly as p + c itself would, midpoints, overflow to inf and the
  smallest subnormals included.

inf and NaN operands make e NaN (inf - inf), and the ordered `e != 0` is then false, so s passes through as the wide
fma's own inf or NaN. An exact zero sum keeps IEEE's sign (fma(x, y, -x * y) = +0, (-0) + (-0) = -0). Both backends'
f32 -> f16 and f64 -> bf16 conversions are one rounding (an f64 narrows to f32 rounded to odd first). A device
without fp64 (`fp64` not in its descriptor) gets a compile-time refusal for bf16; f16 needs only f32.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.core import Module, Value
from ..ir.enums import CmpFPredicate, CmpIPredicate, EnumAttr
from ..ir.types import FloatKind, IntType, Type, f32, f64, i1, i32, i64
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace, shaped

#: narrow format -> (the wide float it is computed in, that float's bits as an integer)
WIDE: dict[FloatKind, tuple[Type, IntType]] = {FloatKind.F16: (f32, i32), FloatKind.BF16: (f64, i64)}


def round_to_odd(bld: Builder, s: Value, e: Value, bits: IntType) -> Value:
    """`s + e` (`s` the rounded sum, `e` its exact error) rounded to odd in `s`'s type."""
    sb = bld.cast(O.ArithBitcast, s, bits)
    eb = bld.cast(O.ArithBitcast, e, bits)
    cmpf = lambda p, a, b: bld.make(O.CmpF, [a, b], shaped(a.type, i1), predicate=EnumAttr(p))
    inexact = cmpf(CmpFPredicate.ONE, e, bld.const_like(0.0, e))  # false for NaN: inf/NaN sums pass through
    even = bld.cmpi(CmpIPredicate.EQ, bld.binary(O.AndI, sb, 1), 0)
    toward_zero = bld.cmpi(CmpIPredicate.SLT, bld.binary(O.XOrI, sb, eb), 0)  # e's sign is not s's
    stepped = bld.select(toward_zero, bld.binary(O.SubI, sb, 1), bld.binary(O.AddI, sb, 1))
    fix = bld.binary(O.AndI, inexact, even)
    return bld.cast(O.ArithBitcast, bld.select(fix, stepped, sb), s.type.element)


def legalize(op: O.Fma) -> None:
    """Replace the f16/bf16 `op` by its one-rounding expansion (module docstring)."""
    bld = Builder(op)
    narrow = op.result.type.element
    wide, bits = WIDE[narrow.kind]
    a, b, c = (bld.cast(O.ExtF, v, wide) for v in op.operands)
    p = bld.binary(O.MulF, a, b)
    s = bld.binary(O.AddF, p, c)
    bb = bld.binary(O.SubF, s, p)
    e = bld.binary(O.AddF, bld.binary(O.SubF, p, bld.binary(O.SubF, s, bb)), bld.binary(O.SubF, c, bb))
    replace(op, [bld.cast(O.TruncF, round_to_odd(bld, s, e, bits), narrow)])


@ir_pass("narrow-fma")
class NarrowFma:
    """f16/bf16 `math.fma` rounded once (module docstring); `fp64`: the target computes in f64 (bf16 needs it)."""

    fp64: bool = True

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if not isinstance(op, O.Fma) or op.result.type.element.kind not in WIDE:
                continue
            if WIDE[op.result.type.element.kind][0] == f64 and not self.fp64:
                raise UnsupportedError(
                    "sdk",
                    "math.fma on bf16: its one rounding is computed in f64, which this device does not have "
                    "(`fp64` is not in the target descriptor's supported_dtypes)",
                    op.loc,
                )
            legalize(op)


__all__ = ["WIDE", "NarrowFma", "legalize", "round_to_odd"]
