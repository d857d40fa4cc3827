"""An fp32 `arith.divf` by a scalar splat over the tile (softmax's row sum, a norm) becomes one reciprocal of the
scalar and multiplies per element, where the options allow fp fusion (`enable_fp_fusion`, Triton's default).

Triton's CUDA backend lowers an fp32 `/` to `llvm.nvvm.div.full` (`div.full.f32`: at most 2 ulp from the exact
quotient over the full range; `tl.math.div_rn` and `fdiv(ieee_rounding=True)` are `tt.precise_divf`, left alone), so
a division within 2 ulp is Triton's own contract; a CPU's vector division costs ~10 cycles per 16 lanes where a
multiply costs half of one (cpu_ref, a 4096x4096 softmax: 7.05 -> 6.25 ms with the row's reciprocal).

The full range is kept by an exact power-of-two scaling: with c = 2**-64 where |s| > 2**64, 2**64 where |s| < 2**-64
(zero included), else 1, the quotient is (x * c) * RN(1 / (s * c)). 1 / (s * c) is then a normal float, so
x * c * r is within 1.5 ulp of x / s wherever the result is normal; x * c overflows exactly where x / s does; 0, inf
and NaN divisors give x / s's inf, 0 and NaN (0 * inf and inf * 0 are NaN as 0 / 0 and inf / inf are).
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import Module, OpResult
from ..ir.enums import CmpFPredicate, EnumAttr
from ..ir.types import FloatKind, FloatType, i1
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace

#: |s| beyond which s is scaled by 2**-64 (and below 2**-64, by 2**64) before its reciprocal
_SCALE = 2.0**64


def scalar_divisor(op: O.DivF) -> OpResult | None:
    """The `tt.splat` that makes `op`'s divisor from one f32 scalar, or None."""
    d = op.operands[1]
    elem = d.type.element
    if not d.type.is_tensor or not isinstance(elem, FloatType) or elem.kind is not FloatKind.F32:
        return None
    if not isinstance(d, OpResult) or not isinstance(d.op, O.Splat):
        return None
    return d


def legalize(op: O.DivF) -> None:
    """Replace `op` (scalar_divisor(op) is not None) by (x * c) * r (module docstring)."""
    bld = Builder(op)
    x, d = op.operands
    s = d.op.operands[0]
    ty = s.type
    mag = bld.make(O.AbsF, [s], ty)
    cmp = lambda p, a, b: bld.make(O.CmpF, [a, bld.const(b, ty)], i1, predicate=EnumAttr(p))
    big, small = cmp(CmpFPredicate.OGT, mag, _SCALE), cmp(CmpFPredicate.OLT, mag, 1.0 / _SCALE)
    c = bld.select(big, bld.const(1.0 / _SCALE, ty), bld.select(small, bld.const(_SCALE, ty), bld.const(1.0, ty)))
    r = bld.make(O.DivF, [bld.const(1.0, ty), bld.binary(O.MulF, s, c)], ty)
    splat = lambda v: bld.make(O.Splat, [v], d.type)
    replace(op, [bld.binary(O.MulF, bld.binary(O.MulF, x, splat(c)), splat(r))])


@ir_pass("uniform-division")
class UniformDivision:
    """fp32 division of a tile by a splat scalar as a reciprocal and multiplies (module docstring)."""

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.DivF) and scalar_divisor(op) is not None:
                legalize(op)
