"""The loop both dot microkernels run (dot.py, dot_groups.py): a block of accumulators carried as LLVM phis through
a counted loop, so that LLVM keeps them in vector registers from the first step to the last."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from .context import LoweringContext
from .types import I32, I64

Block = list[list[ir.Value]]


def carried_loop(
    ctx: LoweringContext, init: Block, trips: int, step: Callable[[ir.Value, Block], Block], name: str
) -> Block:
    """`acc = step(i, acc)` for i in [0, trips) (trips >= 1) from `init`; returns the last step's values."""
    b = ctx.b
    pre = b.block
    loop = b.append_basic_block(f"{name}.k")
    done = b.append_basic_block(f"{name}.done")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64, name=f"{name}.i")
    i.add_incoming(ir.Constant(I64, 0), pre)
    acc = [[b.phi(x.type) for x in row] for row in init]
    for phis, values in zip(acc, init):
        for phi, x in zip(phis, values):
            phi.add_incoming(x, pre)
    new = step(i, acc)
    end = b.block
    for phis, values in zip(acc, new):
        for phi, x in zip(phis, values):
            phi.add_incoming(x, end)
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, end)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(I64, trips)), loop, done)
    b.position_at_end(done)
    return new


def splat(b: ir.IRBuilder, x: ir.Value, vty: ir.VectorType) -> ir.Value:
    """Scalar `x` in every lane of `vty` (a broadcast)."""
    lanes = ir.Constant(ir.VectorType(I32, vty.count), [0] * vty.count)
    return b.shuffle_vector(
        b.insert_element(ir.Constant(vty, None), x, ir.Constant(I32, 0)), ir.Constant(vty, None), lanes
    )
