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
    rank = len(a_v.type.shape)
    if rank not in (2, 3):
        raise ctx.unsupported(f"tl.dot of rank-{rank} operands (only 2-D and batched 3-D)", op)
    *batch, M, K = a_v.type.shape
    N = b_v.type.shape[-1]
    nb = batch[0] if batch else 1
    check_pow2((nb, M, N, K), ctx.backend, op.loc)
    ta, tb, tc = a_v.type.element, b_v.type.element, op.result.type.element
    ca, cb, cc = ctx.ctype(a_v), ctx.ctype(b_v), ctx.ctype(op.result)
    if isinstance(tc, FloatType) != isinstance(ta, FloatType) or not isinstance(ta, (FloatType, IntType)) \
            or type(ta) is not type(tb):
        raise ctx.unsupported(f"tl.dot of {ta} x {tb} -> {tc}", op)
    base = ctx.scratch_top
    off_a, off_b = ctx.alloc(nb * M * K * CT.size_of(ca)), ctx.alloc(nb * K * N * CT.size_of(cb))
    A, B = ctx.local_array(ca, off_a), ctx.local_array(cb, off_b)
    ctx.barrier()
    ctx.write_scratch(ctx.get(a_v), a_v.type.shape, ca, off_a)
    ctx.write_scratch(ctx.get(b_v), b_v.type.shape, cb, off_b)
    ctx.barrier()
    shape = op.result.type.shape
    out = ctx.declare_tile(shape, cc, ctx.name_for(op.result, "t"))
    ctx.assign_tile(out, ctx.get(c_v))
    k = ctx.fresh("k")
    ctx.emit(ctx.lang.unroll_pragma)
    ctx.emit(f"for (uint {k} = 0u; {k} < {K}u; ++{k}) {{")
    with ctx.indent():
        def body(idx: Idx) -> None:
            m, n = idx.dim(rank - 2), idx.dim(rank - 1)
            row = f"({idx.dim(0)} * {M}u + {m})" if batch else m
            kk = f"({idx.dim(0)} * {K}u + {k})" if batch else k
            x = f"{A}[({row} << {log2(K)}) + {k}]"
            y = f"{B}[({kk} << {log2(N)}) + {n}]"
            acc = f"{out.reg}[{idx.slot}]"
            if isinstance(tc, FloatType):
                ctx.emit(f"{acc} = fma(({cc}){x}, ({cc}){y}, {acc});")
            else:
                u = CT.uctype(op.result.type)
                ctx.emit(f"{acc} = ({cc})(({u}){acc} + ({u})(({cc}){x} * ({cc}){y}));")

        ctx.tile_loop(shape, body)
    ctx.emit("}")
    if CT.is_half(op.result.type) or CT.is_bf16(op.result.type):
        ctx.tile_loop(shape, lambda idx: ctx.emit(
            f"{out.reg}[{idx.slot}] = {round_to(op.result.type, f'{out.reg}[{idx.slot}]', ctx)};"))
    ctx.scratch_top = base
    ctx.values[op.result] = out
