"""Dot operands that consecutive programs load alike, which a backend may keep between them.

Programs of a matmul grid that share a column block of B (tutorial 03 orders its programs in groups of GROUP_M that
do) load the same B tiles at the same k steps. A CPU backend running such programs one after another on a core can
keep each tile it loaded and hand it to the next program instead of reading B again: B's rows lie a whole row of
B apart, so with a power-of-two N they share a few L2 sets and the panel does not survive in L2 from one program to
the next (cpu_ref at 2048³: B panels laid out contiguously ran 1.06x faster in the same run).

This module decides where that is sound:

- the tile must be a pure function of scalars (`scalar_leaves`): two loads whose scalars are equal read the same
  addresses under the same mask, so the scalars' values are the tile's key;
- memory must not change between the program that loaded the tile and the one that reuses it, except by writes
  that Triton's model leaves unordered: programs run in no guaranteed order, so another program's plain store to
  memory some program reads is a race whose either outcome is allowed. What a program orders itself must stay
  visible to it, so the kernel may make no store before the loop that loads the tile (its stores come after it),
  and nothing that synchronizes programs (atomics, volatile loads, calls) may appear in it at all.
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import BlockArgument, Op, Value

#: ops a kernel may contain around a reused load: control flow and ops whose only effect is on the host's view
_NEUTRAL = (O.For, O.If, O.Yield, O.Return, O.Assert, O.Print)


def scalar_leaves(values: list[Value]) -> list[Value] | None:
    """The scalars that `values` (tensors) are pure functions of, in a fixed order; None where a tensor comes from
    anything but a pure op without regions (a load, a loop-carried tensor, a reduction)."""
    leaves: list[Value] = []
    seen: set[Value] = set()
    todo = list(reversed(values))
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if not v.type.is_tensor:
            leaves.append(v)
            continue
        op = v.owner
        if isinstance(v, BlockArgument) or not isinstance(op, Op) or not op.pure or op.regions:
            return None
        todo.extend(reversed(op.operands))
    return leaves


def _top_level(op: Op, func: O.Func) -> Op | None:
    """The op of `func`'s body that holds `op` (itself where it lies there)."""
    while op is not None and op.parent is not func.body:
        op = op.parent_op()
    return op


def _kernel_allows_reuse(func: O.Func, loop: O.For) -> bool:
    body = func.body
    at = body.ops.index(loop)
    for op in func.walk():
        if op is func or op.pure or isinstance(op, _NEUTRAL):
            continue
        if isinstance(op, O.Load) and not op.is_volatile:
            continue
        if isinstance(op, O.Store):
            top = _top_level(op, func)
            if top is not None and body.ops.index(top) > at:
                continue
        return False
    return True


def reusable_dot_operand(load: O.Load, func: O.Func) -> list[Value] | None:
    """The key scalars of `load` where its tile may be kept for later programs (see the module docstring): the b
    operand of a tt.dot it alone feeds, loaded in an scf.for of the kernel's own body; None elsewhere."""
    v = load.result
    block = load.parent
    if load.is_volatile or not v.type.is_tensor or len(v.uses) != 1 or block is None:
        return None
    dot, index = v.uses[0]
    if not isinstance(dot, O.Dot) or index != 1 or dot.parent is not block:
        return None
    loop = block.parent.parent if block.parent is not None else None
    if not isinstance(loop, O.For) or loop.parent is not func.body or not _kernel_allows_reuse(func, loop):
        return None
    return scalar_leaves([x for x in (load.ptr, load.mask, load.other) if x is not None])
