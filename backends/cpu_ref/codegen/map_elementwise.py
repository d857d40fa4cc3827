"""`tt.map_elementwise` (the region applied to each element, its blocks as LLVM blocks) and `ub.poison`."""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.core import Value

from .context import LoweringContext, Tile
from .control import Slot, lower_region_body
from .rules import RULES
from .types import llvm_type


def _apply(ctx: LoweringContext, op: O.MapElementwise, args: list[ir.Value]) -> list[ir.Value]:
    """Emit the region once for one tuple of source elements; returns the elements it yields."""
    blocks = op.body.blocks
    if len(blocks) == 1:
        term = lower_region_body(ctx, blocks[0], args)
        return [ctx.scalar(v) for v in term.operands]
    results = [Slot(ctx, Value(r.type.element)) for r in op.results]
    done = ctx.fn.append_basic_block("map.done")
    for blk in blocks[1:]:
        ctx.block_targets[blk] = (ctx.fn.append_basic_block("map.bb"), [Slot(ctx, a) for a in blk.args])
    for k, blk in enumerate(blocks):
        if k == 0:
            term = lower_region_body(ctx, blk, args)
        else:
            bb, slots = ctx.block_targets[blk]
            ctx.b.position_at_end(bb)
            term = lower_region_body(ctx, blk, [s.read() for s in slots])
        if isinstance(term, O.MapElementwiseReturn):
            for slot, v in zip(results, term.operands):
                slot.write(ctx.scalar(v))
            ctx.b.branch(done)
        else:
            ctx.lower_op(term)
    ctx.b.position_at_end(done)
    return [slot.read() for slot in results]


@RULES.register(O.MapElementwise)
def lower_map_elementwise(ctx: LoweringContext, op: O.MapElementwise) -> None:
    if op.pack != 1:
        raise UnsupportedError("cpu_ref", f"tt.map_elementwise with pack = {op.pack}", op.loc)
    srcs = [ctx.get(v) for v in op.srcs]
    shape = op.results[0].type.shape
    if not shape:
        for r, v in zip(op.results, _apply(ctx, op, srcs)):
            ctx.define(r, v)
        return
    outs = [ctx.new_buffer_tile(shape, llvm_type(r.type.element), "map") for r in op.results]

    def body(idx: list[ir.Value]) -> None:
        args = [s.element(ctx.b, idx) if isinstance(s, Tile) else s for s in srcs]
        for t, v in zip(outs, _apply(ctx, op, args)):
            ctx.store_element(t, idx, v)

    ctx.loop_nest(shape, body)
    for r, t in zip(op.results, outs):
        ctx.define(r, t)


@RULES.register(O.Poison)
def lower_poison(ctx: LoweringContext, op: O.Poison) -> None:
    t = op.result.type
    zero = ir.Constant(llvm_type(t.element), None)
    if t.is_tensor:
        ctx.define(op.result, Tile(t.shape, zero.type, gen=lambda b, idx: zero))
    else:
        ctx.define(op.result, zero)
