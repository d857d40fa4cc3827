"""`tt.map_elementwise` (the region inlined in the loop over a work-item's elements; its blocks become labels joined
by `goto`) and `ub.poison` (zero)."""

from __future__ import annotations

from triton_backend_sdk.ir import ops as O

from .context import Idx, RenderContext, Tile
from .control import declare_like
from .rules import CSTYLE_RULES as RULES


def _apply(ctx: RenderContext, op: O.MapElementwise, args: list[str], targets: list[str]) -> None:
    """Emit `targets = region(args)` in its own C scope."""
    blocks = op.body.blocks
    ctx.emit("{")
    with ctx.indent():
        if len(blocks) == 1:
            for t, v in zip(targets, ctx.render_region(blocks[0], args)):
                ctx.emit(f"{t} = {v};")
        else:
            done = ctx.fresh("map_done")
            for b in blocks:
                ctx.labels[b] = ctx.fresh("map_bb")
                if b is not blocks[0]:
                    ctx.block_vars[b] = [declare_like(ctx, a) for a in b.args]
                    for a, var in zip(b.args, ctx.block_vars[b]):
                        ctx.values[a] = var
            for a, x in zip(blocks[0].args, args):
                ctx.values[a] = x
            for b in blocks:
                if b is not blocks[0]:
                    ctx.emit(f"{ctx.labels[b]}: ;")
                term = ctx.render_block(b)
                if isinstance(term, O.MapElementwiseReturn):
                    for t, v in zip(targets, term.operands):
                        ctx.emit(f"{t} = {ctx.scalar(v)};")
                    ctx.emit(f"goto {done};")
                elif isinstance(term, (O.Br, O.CondBr)):
                    ctx.render_op(term)
                else:
                    raise ctx.unsupported(f"tt.map_elementwise block ending in {term.op_name if term else 'nothing'}")
            ctx.emit(f"{done}: ;")
    ctx.emit("}")


@RULES.register(O.MapElementwise)
def render_map_elementwise(ctx: RenderContext, op: O.MapElementwise) -> None:
    if op.pack != 1:
        raise ctx.unsupported(f"tt.map_elementwise with pack = {op.pack}", op)
    srcs = [ctx.get(v) for v in op.srcs]
    shape = op.results[0].type.shape
    if not shape:
        names = [ctx.name_for(r) for r in op.results]
        for r, n in zip(op.results, names):
            ctx.emit(f"{ctx.ctype(r)} {n};")
        _apply(ctx, op, srcs, names)
        for r, n in zip(op.results, names):
            ctx.values[r] = n
        return
    outs = [ctx.declare_tile(shape, ctx.ctype(r), ctx.name_for(r, "t")) for r in op.results]

    def body(idx: Idx) -> None:
        _apply(ctx, op, [ctx.element(s, idx) for s in srcs], [f"{t.reg}[{idx.slot}]" for t in outs])

    ctx.tile_loop(shape, body)
    for r, t in zip(op.results, outs):
        ctx.define(r, t)


@RULES.register(O.Poison)
def render_poison(ctx: RenderContext, op: O.Poison) -> None:
    zero = f"(({ctx.ctype(op.result)})0)"
    t = op.result.type
    ctx.define(
        op.result, Tile(t.shape, ctx.ctype(op.result), gen=lambda idx: zero, index_only=True) if t.is_tensor else zero
    )
