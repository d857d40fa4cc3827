"""`tt.dot`: c = a @ b + acc, accumulating in the result type (fp16/bf16 inputs widen to fp32, int8 to int32).

tf32 precision is computed as ieee (more precise, never less); the difference is listed in the conformance notes.
The loop order (m, k, n) keeps the innermost loop contiguous in b and c so that LLVM vectorizes it.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.ir import ops as O

from .context import LoweringContext
from .rules import RULES
from .types import I64, is_float_type, llvm_type


def _widen(ctx: LoweringContext, v: ir.Value, to: ir.Type) -> ir.Value:
    if v.type == to:
        return v
    if is_float_type(to):
        return ctx.b.fpext(v, to) if is_float_type(v.type) else ctx.b.sitofp(v, to)
    return ctx.b.sext(v, to)


@RULES.register(O.Dot)
def lower_dot(ctx: LoweringContext, op: O.Dot) -> None:
    a, b_, c = (ctx.tile(v) for v in op.operands)
    a = a if a.buf is not None else ctx.materialize(a)
    b_ = b_ if b_.buf is not None else ctx.materialize(b_)
    res = op.result
    ety = llvm_type(res.type)
    shape = res.type.shape
    batched = len(shape) == 3
    m_, n_ = shape[-2], shape[-1]
    k_ = a.shape[-1]
    out = ctx.materialize(c)
    c64 = lambda x: ir.Constant(I64, x)
    flags = ctx.fastmath

    def batch(bidx: list[ir.Value]) -> None:
        def row(m: ir.Value) -> None:
            def kstep(k: ir.Value) -> None:
                av = _widen(ctx, a.element(ctx.b, bidx + [m, k]), ety)

                def col(n: ir.Value) -> None:
                    bb = ctx.b
                    bv = _widen(ctx, b_.element(bb, bidx + [k, n]), ety)
                    cur = out.element(bb, bidx + [m, n])
                    if is_float_type(ety):
                        new = bb.fadd(cur, bb.fmul(av, bv, flags=flags), flags=flags)
                    else:
                        new = bb.add(cur, bb.mul(av, bv))
                    ctx.store_element(out, bidx + [m, n], new)

                ctx.counted_loop(c64(n_), col, known_nonzero=True)

            ctx.counted_loop(c64(k_), kstep, known_nonzero=True)

        ctx.counted_loop(c64(m_), row, known_nonzero=True)

    if batched:
        ctx.counted_loop(c64(shape[0]), lambda i: batch([i]), known_nonzero=True)
    else:
        batch([])
    ctx.define(res, out)
