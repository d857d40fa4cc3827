"""`tt.dot`: c = a @ b + acc, accumulating in the result type (fp16/bf16 inputs widen to fp32, int8 to int32).

Products are fused multiply-adds in k order per output element, as a GPU thread computes them; tf32 precision is
computed as ieee (more precise, never less; listed in the conformance notes).

Where the tile allows it, the product runs as a register-blocked microkernel: an MR × (NV·V) block of the output
lives in vector registers (LLVM vector phis) for the whole k loop; each step loads NV vectors of a row of b and
broadcasts MR scalars of a column of a. Other shapes fall back to an (m, k, n) loop nest LLVM vectorizes.

An a of the result's element type (fp32, fp64, int32; f16/bf16 for an f16/bf16 result), or a bf16 a of an fp32
product, each element widened as it is broadcast (bf16 tutorial 03 at 2048^3: its element-wise masked copy of A was a
quarter of the kernel's samples; `_widens_to`), loaded
for this dot alone (`uses.dot_operand_in_place`) with whole rows contiguous is read where it lies, not copied: each
row block broadcasts from its MR row pointers and prefetches the next block's rows while it computes (tutorial 03 at
2048^3, 128x128x32 tiles: the copy's misses were ~10% of the kernel's samples; best of 9 launches 250-278 -> 293-313
GFLOP/s, interleaved processes). An a whose rows lie consecutive down each column in runs covering a row block
(the A of `x.T @ w`) is read in place too: one pointer per k, the MR rows after it (2048^3: 174 -> 307 GFLOP/s; its
element-wise copy gathered every element). A mask is tested once per tile at run time; where it
fails anywhere (a ragged k edge) the product runs on the load's copy instead. b stays copied: its rows lie a whole
row of B apart and, read in place, fell into the same L1 sets (slower in the same test).
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.analysis.tile_model import CACHE_LINE, register_block
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import BlockArgument, Value

from .context import LoweringContext, Tile, linear_index
from .convert import fp8_to_float
from .dot_groups import group_plan, group_product
from .memory import InPlaceRead, in_place_read
from .numerics import narrow as narrow_float
from .register_loop import carried_loop, splat
from .rules import RULES
from .types import BF16, F16, F32, F64, I64, bit_width, buffer_type, fp8_format, is_float_type, llvm_type


def _widen(ctx: LoweringContext, v: ir.Value, to: ir.Type) -> ir.Value:
    src = v.type.element if isinstance(v.type, ir.VectorType) else v.type
    dst = to.element if isinstance(to, ir.VectorType) else to
    if src == dst:
        return v
    if is_float_type(dst):
        return ctx.b.fpext(v, to) if is_float_type(src) else ctx.b.sitofp(v, to)
    return ctx.b.sext(v, to)


def _mul_add(ctx: LoweringContext, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    bb = ctx.b
    ty = c.type
    elem = ty.element if isinstance(ty, ir.VectorType) else ty
    if not is_float_type(elem):
        return bb.add(c, bb.mul(a, b))
    if isinstance(ty, ir.VectorType):
        suffix = f"v{ty.count}{'f64' if elem == F64 else 'f32'}"
    else:
        suffix = "f64" if elem == F64 else "f32"
    return bb.call(ctx.intrinsic(f"llvm.fma.{suffix}", ty, [ty, ty, ty]), [a, b, c])


def _ptr(ctx: LoweringContext, t: Tile, idx: list[ir.Value]) -> ir.Value:
    st = buffer_type(t.ety)
    return ctx.b.gep(t.buf, [linear_index(ctx.b, t.shape, idx)], source_etype=st)


def _microkernel_plan(ctx: LoweringContext, ety: ir.Type, m_: int, n_: int) -> tuple[int, int, int] | None:
    """(MR, NV, V) for an m_ × n_ output of element type `ety`, or None when the tile does not fit the scheme."""
    if ety not in (ir.FloatType(), F64, ir.IntType(32)):
        return None
    return register_block(ctx.vector_bits, bit_width(ety), m_, n_)


def _prefetch_rows(ctx: LoweringContext, a: InPlaceRead, bidx: list[ir.Value], rows: list[ir.Value], k_: int) -> None:
    """Prefetch rows of a read in place (each k_ elements from its row pointer; one more line for a row that does not
    start on a line). x86 and AArch64 prefetches never fault, so rows are not checked against the tile's mask."""
    b = ctx.b
    elem = CACHE_LINE // max(1, bit_width(a.ety) // 8)
    for row in rows:
        base = a.row_pointer(ctx, bidx + [row, ir.Constant(I64, 0)])
        for off in [*range(0, k_, elem), k_ - 1]:
            ctx.prefetch(b.gep(base, [ir.Constant(I64, off)], source_etype=buffer_type(a.ety)))


def _microkernel(
    ctx: LoweringContext,
    a: Tile | InPlaceRead,
    b_: Tile,
    out: Tile,
    bidx: list[ir.Value],
    ety: ir.Type,
    plan: tuple[int, int, int],
) -> None:
    """`a` is a tile buffer, or a load read in place (`InPlaceRead` with whole rows): then each output row block
    reads its MR rows of a from memory, and prefetches those of the next row block while it computes."""
    mr, nv, v = plan
    m_, n_ = out.shape[-2], out.shape[-1]
    k_ = b_.shape[-2]
    vty = ir.VectorType(ety, v)
    c64 = lambda x: ir.Constant(I64, x)
    a_st = buffer_type(a.ety)
    b_vty = ir.VectorType(b_.ety, v)
    direct = isinstance(a, InPlaceRead)
    by_rows = direct and a.whole_rows

    def a_rows(rows: list[ir.Value]) -> list[ir.Value]:
        if not by_rows:
            return []
        return [a.row_pointer(ctx, bidx + [r, c64(0)]) for r in rows]

    def a_at(row_ptrs: list[ir.Value], r: int, row: ir.Value, k: ir.Value, column: ir.Value | None) -> ir.Value:
        if by_rows:
            return ctx.b.gep(row_ptrs[r], [k], source_etype=a_st)
        if column is not None:
            return ctx.b.gep(column, [c64(r)], source_etype=a_st)
        return _ptr(ctx, a, bidx + [row, k])

    def block(m0: ir.Value, n0: ir.Value) -> None:
        b = ctx.b
        rows = [b.add(m0, c64(r)) for r in range(mr)]
        row_ptrs = a_rows(rows)
        cols = [b.add(n0, c64(j * v)) for j in range(nv)]
        init = [
            [b.load(_ptr(ctx, out, bidx + [rows[r], cols[j]]), typ=vty, align=4) for j in range(nv)] for r in range(mr)
        ]

        def step(k: ir.Value, acc: list[list[ir.Value]]) -> list[list[ir.Value]]:
            bv = [_widen(ctx, b.load(_ptr(ctx, b_, bidx + [k, cols[j]]), typ=b_vty, align=1), vty) for j in range(nv)]
            column = a.row_pointer(ctx, bidx + [rows[0], k]) if direct and not by_rows else None
            new = []
            for r in range(mr):
                s = splat(b, _widen(ctx, b.load(a_at(row_ptrs, r, rows[r], k, column), typ=a_st), ety), vty)
                new.append([_mul_add(ctx, s, bv[j], acc[r][j]) for j in range(nv)])
            return new

        new = carried_loop(ctx, init, k_, step, "mk")
        for r in range(mr):
            for j in range(nv):
                b.store(new[r][j], _ptr(ctx, out, bidx + [rows[r], cols[j]]), align=4)

    def m_step(mi: ir.Value) -> None:
        m0 = ctx.b.mul(mi, c64(mr))
        if by_rows:
            b = ctx.b
            nxt = b.mul(b.select(b.icmp_signed("<", mi, c64(m_ // mr - 1)), b.add(mi, c64(1)), mi), c64(mr))
            _prefetch_rows(ctx, a, bidx, [b.add(nxt, c64(r)) for r in range(mr)], k_)
        ctx.counted_loop(c64(n_ // (v * nv)), lambda ni: block(m0, ctx.b.mul(ni, c64(v * nv))), known_nonzero=True)

    ctx.counted_loop(c64(m_ // mr), m_step, known_nonzero=True)


def _loop_nest(ctx: LoweringContext, a: Tile, b_: Tile, out: Tile, bidx: list[ir.Value], ety: ir.Type) -> None:
    m_, n_ = out.shape[-2], out.shape[-1]
    k_ = a.shape[-1]
    c64 = lambda x: ir.Constant(I64, x)

    def row(m: ir.Value) -> None:
        def kstep(k: ir.Value) -> None:
            av = _widen(ctx, a.element(ctx.b, bidx + [m, k]), ety)

            def col(n: ir.Value) -> None:
                bv = _widen(ctx, b_.element(ctx.b, bidx + [k, n]), ety)
                new = _mul_add(ctx, av, bv, out.element(ctx.b, bidx + [m, n]))
                ctx.store_element(out, bidx + [m, n], new)

            ctx.counted_loop(c64(n_), col, known_nonzero=True)

        ctx.counted_loop(c64(k_), kstep, known_nonzero=True)

    ctx.counted_loop(c64(m_), row, known_nonzero=True)


def _accumulates_in_place(op: O.Dot) -> bool:
    """True for `acc = tt.dot(a, b, acc)` carried by the enclosing scf.for and used by nothing else: the loop's
    accumulator buffer can then be updated in place, saving a copy in and a copy out per iteration."""
    acc = op.c
    if not isinstance(acc, BlockArgument) or len(acc.uses) != 1 or acc.index < 1:
        return False
    body = acc.block
    loop = body.parent.parent if body.parent is not None else None
    if not isinstance(loop, O.For) or op.parent is not body:
        return False
    term = body.ops[-1]
    return [(u, i) for u, i in op.result.uses] == [(term, acc.index - 1)] and isinstance(term, O.Yield)


def _decoded(ctx: LoweringContext, t: Tile, v: Value) -> Tile:
    """fp8 operands travel as i8 bit patterns: decode them to f32 once, before the product reads them."""
    fmt = fp8_format(v.type)
    if fmt is None:
        return t
    return ctx.materialize(
        Tile(t.shape, F32, gen=lambda b, idx: fp8_to_float(ctx, t.element(b, idx), fmt, F32), cost=t.cost + 2)
    )


def _widened(ctx: LoweringContext, t: Tile, ety: ir.Type) -> Tile:
    """An fp16/bf16/int8 operand widened to the accumulator type once, into a buffer: the microkernel reads each
    element of b once per row block of the output (and each of a once per column block), so widening at each read
    repeats the conversion m/MR (n/NV·V) times."""
    if t.ety == ety:
        return t
    return ctx.materialize(Tile(t.shape, ety, gen=lambda b, idx: _widen(ctx, t.element(b, idx), ety), cost=t.cost + 1))


def _reads_in_place(a: InPlaceRead, plan: tuple[int, int, int]) -> bool:
    """The microkernel can broadcast a's elements from where they lie: whole rows (a row pointer each, k along it),
    or runs down the columns covering a row block (one pointer per k, the MR rows after it)."""
    return a.whole_rows or (a.column_run >= 2 and a.column_run % plan[0] == 0)


def _widens_to(src: ir.Type, ety: ir.Type) -> bool:
    """An a of element type `src` read in place into a product of element type `ety`: the same type, or bf16 into
    fp32 (widened, a shift, as the microkernel broadcasts each element). fp16 keeps the copy: LLVM vectorizes its
    masked element-wise copy with the conversion, while widening at each broadcast (a scalar vcvtph2ps) was slower
    (tutorial 03 at 2048^3, alternating processes: fp16 270-277 GFLOP/s copied, 210-220 in place; bf16, whose
    copy stays scalar, 107-119 copied, 212-233 in place)."""
    return src == ety or (src == BF16 and ety == F32)


@RULES.register(O.Dot)
def lower_dot(ctx: LoweringContext, op: O.Dot) -> None:
    a, b_, c = (ctx.tile(v) for v in (op.a, op.b, op.c))
    a_read = in_place_read(ctx, op.a)
    res = op.result
    ety = llvm_type(res.type)
    half = ety in (F16, BF16)
    plan = _microkernel_plan(ctx, F32 if half else ety, res.type.shape[-2], res.type.shape[-1])
    if a_read is not None and not (plan is not None and _reads_in_place(a_read, plan) and _widens_to(a_read.ety, ety)):
        a, a_read = a_read.copy(ctx), None
    a = _decoded(ctx, a, op.a)
    b_ = _decoded(ctx, b_, op.b)
    a = a if a.buf is not None or a_read is not None else ctx.materialize(a)
    b_ = b_ if b_.buf is not None else ctx.materialize(b_)
    shape = res.type.shape
    if half:
        # an f16/bf16 result accumulates in f32 and rounds once at the end, as a GPU's MMA keeps wider partial sums
        # (rounding per k step would lose ~sqrt(K) ulps; an fma on halves would also need compiler-rt's __truncdfhf2)
        narrow = c
        c = Tile(c.shape, F32, gen=lambda b, idx: b.fpext(narrow.element(b, idx), F32), cost=c.cost + 1)
        ety = F32
    out = c if _accumulates_in_place(op) and c.buf is not None else ctx.materialize(c)
    groups = group_plan(ctx, a, b_, ety, plan) if a_read is None else None
    if groups is not None:
        group_product(ctx, a, b_, out, len(shape) - 2, *groups)
        ctx.define(res, out)
        return
    if plan is not None:
        a = a if a_read is not None else _widened(ctx, a, ety)
        b_ = _widened(ctx, b_, ety)

    def product(a_: Tile | InPlaceRead) -> None:
        def batch(bidx: list[ir.Value]) -> None:
            if plan is not None:
                _microkernel(ctx, a_, b_, out, bidx, ety, plan)
            else:
                _loop_nest(ctx, a_, b_, out, bidx, ety)

        if len(shape) == 3:
            ctx.counted_loop(ir.Constant(I64, shape[0]), lambda i: batch([i]), known_nonzero=True)
        else:
            batch([])

    full = a_read.all_true(ctx) if a_read is not None else None
    if a_read is None:
        product(a)
    elif full is None:
        product(a_read)
    else:
        # a masked A (tutorial 03's k < K - k0): rows read in place where the whole tile is in bounds, else the copy
        with ctx.b.if_else(full) as (in_bounds, edge):
            with in_bounds:
                product(a_read)
            with edge:
                product(a_read.copy(ctx))
    if half:
        wide, rty = out, llvm_type(res.type)
        out = ctx.materialize(Tile(shape, rty, gen=lambda b, idx: narrow_float(b, wide.element(b, idx), rty), cost=1))
    ctx.define(res, out)
