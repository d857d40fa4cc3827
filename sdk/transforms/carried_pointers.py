"""Carried pointer tiles → carried scalar offsets.

Kernels advance pointer tiles through loops (`a_ptrs += BLOCK_K * stride`). Carried as a tile, every iteration copies
a tensor of pointers and every load reads its addresses from memory, so the access pattern is lost. When each
iteration adds the same splat offset to every element, the tile is `start + splat(offset)` with a scalar offset:
this pass carries the scalar instead and rebuilds the tile from the loop-invariant start inside the body, where the
addresses are again an affine expression a code generator can vectorize.

Rewrites `scf.for ... iter_args(%p = %p0)` whose yield is `tt.addptr %p, (tt.splat %s)` (in either operand order of
the chain, `%s` any integer scalar) into an i64 offset iter_arg; uses of the loop result are rebuilt after the loop.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.attrs import DenseAttr, IntegerAttr
from ..ir.core import Block, Module, Op, Value
from ..ir.types import IntType, TensorType, i64, is_ptr
from ..pipeline import IRPass, PassContext


def _insert_before(anchor: Op, op: Op) -> Op:
    block = anchor.parent
    assert block is not None
    return block.insert(block.ops.index(anchor), op)


def _insert_at(block: Block, index: int, op: Op) -> Op:
    return block.insert(index, op)


def _to_i64(v: Value, before: Op) -> Value:
    t = v.type
    assert isinstance(t, IntType)
    if t.width == 64:
        return v
    return _insert_before(before, O.ExtSI([v], [i64], loc=before.loc)).result


def _splat_scalar(step: Value, before: Op) -> Value | None:
    """The scalar `s` if `step` is `tt.splat s` of an integer scalar or a splat integer constant (made scalar)."""
    owner = step.owner
    if isinstance(owner, O.Splat) and isinstance(owner.src.type, IntType):
        return owner.src
    if isinstance(owner, O.Constant) and isinstance(owner.value, DenseAttr) and owner.value.is_splat:
        elem = owner.value.type.element
        if isinstance(elem, IntType):
            value = IntegerAttr(int(owner.value.values[0]), elem)
            return _insert_before(before, O.Constant([], [elem], attrs={"value": value}, loc=owner.loc)).result
    return None


class CarriedPointerOffsets(IRPass):
    name = "carried-pointer-offsets"

    def run(self, module: Module, ctx: PassContext) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.For):
                for i in range(len(op.inits)):
                    _rewrite(op, i)


def _rewrite(loop: O.For, i: int) -> bool:
    arg = loop.body.args[1 + i]
    result = loop.results[i]
    init = loop.inits[i]
    ty = arg.type
    if not (isinstance(ty, TensorType) and is_ptr(ty)):
        return False
    yield_op = loop.body.ops[-1]
    nxt = yield_op.operands[i]
    adv = nxt.owner
    if not isinstance(adv, O.AddPtr) or adv.ptr is not arg:
        return False
    step = _splat_scalar(adv.offset, yield_op)
    if step is None:
        return False
    off_ty = TensorType(ty.shape, i64)
    # the carried value becomes an i64 offset, starting at 0
    zero = _insert_before(loop, O.Constant([], [i64], attrs={"value": IntegerAttr(0, i64)}, loc=loop.loc))
    loop.set_operand(3 + i, zero.result)
    uses = list(arg.uses)
    arg.type = i64
    body = loop.body
    splat = _insert_at(body, 0, O.Splat([arg], [off_ty], loc=loop.loc))
    rebuilt = _insert_at(body, 1, O.AddPtr([init, splat.result], [ty], loc=loop.loc, result_names=[arg.name]))
    for user, k in uses:
        user.set_operand(k, rebuilt.result)
    step64 = _to_i64(step, yield_op)
    new_off = _insert_before(yield_op, O.AddI([arg, step64], [i64], loc=yield_op.loc))
    yield_op.set_operand(i, new_off.result)
    if not adv.result.uses:
        adv.erase()
    # the loop result: rebuild the pointer tile after the loop for any user
    result_uses = list(result.uses)
    result.type = i64
    if result_uses:
        block = loop.parent
        assert block is not None
        at = block.ops.index(loop) + 1
        rsplat = _insert_at(block, at, O.Splat([result], [off_ty], loc=loop.loc))
        rptr = _insert_at(block, at + 1, O.AddPtr([init, rsplat.result], [ty], loc=loop.loc))
        for user, k in result_uses:
            user.set_operand(k, rptr.result)
    return True
