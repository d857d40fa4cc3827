"""ACME's plugin (entry point group `triton_backend_sdk.plugins`): a custom op kernels call as `acme_math.sqplus1`.

On ACME and on cpu_ref it lowers to x*x + 1 in one fused multiply-add.
"""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.custom_ops import custom_op
from triton_backend_sdk.plugins import Plugin

sqplus1 = custom_op("acme.sqplus1", {("fp32",): "fp32", ("fp64",): "fp64"}, doc="x * x + 1")


@sqplus1.lowering("cpu_ref")  # `acme` derives its rules from cpu_ref's, so this covers both
def _lower_sqplus1(ctx: Any, op: Any) -> None:
    from llvmlite import ir
    from triton_backend_sdk.backends.cpu_ref.codegen.elementwise import call_intrinsic, lift

    lift(ctx, op, lambda a: call_intrinsic(ctx, "llvm.fma", [a, a, ir.Constant(a.type, 1.0)]))


PLUGIN = Plugin(name="acme_math", version="0.1.0", api=(1, 1), ops=(sqplus1,))
