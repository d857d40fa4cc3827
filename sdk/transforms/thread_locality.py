"""A reduction accumulated across loop iterations keeps lane-wide partial results; one reduction after the loop.

The pattern (Triton's `local = op(local, tl.reduce_op(x, axis))` inside a `for`):

    %r = scf.for ... iter_args(%acc = %init) -> (tensor<Mxf32>) {
      %x = ...                                         : tensor<MxNxf32>
      %s = "tt.reduce"(%x) <{axis = 1}> ({ arith.addf }) : tensor<MxNxf32> -> tensor<Mxf32>
      %t = arith.addf %acc, %s
      scf.yield %t
    }

reduces every row to one element in every iteration: a horizontal reduction across vector lanes (on a GPU, across
threads) each time. Rewritten, the loop carries L partial results per row, L the target's vector lanes of the element
type, and reduces the reshaped tile `[M, N/L, L]` over its middle axis only, which is lane-wise work:

    %r = scf.for ... iter_args(%acc = splat(neutral)) -> (tensor<MxLxf32>) {
      %s = "tt.reduce"(reshape %x to MxN/LxL) <{axis = 1}> : -> tensor<MxLxf32>
      %t = arith.addf %acc, %s
    }
    %f = arith.addf %init, "tt.reduce"(%r) <{axis = 1}>

This is what TritonGPU's OptimizeThreadLocality does with layouts; here the lanes come from the target descriptor.
It applies only where the result is the same up to reassociation, which Triton's reduce contract allows: the combine
region is exactly one associative, commutative op (one with a `neutral` element on its class) and the loop combines
with that same op; the carried value, the in-loop reduction and the combined value each have that one use; the
reduced axis is a multiple of L greater than L. A loop that runs no iteration gives `op(init, neutral) = init`.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.clone import clone_op
from ..ir.core import Module, Op, Region
from ..ir.dialects.arith import BinaryOp
from ..ir.types import TensorType, Type
from ..pipeline import PassContext, ir_pass
from .build import Builder

#: the most partial results a row keeps (an i1 or i8 reduction on a wide vector unit would otherwise keep hundreds)
MAX_LANES = 64


def lanes_for(elem: Type, vector_width_bits: int, n: int) -> int:
    """The partial results per row: the vector lanes of `elem`, halved until they divide the reduced axis `n`."""
    lanes = max(1, min(MAX_LANES, vector_width_bits // max(1, elem.width)))
    while lanes > 1 and n % lanes:
        lanes //= 2
    return lanes


def _combine_op(reduce: O.Reduce) -> type[BinaryOp] | None:
    """The class of the combine region's op when the region is exactly `return op(a, b)` (either order) and the op
    has a neutral element."""
    op = reduce.single_op
    if len(reduce.operands) != 1 or not isinstance(op, BinaryOp) or type(op).neutral is None:
        return None
    return type(op)


def _single_use(value: O.Value) -> Op | None:
    return value.uses[0][0] if len(value.uses) == 1 else None


def _copy_region(reduce: O.Reduce) -> Region:
    tmp = clone_op(reduce, {})
    region = tmp.regions.pop()
    tmp.drop_operands()
    return region


class _Candidate:
    """One iter_arg of a loop in the pattern: `combine` = op(acc, reduce(x)) yielded at `index`."""

    def __init__(self, loop: O.For, index: int, combine: BinaryOp, reduce: O.Reduce, lanes: int) -> None:
        self.loop, self.index, self.combine, self.reduce, self.lanes = loop, index, combine, reduce, lanes


def _match(loop: O.For, index: int, vector_width_bits: int) -> _Candidate | None:
    body = loop.body
    acc = body.args[1 + index]
    combine = _single_use(acc)
    if not isinstance(combine, BinaryOp) or combine.parent is not body or type(combine).neutral is None:
        return None
    if len(set(combine.operands)) != 2:
        return None
    other = combine.operands[1] if combine.operands[0] is acc else combine.operands[0]
    reduce = getattr(other, "op", None)
    if not isinstance(reduce, O.Reduce) or reduce.parent is not body or _single_use(other) is not combine:
        return None
    if _combine_op(reduce) is not type(combine):
        return None
    term = body.terminator
    if _single_use(combine.result) is not term or list(term.operands).count(combine.result) != 1:
        return None
    if term.operands.index(combine.result) != index:
        return None
    src = reduce.operands[0].type
    if not src.is_tensor or src.element != combine.result.type.element:
        return None
    n = src.shape[reduce.axis]
    lanes = lanes_for(src.element, vector_width_bits, n)
    if lanes < 2 or lanes >= n:
        return None
    return _Candidate(loop, index, combine, reduce, lanes)


def _rewrite(c: _Candidate, flat: bool) -> None:
    loop, reduce, combine, lanes = c.loop, c.reduce, c.combine, c.lanes
    axis = reduce.axis
    x = reduce.operands[0]
    shape, elem = tuple(x.type.shape), x.type.element
    n = shape[axis]
    split = (*shape[:axis], n // lanes, lanes, *shape[axis + 1 :])
    partial_type = TensorType((*shape[:axis], lanes, *shape[axis + 1 :]), elem)
    acc_type = TensorType((partial_type.numel,), elem) if flat else partial_type
    result_type = reduce.result.type
    op_cls = type(combine)

    # in the loop: reduce the reshaped tile over its middle axis, combine lane-wise with the carried partials
    bld = Builder(reduce)
    partial = O.Reduce(
        [bld.reshape(x, split)],
        [partial_type],
        attrs=dict(reduce.attrs),
        regions=[_copy_region(reduce)],
        loc=reduce.loc,
    )
    bld.block.insert(bld.block.ops.index(reduce), partial)
    reduce.result.replace_all_uses_with(bld.reshape(partial.result, acc_type.shape) if flat else partial.result)
    reduce.erase()
    combine.result.type = acc_type
    acc = loop.body.args[1 + c.index]
    acc.type = acc_type

    # the loop starts from the neutral element and yields the partials
    init = loop.inits[c.index]
    start = Builder(loop).const(op_cls.neutral(elem), acc_type)
    loop.set_operand(3 + c.index, start)
    out = loop.results[c.index]
    users = list(out.uses)
    out.type = acc_type

    # after it: reduce the partials and combine with the initial value, in the loop's operand order
    block = loop.parent
    after = block.ops[block.ops.index(loop) + 1]
    partials = Builder(after).reshape(out, partial_type.shape) if flat else out
    final = O.Reduce(
        [partials], [result_type], attrs=dict(reduce.attrs), regions=[_copy_region(partial)], loc=reduce.loc
    )
    block.insert(block.ops.index(after), final)
    operands = [init if v is acc else final.result for v in combine.operands]
    total = op_cls(operands, [result_type], attrs=dict(combine.attrs), loc=combine.loc)
    block.insert(block.ops.index(after), total)
    for user, i in users:
        user.set_operand(i, total.result)


@ir_pass("thread-locality")
class ThreadLocality:
    """Loop-carried reductions keep lane-wide partial results (module docstring); `vector_width_bits` sets the lanes
    (the target descriptor's width where the pass is built without one). `flat_partials` carries them as one 1-D
    tensor (reshaped in the loop and after it), for a code generator whose elementwise loops vectorize best over a
    contiguous 1-D tile (cpu_ref: a [M, 16] combine became gathers across rows)."""

    vector_width_bits: int = 0
    flat_partials: bool = False

    def run(self, module: Module, ctx: PassContext | None) -> None:
        bits = self.vector_width_bits or (ctx.target.vector_width_bits if ctx is not None else 128)
        for op in list(module.walk()):
            if not isinstance(op, O.For):
                continue
            for index in range(len(op.inits)):
                cand = _match(op, index, bits)
                if cand is not None:
                    _rewrite(cand, self.flat_partials)


__all__ = ["MAX_LANES", "ThreadLocality", "lanes_for"]
