"""`arith.truncf`/`arith.extf` with an fp8 side: a constant is folded to the fp8 value it rounds to, anything else
becomes `tt.fp_to_fp`, the one fp8 conversion every backend renders.

Triton's frontend makes an fp8 scalar constant (`x + 0.1` on fp8, `x >= 0.1`, `tl.full(.., 0.1, fp8)`, clamp bounds)
as `arith.truncf` of an f32 `arith.constant`; MLIR folds it only when fp8 holds the value exactly, so `0.1` reaches
the backends as a truncf, which cpu_ref rendered as LLVM's invalid `fptrunc float ... to i8`. The fold rounds once,
as `tt.fp_to_fp` with rtne does at run time (`numerics_fp8.fp8_bits`: nearest even, out of range saturating), and
keeps the exact fp8 value, so a backend that holds fp8 in a wider register (opencl) has the same constant.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.attrs import Attribute, DenseAttr, FloatAttr
from ..ir.core import Module
from ..ir.enums import EnumAttr, RoundingMode
from ..ir.types import FloatType, Type
from ..numerics_fp8 import FP8_FORMATS, fp8_bits
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace


def _fp8(t: Type) -> bool:
    e = t.element
    return isinstance(e, FloatType) and e.width == 8


def _rounded(value: Attribute, to: Type) -> Attribute | None:
    """`value` (an f16/f32/f64 constant) rounded to the fp8 type `to`, or None for a constant of another form."""
    fmt = FP8_FORMATS[to.element.kind]
    r = lambda v: fmt.decode(fp8_bits(float(v), fmt))
    if isinstance(value, FloatAttr):
        return FloatAttr(r(value.value), to)
    if isinstance(value, DenseAttr):
        return DenseAttr(tuple(r(v) for v in value.values), to)
    return None


def legalize(op: O.CastOp) -> None:
    """Fold `op` when it narrows a constant; otherwise replace it by `tt.fp_to_fp` (rtne when it narrows)."""
    bld = Builder(op)
    narrowing = _fp8(op.result.type) and not _fp8(op.src.type)
    src = getattr(op.src, "op", None)
    if narrowing and isinstance(src, O.Constant):
        folded = _rounded(src.attrs["value"], op.result.type)
        if folded is not None:
            replace(op, [bld.make(O.Constant, [], op.result.type, value=folded)])
            return
    attrs = {"rounding": EnumAttr(RoundingMode.RTNE)} if _fp8(op.result.type) else {}
    replace(op, [bld.make(O.FpToFp, [op.src], op.result.type, **attrs)])


@ir_pass("fp8-casts")
class Fp8Casts:
    """Folds or converts fp8 truncf/extf (module docstring)."""

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if isinstance(op, (O.TruncF, O.ExtF)) and (_fp8(op.src.type) or _fp8(op.result.type)):
                legalize(op)


__all__ = ["Fp8Casts", "legalize"]
