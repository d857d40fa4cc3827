"""`tl.dot` (shared C-like): both operands are staged in local memory, then each work-item computes the output
elements it holds, k-outer so that operand values are reused across its register slots. Products are accumulated in
the accumulator's compute type (fp32 for f16/bf16/f32 inputs, so `tf32` requests get full fp32 precision; i32 for
i8), an f16 accumulator is rounded once at the end."""

from __future__ import annotations

from triton_backend_sdk.analysis.tile_model import register_block
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import BlockArgument, OpResult, Value
from triton_backend_sdk.ir.types import FloatType, IntType

from . import ctypes as CT
from .context import Idx, RenderContext, ScratchArray, Tile, check_pow2, log2
from .dot_blocked import blocked_product, canonical_blocks, render_blocked_dot, scratch_float4
from .elementwise import round_to
from .rules import CSTYLE_RULES as RULES


@RULES.register(O.Dot)
def render_dot(ctx: RenderContext, op: O.Dot) -> None:
    a_v, b_v, c_v = op.a, op.b, op.c
    rank = len(a_v.type.shape)
    if rank not in (2, 3):
        raise ctx.unsupported(f"tl.dot of rank-{rank} operands (only 2-D and batched 3-D)", op)
    *batch, M, K = a_v.type.shape
    N = b_v.type.shape[-1]
    nb = batch[0] if batch else 1
    check_pow2((nb, M, N, K), ctx.backend, op.loc)
    ta, tb, tc = a_v.type.element, b_v.type.element, op.result.type.element
    ca, cb, cc = ctx.ctype(a_v), ctx.ctype(b_v), ctx.ctype(op.result)
    if (
        isinstance(tc, FloatType) != isinstance(ta, FloatType)
        or not isinstance(ta, (FloatType, IntType))
        or type(ta) is not type(tb)
    ):
        raise ctx.unsupported(f"tl.dot of {ta} x {tb} -> {tc}", op)
    acc = ctx.get(c_v)
    if isinstance(acc, Tile) and acc.layout is not None:  # a loop-carried accumulator (render_for chose it)
        render_blocked_dot(ctx, op, acc)
        return
    if ctx.L == 1 and not batch and (ca == cb == cc in ("float", "double") or (ca == cb == "char" and cc == "int")):
        _dot_one_work_item(ctx, op, M, N, K, cc)
        return
    blocks = canonical_blocks(ctx, M, N, K) if not batch and ca == cb == cc == "float" else None
    if blocks is not None:
        out = ctx.declare_tile(op.result.type.shape, cc, ctx.name_for(op.result, "t"))
        ctx.assign_tile(out, acc)
        blocked_product(ctx, op, out.reg, blocks)
        ctx.values[op.result] = out
        return
    base = ctx.scratch_top
    rows = _row_runs(ctx, batch, M, N, ca, cb)
    a_elems = K * (M + RUN) if rows else nb * M * K
    off_a, off_b = ctx.alloc(a_elems * CT.size_of(ca)), ctx.alloc(nb * K * N * CT.size_of(cb))
    A, B = ctx.local_array(ca, off_a), ctx.local_array(cb, off_b)
    ctx.barrier()
    if rows:
        _write_a_by_runs(ctx, ctx.get(a_v), (M, K), A, rows)
    else:
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
        if rows:
            _dot_by_runs(ctx, out, A, B, k, M, N, rows, cc)
        else:

            def body(idx: Idx) -> None:
                m, n = idx.dim(rank - 2), idx.dim(rank - 1)
                row = f"({idx.dim(0)} * {M}u + {m})" if batch else m
                kk = f"({idx.dim(0)} * {K}u + {k})" if batch else k
                x = f"{A[f'({row} << {log2(K)}) + {k}']}"
                y = f"{B[f'({kk} << {log2(N)}) + {n}']}"
                acc = f"{out.reg}[{idx.slot}]"
                if isinstance(tc, FloatType):
                    ctx.emit(f"{acc} = fma(({cc}){x}, ({cc}){y}, {acc});")
                else:
                    u = CT.uctype(op.result.type)
                    ctx.emit(f"{acc} = ({cc})(({u}){acc} + ({u})(({cc}){x} * ({cc}){y}));")

            ctx.tile_loop(shape, body)
    ctx.emit("}")
    if CT.is_half(op.result.type) or CT.is_bf16(op.result.type):
        ctx.tile_loop(
            shape,
            lambda idx: ctx.emit(f"{out.reg}[{idx.slot}] = {round_to(op.result.type, f'{out.reg}[{idx.slot}]', ctx)};"),
        )
    ctx.scratch_top = base
    ctx.values[op.result] = out


#: rows of A a work-item reads as one vector from the staged A^T (`_row_runs`)
RUN = 4


def _row_runs(ctx: RenderContext, batch: list[int], M: int, N: int, ca: str, cb: str) -> int:
    """How many output rows each work-item holds, where A is staged so that it reads them as vectors, else 0.

    With L >= N work-items, output slot r of work-item `lid` is row m = r*G + h (G = L/N groups, h = lid / N) of
    column lid % N: the work-item needs A[m][k] for R = M/G rows m, which in row-major A are K*G elements apart (one
    local load per product). Staging A transposed with its rows permuted, A[m][k] at k*M + (m % G)*R + m / G, puts a
    work-item's rows for one k next to each other, so RUN of them are one vector load (a broadcast: a warp's lanes
    share h). Rows of A^T are M + RUN apart (a 16-byte pad): the staging writes, consecutive k across lanes, then
    fall on 8 banks instead of one. Same products, same order: results are bit-identical to the plain staging.
    fp32 only (a float4 is 16 bytes, the scratch area's alignment)."""
    L = ctx.L
    if batch or L == 1 or L < N or ca != "float" or ca != cb or M * N < L or ctx.vec_of((M, N)) > 1:
        return 0  # (an output held in runs of VEC columns has no row-per-slot layout to stage A for)
    R = M * N // L
    return R if R % RUN == 0 else 0


def _a_pos(m: str, k: str, M: int, G: int, R: int) -> str:
    return f"({k}) * {M + RUN}u + ((({m}) & {G - 1}u) << {log2(R)}) + (({m}) >> {log2(G)})"


def _write_a_by_runs(ctx: RenderContext, a: object, shape: tuple[int, int], A: ScratchArray, R: int) -> None:
    M = shape[0]
    G = M // R
    ctx.tile_loop(
        shape,
        lambda idx: ctx.emit(f"{A[_a_pos(idx.dim(0), idx.dim(1), M, G, R)]} = {ctx.element(a, idx)};"),
        owner=True,
    )


def _dot_by_runs(
    ctx: RenderContext, out: Tile, A: ScratchArray, B: ScratchArray, k: str, M: int, N: int, R: int, cc: str
) -> None:
    """One k step: the work-item's column of B once, its R rows of A in vectors of RUN, R fmas in slot order."""
    y = ctx.fresh("bk")
    ctx.emit(f"const {cc} {y} = {B[f'({k} << {log2(N)}) + (lid & {N - 1}u)']};")
    first = f"{k} * {M + RUN}u + ((lid >> {log2(N)}) << {log2(R)})"
    for c in range(R // RUN):
        x = scratch_float4(ctx, A, f"{first} + {c * RUN}u", "ak")
        for j in range(RUN):
            acc = f"{out.reg}[{c * RUN + j}]"
            ctx.emit(f"{acc} = fma({ctx.lang.vector_elem(x, j)}, {y}, {acc});")


def _dot_one_work_item(ctx: RenderContext, op: O.Dot, M: int, N: int, K: int, cc: str) -> None:
    """One work-item per program (a CPU device) holds whole row-major tiles: the product is computed in register
    blocks of R rows x (NV vectors of V columns), k innermost, with OpenCL vector types (`_register_tile`)."""
    a_v, b_v, c_v = op.a, op.b, op.c
    a, b = (_widened(ctx, ctx.get(v), cc) for v in (a_v, b_v))
    c = ctx.get(c_v)
    if _dead_after(ctx, op, c_v, c):
        out = Tile(c.shape, cc, reg=c.reg)  # accumulate in place: nothing reads the old accumulator afterwards
    else:
        out = ctx.declare_tile(op.result.type.shape, cc, ctx.name_for(op.result, "t"))
        ctx.assign_tile(out, c)
    R, NV, V = _register_tile(ctx, cc, M, N)
    # V == 1 (N narrower than the narrowest vector): scalars throughout, OpenCL C has no 1-element vector (`float1`)
    vt = cc if V == 1 else ctx.lang.vector_type(cc, V)

    # the register tiles are 64-byte aligned private arrays (RenderContext.declare_tile) and every vector below
    # starts at a multiple of V elements: aligned vector accesses (PoCL's vload16/vstore16 were split in pieces)
    def load(arr: str, pos: str) -> str:
        return f"{arr}[{pos}]" if V == 1 else ctx.lang.aligned_vector_load(cc, V, f"{arr} + {pos}")

    def store(arr: str, pos: str, x: str) -> str:
        return f"{arr}[{pos}] = {x};" if V == 1 else ctx.lang.aligned_vector_store(cc, V, x, f"{arr} + {pos}")

    def splat(x: str) -> str:
        return x if V == 1 else ctx.lang.vector_splat(cc, V, x)

    m0, n0, k = ctx.fresh("m"), ctx.fresh("n"), ctx.fresh("k")
    acc = [[ctx.fresh("c") for _ in range(NV)] for _ in range(R)]
    bs = [ctx.fresh("b") for _ in range(NV)]
    ctx.emit(f"for (uint {m0} = 0u; {m0} < {M}u; {m0} += {R}u)")
    ctx.emit(f"for (uint {n0} = 0u; {n0} < {N}u; {n0} += {V * NV}u) {{")
    with ctx.indent():
        for i in range(R):
            for j in range(NV):
                ctx.emit(f"{vt} {acc[i][j]} = {load(out.reg, f'({m0} + {i}u) * {N}u + {n0} + {j * V}u')};")
        ctx.emit(f"for (uint {k} = 0u; {k} < {K}u; ++{k}) {{")
        with ctx.indent():
            for j in range(NV):
                ctx.emit(f"const {vt} {bs[j]} = {load(b.reg, f'{k} * {N}u + {n0} + {j * V}u')};")
            for i in range(R):
                x = ctx.fresh("a")
                ctx.emit(f"const {vt} {x} = {splat(f'{a.reg}[({m0} + {i}u) * {K}u + {k}]')};")
                for j in range(NV):
                    ctx.emit(f"{acc[i][j]} = {_mul_add(ctx, cc, V, x, bs[j], acc[i][j])};")
        ctx.emit("}")
        for i in range(R):
            for j in range(NV):
                ctx.emit(store(out.reg, f"({m0} + {i}u) * {N}u + {n0} + {j * V}u", acc[i][j]))
    ctx.emit("}")
    if CT.is_half(op.result.type) or CT.is_bf16(op.result.type):
        ctx.tile_loop(
            out.shape,
            lambda idx: ctx.emit(f"{out.reg}[{idx.slot}] = {round_to(op.result.type, f'{out.reg}[{idx.slot}]', ctx)};"),
        )
    ctx.values[op.result] = out


def _widened(ctx: RenderContext, x: Tile, cc: str) -> Tile:
    """`x` as a register tile of `cc`: converted element by element where its type differs (int8 operands of an
    int32 dot: once per dot, not once per use in the k loop; a generator is computed straight into it)."""
    if x.ctype == cc:
        return _registers(ctx, x)
    return ctx.materialize(Tile(x.shape, cc, gen=lambda idx: ctx.lang.convert(cc, ctx.element(x, idx)), cost=1))


def _mul_add(ctx: RenderContext, cc: str, V: int, x: str, y: str, acc: str) -> str:
    """acc + x * y: one fma for floats; for int32 the product of two widened int8 values cannot overflow, and the
    sum wraps through unsigned arithmetic as Triton's int32 does (signed overflow is undefined in OpenCL C)."""
    if cc != "int":
        return f"fma({x}, {y}, {acc})"
    ut, it = ("uint", "int") if V == 1 else (ctx.lang.vector_type("uint", V), ctx.lang.vector_type("int", V))
    return ctx.lang.bitcast(it, f"{ctx.lang.bitcast(ut, acc)} + {ctx.lang.bitcast(ut, f'{x} * {y}')}")


def _register_tile(ctx: RenderContext, cc: str, M: int, N: int) -> tuple[int, int, int]:
    """(R, NV, V): the shared tile model's register block for the device's vector width, the decision cpu_ref
    makes (the device compiler maps a `floatV` to the same vector registers); where N is narrower than one vector
    of that width, the widest vector N holds (down to scalars)."""
    bits, elem = ctx.vector_bits, 8 * CT.size_of(cc)
    while bits >= 2 * elem:
        plan = register_block(bits, elem, M, N)
        if plan is not None:
            return plan
        bits //= 2
    return min(4, M), 1, 1


def _registers(ctx: RenderContext, x: Tile) -> Tile:
    """`x` as a register tile (a generator is computed into one)."""
    return x if x.reg is not None else ctx.materialize(x)


def _dead_after(ctx: RenderContext, op: O.Dot, c_v: Value, c: object) -> bool:
    """True when register tile `c` (the accumulator operand) is read by nothing but this dot, so the dot may
    accumulate in it: `c_v` has this one use and is either an op result bound to no other value, or the loop-carried
    accumulator of an scf.for whose yield takes the dot's result back into the same slot (tutorial 03's
    `acc = tl.dot(a, b, acc)`; the loop's result is bound to the same array and receives that value)."""
    if not isinstance(c, Tile) or c.reg is None or len(c_v.uses) != 1:
        return False
    aliases = [v for v, x in ctx.values.items() if x is c and v is not c_v]
    if isinstance(c_v, OpResult):
        return not aliases
    if not isinstance(c_v, BlockArgument) or c_v.index == 0 or len(op.result.uses) != 1:
        return False
    user, pos = op.result.uses[0]
    loop = user.parent_op() if user.terminator and user.parent is c_v.block else None
    return (
        isinstance(loop, O.For)
        and loop.body is c_v.block
        and pos == c_v.index - 1
        and all(isinstance(v, OpResult) and v.op is loop and v.index == pos for v in aliases)
    )
