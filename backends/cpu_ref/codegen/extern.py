"""`tt.extern_elementwise` on a symbol outside libdevice: a call of the external C function of that name.

The function is declared with the scalar signature of the op and resolved when the object is loaded (native plugins,
the process's C library). libdevice (`__nv_*`) symbols never reach this rule: the SDK's math-library pass
(triton_backend_sdk.transforms.math_library) rewrites them into SDK ops first.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O

from .context import LoweringContext
from .elementwise import lift
from .rules import RULES
from .types import llvm_type


def _external(ctx: LoweringContext, symbol: str, args: list[ir.Value], ret: ir.Type) -> ir.Value:
    return ctx.b.call(ctx.intrinsic(symbol, ret, [a.type for a in args]), args)


@RULES.register(O.ExternElementwise)
def lower_extern(ctx: LoweringContext, op: O.ExternElementwise) -> None:
    symbol = op.symbol
    if symbol.startswith("__nv_"):
        raise UnsupportedError(
            "cpu_ref", f"libdevice function {symbol} reached code generation without the math-library pass", op.loc
        )
    ret = llvm_type(op.result.type)
    lift(ctx, op, lambda *a: _external(ctx, symbol, list(a), ret))
