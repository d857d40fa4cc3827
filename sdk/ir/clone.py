"""Deep copies of ops with their values remapped, for passes that duplicate code (inlining a function body).

    values = {callee_arg: caller_value}
    copy = clone_op(op, values)     # operands read through `values`; the copy's results are added to it

A value missing from `values` is used as it is (a value defined above the copied code). Nested regions are copied
with fresh blocks and block arguments; successors inside them point at the copied blocks.
"""

from __future__ import annotations

from .core import Block, Op, Region, UnknownOp, Value

__all__ = ["clone_block_ops", "clone_op"]


def clone_op(op: Op, values: dict[Value, Value], blocks: dict[Block, Block] | None = None) -> Op:
    """A copy of `op` (regions included) whose operands are `values[v]` where mapped; maps `op`'s results (and the
    values inside its regions) to the copy's in `values`. `blocks` maps successors already copied."""
    blocks = {} if blocks is None else blocks
    regions = [_clone_region(r, values, blocks) for r in op.regions]
    operands = [values.get(v, v) for v in op.operands]
    types = [r.type for r in op.results]
    names = [r.name for r in op.results]
    successors = [blocks.get(b, b) for b in op.successors]
    if isinstance(op, UnknownOp):
        new: Op = UnknownOp(op.op_name, operands, types, dict(op.attrs), regions, op.loc, names, successors)
    else:
        new = type(op)(operands, types, dict(op.attrs), regions, op.loc, names, successors)
    if op.segment_sizes is not None:
        new.segment_sizes = op.segment_sizes
    for old, r in zip(op.results, new.results):
        values[old] = r
    return new


def clone_block_ops(src: Block, dst: Block, values: dict[Value, Value], blocks: dict[Block, Block]) -> None:
    """Append copies of `src`'s ops (its terminator too) to `dst`."""
    for op in src.ops:
        dst.append(clone_op(op, values, blocks))


def _clone_region(region: Region, values: dict[Value, Value], blocks: dict[Block, Block]) -> Region:
    # every block (and its arguments) first, so that branches between them find their copies
    copies = []
    for b in region.blocks:
        nb = Block([a.type for a in b.args], [a.name for a in b.args], b.label)
        for a, na in zip(b.args, nb.args):
            na.loc = a.loc
            values[a] = na
        blocks[b] = nb
        copies.append(nb)
    for b, nb in zip(region.blocks, copies):
        clone_block_ops(b, nb, values, blocks)
    return Region(copies)
