"""Float arithmetic on fp8 values is computed in f32 and rounded back to the fp8 format once per op.

Triton's frontend lets `a * b` of two fp8 tensors through as `arith.mulf ... : tensor<..xf8E5M2>` (likewise add,
compare, math functions, fma, clamp); no CPU instruction set has fp8 arithmetic, and an LLVM `fmul` on cpu_ref's i8
storage is invalid IR. Every fp8 value converts to f32 exactly, so each such op becomes `tt.fp_to_fp` of its fp8
operands to f32, the same op in f32, and — for an fp8 result — `tt.fp_to_fp` back with round-to-nearest-even (a
comparison's i1 needs no rounding). That is one rounding per op, as opencl already computed it in its own renderer;
Triton's CUDA path goes through f16, whose extra rounding can differ from this only on a tie between two fp8 values.
Non-float ops on fp8 (loads, stores, select, bitcasts, layout changes) move bits and stay as they are; negation
and absolute value change the sign bit only (an e5m2 infinity stays infinite).
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.attrs import Attribute
from ..ir.core import Module, Op, Value
from ..ir.dialects.arith import FloatBinaryOp, FloatUnaryOp
from ..ir.enums import EnumAttr, RoundingMode
from ..ir.types import FloatType, Type, f32, i8
from ..pipeline import PassContext, ir_pass
from .build import Builder, replace, shaped

#: op classes computed in f32 when an operand is fp8 (each keeps its attributes: fastmath, predicate, ...)
ARITHMETIC = (FloatBinaryOp, FloatUnaryOp, O.CmpF, O.Fma, O.ClampF)


def _is_fp8(t: Type) -> bool:
    e = t.element
    return isinstance(e, FloatType) and e.width == 8


def widen(op: Op) -> None:
    """Replace `op` by the same op over f32 copies of its fp8 operands, its fp8 results rounded back."""
    bld = Builder(op)
    operands: list[Value] = [bld.cast(O.FpToFp, v, f32) if _is_fp8(v.type) else v for v in op.operands]
    types = [shaped(r.type, f32) if _is_fp8(r.type) else r.type for r in op.results]
    attrs: dict[str, Attribute] = dict(op.attrs)
    wide = bld.op(type(op), operands, types, attrs)
    rtne = EnumAttr(RoundingMode.RTNE)
    outs = [
        bld.cast(O.FpToFp, w, r.type.element, rounding=rtne) if _is_fp8(r.type) else w
        for w, r in zip(wide.results, op.results)
    ]
    replace(op, outs)


@ir_pass("fp8-arithmetic")
class Fp8Arithmetic:
    """Computes fp8 float arithmetic in f32 (module docstring)."""

    def run(self, module: Module, ctx: PassContext | None) -> None:
        for op in list(module.walk()):
            if isinstance(op, SIGN_OPS) and _is_fp8(op.operands[0].type):
                sign_bit(op)
            elif isinstance(op, ARITHMETIC) and any(_is_fp8(v.type) for v in op.operands):
                widen(op)


#: ops that only change the sign bit: through f32 and back, an e5m2 infinity would saturate to the largest finite
#: value (fuzz seed 302 kernel 203: `-x` of +inf gave -57344); as bit operations they are exact for every value
SIGN_OPS = (O.NegF, O.AbsF)


def sign_bit(op: Op) -> None:
    """`-x` as the sign bit flipped, `abs(x)` as it cleared, on the fp8 value's bits."""
    bld = Builder(op)
    x = op.operands[0]
    bits = bld.cast(O.TTBitcast, x, i8)
    if isinstance(op, O.NegF):
        bits = bld.binary(O.XOrI, bits, -128)
    else:
        bits = bld.binary(O.AndI, bits, 127)
    replace(op, [bld.cast(O.TTBitcast, bits, x.type.element)])


__all__ = ["ARITHMETIC", "SIGN_OPS", "Fp8Arithmetic", "sign_bit", "widen"]
