"""`libm.*` ops: the language's built-in of the op's name (`CStyleLanguage.function`: C99's type-generic name).

C99's functions go in the shared C-like table; exp10, which C99 lacks, in OpenCL's. sinpi/cospi are left to the
math-library pass's expansion (PoCL's sinpi(1) is -0, not +0), and OpenCL C has no Bessel functions: the pass expands
`libm.j0` and friends for this backend.
"""

from __future__ import annotations

from triton_backend_sdk.ir.dialects import libm as L

from .context import RenderContext
from .elementwise import MATH_COST, _float_result, lift, round_to
from .rules import CSTYLE_RULES, OPENCL_RULES

C99 = (L.Lgamma, L.Tgamma, L.Logb, L.Hypot, L.Remainder, L.NextAfter, L.Ldexp)
OPENCL_ONLY = (L.Exp10,)


def render_libm(ctx: RenderContext, op: L.LibmOp) -> None:
    t = _float_result(ctx, op)
    fn = op.function
    lift(ctx, op, lambda *a: round_to(t, ctx.lang.call(fn, *a), ctx), cost=MATH_COST)


CSTYLE_RULES.register(*C99)(render_libm)
OPENCL_RULES.register(*OPENCL_ONLY)(render_libm)
