"""A small rewriter for SDK IR passes: insert ops before or after an op, replace an op's results, erase.

    rw = Rewriter.before(op)                      # insertion point: just before `op`, ops take op's location
    two = rw.insert(O.Constant.from_float(2.0, t))
    mul = rw.insert(O.MulF.build(op.lhs, two.result))
    rw.replace(op, mul)                           # uses of op's results now use mul's; op is erased

Ops are built with their classes' typed builders (`AddI.build(a, b)`, `Constant.from_int(0, i64)`) or plain
constructors; the rewriter only places them and keeps use lists right.
"""

from __future__ import annotations

from collections.abc import Sequence

from .core import Block, Location, Op, Value

__all__ = ["Rewriter", "erase", "insert_after", "insert_before", "replace", "replace_all_uses"]


def _block_of(op: Op) -> Block:
    if op.parent is None:
        raise ValueError(f"{op.op_name} is not in a block")
    return op.parent


def insert_before(anchor: Op, op: Op) -> Op:
    """Place `op` just before `anchor` (in its block); returns `op`."""
    block = _block_of(anchor)
    return block.insert(block.ops.index(anchor), op)


def insert_after(anchor: Op, op: Op) -> Op:
    """Place `op` just after `anchor`; returns `op`."""
    block = _block_of(anchor)
    return block.insert(block.ops.index(anchor) + 1, op)


def replace_all_uses(old: Value, new: Value) -> None:
    """Every use of `old` becomes a use of `new`."""
    if old is not new:
        old.replace_all_uses_with(new)


def erase(op: Op) -> None:
    """Remove `op`, whose results must be unused, from its block and from its operands' use lists."""
    op.erase()


def replace(op: Op, new: Op | Sequence[Value]) -> None:
    """Uses of `op`'s results become uses of `new`'s results (or of the given values, one per result); `op` is
    erased. `new` must already be in place (see `insert_before`)."""
    values = new.results if isinstance(new, Op) else list(new)
    if len(values) != len(op.results):
        raise ValueError(f"replacing {op.op_name}'s {len(op.results)} result(s) with {len(values)} value(s)")
    for old, v in zip(op.results, values):
        replace_all_uses(old, v)
    erase(op)


class Rewriter:
    """An insertion point next to an anchor op. Inserted ops keep their order and take `loc` (the anchor's
    location unless given) when they have none."""

    def __init__(self, anchor: Op, after: bool = False, loc: Location | None = None) -> None:
        self.anchor = anchor
        self.block = _block_of(anchor)
        self.loc = loc if loc is not None else anchor.loc
        self._last = anchor if after else None

    @classmethod
    def before(cls, anchor: Op, loc: Location | None = None) -> Rewriter:
        return cls(anchor, False, loc)

    @classmethod
    def after(cls, anchor: Op, loc: Location | None = None) -> Rewriter:
        return cls(anchor, True, loc)

    def insert(self, op: Op) -> Op:
        """Place `op` at the insertion point (after the ops inserted so far); returns `op`."""
        if op.loc is None:
            op.loc = self.loc
        if self._last is None:
            insert_before(self.anchor, op)
        else:
            insert_after(self._last, op)
        self._last = op
        return op

    def build(self, cls: type[Op], *operands: Value | Sequence[Value] | None, **kw: object) -> Op:
        """`cls.build(*operands, **kw)` placed at the insertion point."""
        return self.insert(cls.build(*operands, **kw))  # type: ignore[arg-type]

    replace = staticmethod(replace)
    replace_all_uses = staticmethod(replace_all_uses)
    erase = staticmethod(erase)
