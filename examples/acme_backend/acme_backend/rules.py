"""ACME's lowering rules: cpu_ref's, plus one for `acme.recip`."""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.backends.cpu_ref.codegen import RULES as CPU_RULES
from triton_backend_sdk.backends.cpu_ref.codegen.context import LoweringContext
from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import lift

from .passes import Recip

RULES = CPU_RULES.derive("acme")


@RULES.register(Recip)
def lower_recip(ctx: LoweringContext, op: Recip) -> None:
    lift(ctx, op, lambda a: ctx.b.fdiv(ir.Constant(a.type, 1.0), a, flags=ctx.fastmath))
