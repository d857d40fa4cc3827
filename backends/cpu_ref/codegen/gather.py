"""`tt.gather` and `tt.histogram`: data-dependent indexing into a tile.

Gather reads `src` at the index tensor's values along `axis`; an index outside the source is undefined behaviour on
the GPU and is clamped here so that it can never read outside the program's stack. Histogram counts values in
[0, bins) (others are ignored, as on the GPU); 3.9's optional mask drops masked-off elements.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.ir import ops as O

from .context import LoweringContext, Tile
from .rules import RULES
from .types import I64, llvm_type


@RULES.register(O.Gather)
def lower_gather(ctx: LoweringContext, op: O.Gather) -> None:
    src = ctx.tile(op.src)
    index = ctx.tile(op.indices)
    if src.buf is None:
        src = ctx.materialize(src)
    axis = op.axis
    n = src.shape[axis]

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        i = index.element(b, idx)
        i = b.sext(i, I64) if i.type.width < 64 else i
        i = b.select(b.icmp_signed("<", i, ir.Constant(I64, 0)), ir.Constant(I64, 0), i)
        i = b.select(b.icmp_signed(">", i, ir.Constant(I64, n - 1)), ir.Constant(I64, n - 1), i)
        return src.element(b, idx[:axis] + [i] + idx[axis + 1 :])

    ctx.define(op.result, Tile(op.result.type.shape, src.ety, gen=gen, cost=index.cost + 4))


@RULES.register(O.Histogram)
def lower_histogram(ctx: LoweringContext, op: O.Histogram) -> None:
    src = ctx.tile(op.src)
    mask = ctx.get(op.mask) if op.mask is not None else None
    res = op.result
    bins = res.type.shape[0]
    ety = llvm_type(res.type)
    out = ctx.new_buffer_tile(res.type.shape, ety, "hist")
    ctx.loop_nest(res.type.shape, lambda idx: ctx.store_element(out, idx, ir.Constant(ety, 0)))

    def count(idx: list[ir.Value]) -> None:
        b = ctx.b
        v = src.element(b, idx)
        v64 = b.sext(v, I64) if v.type.width < 64 else v
        hit = b.icmp_unsigned("<", v64, ir.Constant(I64, bins))  # negative values wrap to huge: ignored
        if mask is not None:
            m = mask.element(b, idx) if isinstance(mask, Tile) else mask
            hit = b.and_(hit, m)
        with b.if_then(hit):
            cur = out.element(ctx.b, [v64])
            ctx.store_element(out, [v64], ctx.b.add(cur, ir.Constant(ety, 1)))

    ctx.loop_nest(src.shape, count)
    ctx.define(res, out)
