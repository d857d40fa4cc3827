"""`tl.dot` (shared C-like): both operands are staged in local memory, then each work-item computes the output
elements it holds, k-outer so that operand values are reused across its register slots. Products are accumulated in
the accumulator's compute type (fp32 for f16/bf16/f32 inputs, so `tf32` requests get full fp32 precision; i32 for
i8), an f16 accumulator is rounded once at the end."""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.types import FloatType, IntType

from . import ctypes as CT
from .context import Idx, RenderContext, check_pow2, log2
from .elementwise import round_to
from .rules import CSTYLE_RULES as RULES


@RULES.register(O.Dot)
def render_dot(ctx: RenderContext, op: O.Dot) -> None:
    a_v, b_v, c_v = op.operands[:3]
    if len(a_v.type.shape) != 2:
        raise ctx.unsupported(f"tl.dot of rank-{len(a_v.type.shape)} operands (only 2-D)", op)
    (M, K), N = a_v.type.shape, b_v.type.shape[1]
    check_pow2((M, N, K), ctx.backend, op.loc)
    ta, tb, tc = a_v.type.element, b_v.type.element, op.result.type.element
    ca, cb, cc = ctx.ctype(a_v), ctx.ctype(b_v), ctx.ctype(op.result)
    if isinstance(tc, FloatType) != isinstance(ta, FloatType) or not isinstance(ta, (FloatType, IntType)) \
            or type(ta) is not type(tb):
        raise ctx.unsupported(f"tl.dot of {ta} x {tb} -> {tc}", op)
    base = ctx.scratch_top
    off_a, off_b = ctx.alloc(M * K * CT.size_of(ca)), ctx.alloc(K * N * CT.size_of(cb))
    A, B = ctx.local_array(ca, off_a), ctx.local_array(cb, off_b)
    ctx.barrier()
    ctx.write_scratch(ctx.get(a_v), (M, K), ca, off_a)
    ctx.write_scratch(ctx.get(b_v), (K, N), cb, off_b)
    ctx.barrier()
    out = ctx.declare_tile((M, N), cc, ctx.name_for(op.result, "t"))
    ctx.assign_tile(out, ctx.get(c_v))
    k = ctx.fresh("k")
    ctx.emit(ctx.lang.unroll_pragma)
    ctx.emit(f"for (uint {k} = 0u; {k} < {K}u; ++{k}) {{")
    with ctx.indent():
        def body(idx: Idx) -> None:
            x = f"{A}[({idx.dim(0)} << {log2(K)}) + {k}]"
            y = f"{B}[({k} << {log2(N)}) + {idx.dim(1)}]"
            acc = f"{out.reg}[{idx.slot}]"
            if isinstance(tc, FloatType):
                ctx.emit(f"{acc} = fma(({cc}){x}, ({cc}){y}, {acc});")
            else:
                ctx.emit(f"{acc} = ({cc})(({CT.uctype(op.result.type)}){acc} + "
                         f"({CT.uctype(op.result.type)})(({cc}){x} * ({cc}){y}));")

        ctx.tile_loop((M, N), body)
    ctx.emit("}")
    if CT.is_half(op.result.type) or CT.is_bf16(op.result.type):
        ctx.tile_loop((M, N), lambda idx: ctx.emit(
            f"{out.reg}[{idx.slot}] = {round_to(op.result.type, f'{out.reg}[{idx.slot}]', ctx)};"))
    ctx.scratch_top = base
    ctx.values[op.result] = out
