"""Where a tile value may be read: at its consumer instead of its own position.

Backends that evaluate tiles lazily (a generator per element, fused into the loop of whoever consumes it) can read a
load's elements inside its consumer's loop — for a vector add, one loop of loads, add and store instead of buffers
filled first. That moves the reads later, so it is only sound when no write can happen in between: the value must
flow through pure ops of the same block into one sink, and every op between the load and that sink must be pure or
another (non-volatile) load.

A value may have several uses on its way to the sink (the integer-semantics guards read a divisor three times:
`select(c == 0, .., a / select(c == 0 | c == -1, 1, c))`) when all of them are elementwise ops of one chain: the
sink's loop then evaluates the value's element at the one index it is at, several times in one iteration, which a
compiler merges into one read (no write lies between: the reads are pure and in one place).
"""

from __future__ import annotations

from ..ir import ops as O
from ..ir.core import Block, Op, Value


def _chain_op(op: Op) -> bool:
    """A pure op the generator chain runs through (one tensor result, no regions)."""
    return op.pure and not op.regions and len(op.results) == 1 and op.results[0].type.is_tensor


def _elementwise(op: Op, shape: tuple[int, ...]) -> bool:
    """Maps element i of its `shape`d operands to element i of its result (same index, so several reads merge)."""
    return op.elementwise and op.results[0].type.shape == shape


def sink_of(v: Value) -> Op | None:
    """The one op where `v`'s value ends up, through pure tensor ops of `v`'s block, or None.

    A single-use path may run through any pure op (broadcast, trans: the sink reads the element it maps to). Where
    a value of the chain has several uses, every op of the chain must be elementwise on `v`'s shape, so that each
    sink element reads `v` at that element only; the chain must still end in one sink."""
    block = v.owner.parent if isinstance(v.owner, Op) else v.owner
    if not isinstance(block, Block) or not v.type.is_tensor:
        return None
    shape = v.type.shape
    chain: set[Op] = set()
    sink: Op | None = None
    branched = False
    todo = [v]
    while todo:
        x = todo.pop()
        if not x.uses:
            return None
        branched = branched or len(x.uses) > 1
        for user, _ in x.uses:
            if user.parent is not block:
                return None
            if user in chain:
                continue
            if _chain_op(user):
                chain.add(user)
                todo.append(user.results[0])
            elif sink is None or sink is user:
                sink = user
            else:
                return None
    if branched and not all(_elementwise(op, shape) for op in chain):
        return None
    return sink


def _writes_nothing(o: Op, reductions: bool = False) -> bool:
    """Whether op `o` cannot write memory: pure without regions (with `reductions`, a `tt.reduce` too, whose
    combine region is pure), or a non-volatile load."""
    if o.pure and (not o.regions or (reductions and isinstance(o, O.Reduce))):
        return True
    return isinstance(o, O.Load) and not o.is_volatile


def load_sink(load: O.Load) -> Op | None:
    """The op that consumes `load`'s value (through pure tensor ops of the same block, see `sink_of`) if the load
    can be read there; None when it cannot."""
    block = load.parent
    if block is None or load.is_volatile or not load.result.type.is_tensor:
        return None
    sink = sink_of(load.result)
    if sink is None:
        return None
    ops = block.ops
    if not all(_writes_nothing(o) for o in ops[ops.index(load) + 1 : ops.index(sink)]):
        return None
    return sink


def rereadable(load: O.Load) -> bool:
    """Whether `load`'s elements may be read from memory again wherever its value is evaluated, instead of being kept
    in a buffer between its row reductions and its other readers (softmax's row, read by its max and by `x - max`;
    RMS norm's, read by the sum of squares and by the scaling): every op its value reaches through pure tensor ops
    lies in its block, and nothing between the load and the last of them can write memory. The last may be a store:
    it reads in its own loop, as a `load_sink` store does."""
    block = load.parent
    if block is None or load.is_volatile or not load.result.type.is_tensor:
        return False
    readers: set[Op] = set()
    todo = [load.result]
    while todo:
        for user, _ in todo.pop().uses:
            if user.parent is not block:
                return False
            if user not in readers:
                readers.add(user)
                if _chain_op(user):
                    todo.append(user.results[0])
    if not readers:
        return False
    ops = block.ops
    end = max(ops.index(op) for op in readers)
    return all(_writes_nothing(o, reductions=True) for o in ops[ops.index(load) + 1 : end])


def same_index(load: O.Load, sink: Op) -> bool:
    """Whether `load`'s value reaches `sink` (its `load_sink`) through elementwise ops only, so that the sink's
    element i reads the load's element i (a transpose or broadcast in between would read another element, under
    another mask bit). Where the value branches, `sink_of` has already made every op of the chain elementwise."""
    v = load.result
    while True:
        user = v.uses[0][0]
        if user is sink:
            return True
        if not user.elementwise:
            return False
        v = user.results[0]


def _feeds_value_only(load: O.Load, sink: O.Store) -> bool:
    """Whether the values between `load` and `sink` reach the store as its value only (not its pointer or mask)."""
    seen, todo = set(), [load.result]
    while todo:
        x = todo.pop()
        for user, _ in x.uses:
            if user is sink:
                if x is not sink.value:
                    return False
            elif user not in seen:
                seen.add(user)
                todo.extend(user.results)
    return True


def mask_implied_by_sink(load: O.Load, sink: Op) -> bool:
    """Whether a load read in its sink's loop (`load_sink`) needs no mask test of its own: the sink is a store
    under the same mask value whose stored value reads the load at the same index, so wherever the store evaluates
    its value under its mask test, the load's mask holds. A backend drops the load's test only where its store
    evaluates the value under that test (cpu_ref: inside a run whose mask passed; opencl: inside `if (mask)`)."""
    mask = load.mask
    return (
        mask is not None
        and isinstance(sink, O.Store)
        and sink.mask is mask
        and same_index(load, sink)
        and _feeds_value_only(load, sink)
    )


def dot_operand_in_place(load: O.Load) -> int | None:
    """The operand position (0: a, 1: b) of the `tt.dot` that may read `load`'s memory itself, at its own place,
    instead of a copy of the tile made at the load's place; None where it may not. The dot is the only use of the
    value and lies in the load's block, the load is non-volatile, and nothing between them can write memory.

    A dot reads each element of a many times (once per column block of the output): a copy costs a store and a load
    per element where the dot's first read of a row could have been its last miss (cpu_ref: tutorial 03's A tile)."""
    block = load.parent
    v = load.result
    if block is None or load.is_volatile or not v.type.is_tensor or len(v.uses) != 1:
        return None
    dot, index = v.uses[0]
    if not isinstance(dot, O.Dot) or dot.parent is not block or index > 1:
        return None
    ops = block.ops
    if not all(_writes_nothing(o) for o in ops[ops.index(load) + 1 : ops.index(dot)]):
        return None
    return index
