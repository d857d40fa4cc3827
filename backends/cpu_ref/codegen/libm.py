"""`libm.*` ops: calls of the C math library function of the op's name (the float version for f32; f16/bf16
operands widen to f32 and the result rounds back). The library is the process's: the object is linked against it
when loaded.

sinpi/cospi have no rule here (glibc before 2.41 lacks them): the math-library pass expands them portably.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.ir.dialects import libm as L

from .context import LoweringContext
from .elementwise import lift
from .numerics import narrow
from .rules import RULES
from .types import F32, F64, llvm_type

NATIVE = (
    L.Exp10,
    L.Lgamma,
    L.Tgamma,
    L.Logb,
    L.Hypot,
    L.Remainder,
    L.NextAfter,
    L.Ldexp,
    L.J0,
    L.J1,
    L.Y0,
    L.Y1,
    L.Jn,
    L.Yn,
)


@RULES.register(*NATIVE)
def lower_libm(ctx: LoweringContext, op: L.LibmOp) -> None:
    ret = llvm_type(op.result.type)
    wide = ret if ret in (F32, F64) else F32
    name = op.function if wide == F64 else op.function + "f"
    kinds = op.signature

    def call(*args: ir.Value) -> ir.Value:
        b = ctx.b
        vals = [a if k == "i" or a.type == wide else b.fpext(a, wide) for k, a in zip(kinds, args)]
        r = b.call(ctx.intrinsic(name, wide, [v.type for v in vals]), vals)
        return r if wide == ret else narrow(b, r, ret)

    lift(ctx, op, call, weight=8)
