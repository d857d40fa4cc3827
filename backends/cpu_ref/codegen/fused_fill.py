"""A buffer filled together with the row reductions that read it: one pass over the row instead of two.

A tile that is stored (a load's copy, or a costly generator used twice) and also reduced along its last axis
would be walked twice: once to fill its buffer, once by the reduction's vector loop. Softmax does this twice over
(the loaded row and its max; the exponentials and their sum), Inductor's norms likewise. Here the fill loop itself
keeps the reductions' vector accumulators: each V-wide vector it writes is also folded into them, in the same
order `vreduce.reduce_row` folds them (A accumulators, chunk by chunk, pairwise at the end), so the results are
the same bits as the separate reduction's. A tile read only by such reductions is not stored at all. The reduction
rule later finds its result here (`LoweringContext.fused_results`).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from triton_backend_sdk.analysis.tile_model import fused_row_reductions, reduction_plan
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Value

from . import vreduce
from .context import LoweringContext, Tile, linear_index
from .reduce_scan import fold_lanes
from .types import F32, F64, I1, I64, bit_width

#: the V-wide vector of a tile's elements starting at an index (the last one a multiple of V)
VectorAt = Callable[[list[ir.Value]], ir.Value]


def fusable_reductions(v: Value, ety: ir.Type) -> list[O.Reduce]:
    """The shared choice (`tile_model.fused_row_reductions`) narrowed to what `vreduce` folds in vectors: a single
    combine op with a vector form, over f32/f64 or integer elements."""
    if ety == I1 or not (ety in (F32, F64) or isinstance(ety, ir.IntType)):
        return []
    return [r for r in fused_row_reductions(v) if vreduce.simple_combine(r.combine) is not None]


def fill_reducing(
    ctx: LoweringContext,
    v: Value,
    ety: ir.Type,
    vector_at_for: Callable[[int], VectorAt | None],
    keep: bool | None = None,
) -> tuple[bool, Tile | None]:
    """Fill `v`'s buffer and compute its fusable reductions in the same loop: (fused, the buffer), the buffer None
    when only those reductions read `v` or `keep` is False (its other readers read memory again); (False, None)
    when nothing fuses (`vector_at_for(V)` gives the vector source for V lanes, or None)."""
    reductions = fusable_reductions(v, ety)
    shape = v.type.shape
    if not reductions or not shape:
        return False, None
    plan = reduction_plan(ctx.vector_bits, bit_width(ety), shape[-1])
    if plan is None:
        return False, None
    lanes, accs = plan
    vector_at = vector_at_for(lanes)
    if vector_at is None:
        return False, None
    if keep is None:
        keep = any(user not in reductions for user, _ in v.uses)
    out = ctx.new_buffer_tile(shape, ety, "fill") if keep else None
    results = _walk_rows(ctx, shape, ety, (lanes, accs), vector_at, out, reductions)
    for r, res in zip(reductions, results):
        ctx.fused_results[r] = res
    return True, out


def reduce_generator(ctx: LoweringContext, op: O.Reduce, src: Tile) -> Tile | ir.Value | None:
    """The last-axis reduction of a generator (a chain nothing else reads, such as layer norm's `(x - mean)²`) in
    vectors, V elements evaluated per step as the fill loop does; None when it has no vector form."""
    if src.buf is not None or len(op.operands) != 1 or op.axis != len(src.shape) - 1:
        return None
    ety = src.ety
    if ety == I1 or not (ety in (F32, F64) or isinstance(ety, ir.IntType)):
        return None
    if vreduce.simple_combine(op.combine) is None:
        return None
    plan = reduction_plan(ctx.vector_bits, bit_width(ety), src.shape[-1])
    if plan is None:
        return None
    vector_at = generator_vectors(ctx, src)(plan[0])
    return _walk_rows(ctx, src.shape, ety, plan, vector_at, None, [op])[0]


def _walk_rows(
    ctx: LoweringContext,
    shape: tuple[int, ...],
    ety: ir.Type,
    plan: tuple[int, int],
    vector_at: VectorAt,
    out: Tile | None,
    reductions: list[O.Reduce],
) -> list[Tile | ir.Value]:
    """One walk over the rows of a `shape` tile: each V-wide vector stored into `out` (if any) and folded into
    every reduction's A accumulators; returns each reduction's result (a row-shaped buffer, or a scalar)."""
    lanes, accs = plan
    fns = [vreduce.simple_combine(r.combine) for r in reductions]
    row_shape = shape[:-1]
    results = [ctx.new_buffer_tile(row_shape, ety, "red") for _ in reductions] if row_shape else []
    lane_bufs = [ctx.new_buffer_tile((lanes,), ety, "acc") for _ in reductions]
    n = shape[-1]
    vty = ir.VectorType(ety, lanes)
    nbytes = lanes * bit_width(ety) // 8
    c64 = lambda x: ir.Constant(I64, x)
    scalars: list[ir.Value] = []

    def chunk(prefix: list[ir.Value], base: ir.Value) -> list[ir.Value]:
        b = ctx.b
        vecs = []
        for q in range(accs):
            idx = prefix + [b.add(base, c64(q * lanes), flags=["nuw", "nsw"]) if q else base]
            vec = vector_at(idx)
            if out is not None:
                dst = b.gep(out.buf, [linear_index(b, shape, idx)], source_etype=ety)
                b.store(vec, dst, align=min(64, nbytes))
            vecs.append(vec)
        return vecs

    def row(prefix: list[ir.Value]) -> None:
        b = ctx.b
        first = chunk(prefix, c64(0))
        acc = [list(first) for _ in reductions]
        steps = n // (lanes * accs)
        if steps > 1:
            pre = b.block
            loop = b.append_basic_block("fill")
            done = b.append_basic_block("fill.done")
            b.branch(loop)
            b.position_at_end(loop)
            k = b.phi(I64)
            k.add_incoming(c64(1), pre)
            phis = [[b.phi(vty) for _ in range(accs)] for _ in reductions]
            for ps, init in zip(phis, acc):
                for p, x in zip(ps, init):
                    p.add_incoming(x, pre)
            vecs = chunk(prefix, b.mul(k, c64(lanes * accs), flags=["nuw", "nsw"]))
            acc = [[fn(ctx, p, x) for p, x in zip(ps, vecs)] for fn, ps in zip(fns, phis)]
            end = b.block
            for ps, new in zip(phis, acc):
                for p, x in zip(ps, new):
                    p.add_incoming(x, end)
            nxt = b.add(k, c64(1), flags=["nuw", "nsw"])
            k.add_incoming(nxt, end)
            b.cbranch(b.icmp_signed("<", nxt, c64(steps)), loop, done)
            b.position_at_end(done)
        for i, (r, fn, vecs, lane_buf) in enumerate(zip(reductions, fns, acc, lane_bufs)):
            while len(vecs) > 1:
                vecs = [fn(ctx, vecs[j], vecs[j + len(vecs) // 2]) for j in range(len(vecs) // 2)]
            ctx.b.store(vecs[0], ctx.b.gep(lane_buf.buf, [c64(0)], source_etype=ety), align=4)
            (value,) = fold_lanes(ctx, r.combine, [lane_buf], lanes)
            if row_shape:
                ctx.store_element(results[i], prefix, value)
            else:
                scalars.append(value)

    if len(row_shape) == 1 and row_shape[0] > 1:
        # a real loop: fully unrolled, LLVM merged the rows' walks into one loop over selected base pointers, and
        # SLP then read each 16-lane vector as 1 + 1 + 2 + 4 + 8 element loads (2x slower per byte than one row)
        ctx.counted_loop(c64(row_shape[0]), lambda i: row([i]), known_nonzero=True, no_unroll=True, name="rows")
    else:
        ctx.loop_nest(row_shape, row)
    return list(results) if row_shape else scalars


def generator_vectors(ctx: LoweringContext, t: Tile) -> Callable[[int], VectorAt]:
    """Vectors of a generator's elements, V scalar evaluations each (LLVM's SLP vectorizer makes them one vector
    computation, as it does for a store's runs)."""

    def for_lanes(lanes: int) -> VectorAt:
        vty = ir.VectorType(t.ety, lanes)

        def at(idx: list[ir.Value]) -> ir.Value:
            b = ctx.b
            vec = ir.Constant(vty, None)
            for k in range(lanes):
                i = idx if k == 0 else idx[:-1] + [b.add(idx[-1], ir.Constant(I64, k), flags=["nuw", "nsw"])]
                vec = b.insert_element(vec, t.element(b, i), ir.Constant(ir.IntType(32), k))
            return vec

        return at

    return for_lanes
