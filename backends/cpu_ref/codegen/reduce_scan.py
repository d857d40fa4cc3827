"""`tt.reduce` and `tt.scan` with arbitrary combine regions, inlined as scalar code.

Triton reduces in a tree on the GPU and so assumes the combine function is associative and commutative; the CPU
reduction over the innermost axis keeps several independent accumulator lanes (which LLVM vectorizes) and folds
them pairwise at the end. Other axes accumulate row by row, contiguous along the innermost dimension.
"""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Block

from . import vreduce
from .context import LoweringContext, Tile
from .rules import RULES
from .types import I64, llvm_type

#: accumulator lanes for an innermost-axis reduction (a power of two)
LANES = 16


def combine(ctx: LoweringContext, block: Block, lhs: Sequence[ir.Value], rhs: Sequence[ir.Value]) -> list[ir.Value]:
    """Emit the combine region for one pair of element tuples; returns what its `*.return` yields."""
    n = len(lhs)
    for arg, v in zip(block.args, [*lhs, *rhs]):
        ctx.values[arg] = v
    for op in block.ops[:-1]:
        ctx.lower_op(op)
    term = block.ops[-1]
    assert len(term.operands) == n, f"{term.op_name} yields {len(term.operands)} values, expected {n}"
    return [ctx.scalar(v) for v in term.operands]


def _slots(ctx: LoweringContext, types: Sequence[ir.Type], n: int) -> list[Tile]:
    return [ctx.new_buffer_tile((n,), t, "acc") for t in types]


def _read(ctx: LoweringContext, tiles: Sequence[Tile], i: ir.Value) -> list[ir.Value]:
    return [t.element(ctx.b, [i]) for t in tiles]


def _write(ctx: LoweringContext, tiles: Sequence[Tile], i: ir.Value, vals: Sequence[ir.Value]) -> None:
    for t, v in zip(tiles, vals):
        ctx.store_element(t, [i], v)


def fold_lanes(ctx: LoweringContext, block: Block, accs: Sequence[Tile], width: int) -> list[ir.Value]:
    """Pairwise fold of `width` accumulator lanes (buffers, one per reduced operand) with the combine region."""
    c64 = lambda x: ir.Constant(I64, x)
    while width > 1:
        width //= 2
        for j in range(width):
            new = combine(ctx, block, _read(ctx, accs, c64(j)), _read(ctx, accs, c64(j + width)))
            _write(ctx, accs, c64(j), new)
    return _read(ctx, accs, c64(0))


@RULES.register(O.Reduce)
def lower_reduce(ctx: LoweringContext, op: O.Reduce) -> None:
    if op in ctx.fused_results:  # computed where its operand's buffer was filled (fused_fill.py)
        ctx.define(op.result, ctx.fused_results.pop(op))
        return
    from .fused_fill import reduce_generator

    folded = reduce_generator(ctx, op, ctx.tile(op.operands[0])) if len(op.operands) == 1 else None
    if folded is not None:
        ctx.define(op.result, folded)
        return
    srcs = [ctx.tile(v) for v in op.operands]
    shape = srcs[0].shape
    axis = op.axis
    n = shape[axis]
    out_shape = shape[:axis] + shape[axis + 1 :]
    etys = [s.ety for s in srcs]
    block = op.combine
    c64 = lambda x: ir.Constant(I64, x)

    aplan = vreduce.axis_plan(ctx, srcs[0], axis, block) if axis != len(shape) - 1 and len(srcs) == 1 else None
    if aplan is not None:
        out = ctx.new_buffer_tile(out_shape, etys[0], "red")
        vreduce.reduce_axis(ctx, srcs[0], axis, *aplan, out)
        ctx.define(op.result, out)
        return
    if axis != len(shape) - 1:
        # accumulate whole rows: acc[idx] = combine(acc[idx], src[..., k, ...]), contiguous in the innermost dim
        outs = [ctx.new_buffer_tile(out_shape, t, "red") for t in etys]
        at = lambda idx, k: idx[:axis] + [k] + idx[axis:]
        ctx.loop_nest(
            out_shape,
            lambda idx: [ctx.store_element(o, idx, s.element(ctx.b, at(idx, c64(0)))) for o, s in zip(outs, srcs)],
        )

        def step(k: ir.Value) -> None:
            def row(idx: list[ir.Value]) -> None:
                acc = [o.element(ctx.b, idx) for o in outs]
                new = combine(ctx, block, acc, [s.element(ctx.b, at(idx, k)) for s in srcs])
                for o, v in zip(outs, new):
                    ctx.store_element(o, idx, v)

            ctx.loop_nest(out_shape, row)

        if n > 1:
            ctx.counted_loop(c64(n), step, known_nonzero=True, start=c64(1))
        for res, o in zip(op.results, outs):
            ctx.define(res, o)
        return

    vplan = vreduce.plan(ctx, srcs[0], block) if len(srcs) == 1 else None
    lanes = min(LANES, n) if vplan is None else vplan[1]
    while n % lanes:
        lanes //= 2
    outs = [ctx.new_buffer_tile(out_shape, t, "red") for t in etys] if out_shape else []
    accs = _slots(ctx, etys, lanes)

    def reduce_row(idx: list[ir.Value]) -> list[ir.Value]:
        if vplan is not None:
            vreduce.reduce_row(ctx, srcs[0], idx, *vplan[:1], vplan[1], vplan[2], accs[0])
            return fold(lanes)
        at = lambda k: idx + [k]
        for j in range(lanes):
            _write(ctx, accs, c64(j), [s.element(ctx.b, at(c64(j))) for s in srcs])

        def chunk(k: ir.Value) -> None:
            # a real loop over the lanes (not unrolled here): LLVM's loop vectorizer turns it into one vector
            # combine per chunk, where straight-line code per lane is left scalar
            base = ctx.b.mul(k, c64(lanes))

            def lane(j: ir.Value) -> None:
                kk = ctx.b.add(base, j)
                new = combine(ctx, block, _read(ctx, accs, j), [s.element(ctx.b, at(kk)) for s in srcs])
                _write(ctx, accs, j, new)

            # unroll disabled: LLVM 22's full unrolling of this loop inside the chunk loop, then loop vectorization
            # of the chunk loop, dropped chunks of a minnum reduction at -O3 (tl.min of -(pid * 64 + arange) over 64
            # elements gave the minimum of the first 48; fuzz seed 300 kernel 44)
            ctx.counted_loop(c64(lanes), lane, known_nonzero=True, no_unroll=True)

        if n > lanes:
            ctx.counted_loop(c64(n // lanes), chunk, known_nonzero=True, start=c64(1))
        return fold(lanes)

    def fold(width: int) -> list[ir.Value]:
        return fold_lanes(ctx, block, accs, width)

    if not out_shape:
        for res, v in zip(op.results, reduce_row([])):
            ctx.define(res, v)
        return

    def row(idx: list[ir.Value]) -> None:
        for o, v in zip(outs, reduce_row(idx)):
            ctx.store_element(o, idx, v)

    ctx.loop_nest(out_shape, row)
    for res, o in zip(op.results, outs):
        ctx.define(res, o)


@RULES.register(O.Scan)
def lower_scan(ctx: LoweringContext, op: O.Scan) -> None:
    srcs = [ctx.tile(v) for v in op.operands]
    shape = srcs[0].shape
    axis = op.axis
    n = shape[axis]
    outer = shape[:axis] + shape[axis + 1 :]
    outs = [ctx.new_buffer_tile(shape, llvm_type(r.type), "scan") for r in op.results]
    block = op.combine
    c64 = lambda x: ir.Constant(I64, x)
    reverse = op.reverse

    def line(idx: list[ir.Value]) -> None:
        at = lambda k: idx[:axis] + [k] + idx[axis:]
        first = c64(n - 1) if reverse else c64(0)
        for o, s in zip(outs, srcs):
            ctx.store_element(o, at(first), s.element(ctx.b, at(first)))

        def step(k: ir.Value) -> None:
            b = ctx.b
            cur = b.sub(c64(n - 1), k) if reverse else k
            prev = b.add(cur, c64(1)) if reverse else b.sub(cur, c64(1))
            acc = [o.element(b, at(prev)) for o in outs]
            new = combine(ctx, block, acc, [s.element(b, at(cur)) for s in srcs])
            for o, v in zip(outs, new):
                ctx.store_element(o, at(cur), v)

        if n > 1:
            ctx.counted_loop(c64(n), step, known_nonzero=True, start=c64(1))

    ctx.loop_nest(outer, line)
    for res, o in zip(op.results, outs):
        ctx.define(res, o)
