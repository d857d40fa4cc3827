"""A small op builder for legalization passes: ops inserted before an anchor op, constants splat to a shape.

Passes that expand one op into several (dot_scaled, atomics, float emulation) build with it, so each expansion reads
as the arithmetic it performs rather than as operand lists and attribute dicts.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import ops as O
from ..ir.attrs import Attribute, DenseArrayAttr, DenseAttr, FloatAttr, IntegerAttr
from ..ir.core import Op, Value
from ..ir.enums import CmpIPredicate, EnumAttr
from ..ir.types import FloatType, IntType, TensorType, Type, i1, i32


def shaped(like: Type, elem: Type) -> Type:
    """`elem`, as a tensor of `like`'s shape when `like` is a tensor."""
    return TensorType(like.shape, elem) if like.is_tensor else elem


class Builder:
    """Inserts ops before `anchor`, each carrying the anchor's location."""

    def __init__(self, anchor: Op) -> None:
        assert anchor.parent is not None, f"{anchor.name} is not in a block"
        self.anchor = anchor
        self.block = anchor.parent
        self.loc = anchor.loc

    def op(
        self, cls: type[Op], operands: Sequence[Value], result_types: Sequence[Type], attrs: dict | None = None
    ) -> Op:
        op = cls(list(operands), list(result_types), attrs=attrs or {}, loc=self.loc)
        self.block.insert(self.block.ops.index(self.anchor), op)
        return op

    def make(self, cls: type[Op], operands: Sequence[Value], result_type: Type, **attrs: Attribute) -> Value:
        """One op of one result."""
        return self.op(cls, operands, [result_type], attrs).result

    def const(self, value: float, ty: Type) -> Value:
        """A constant of type `ty` (a tensor type gives a splat)."""
        elem = ty.element
        if isinstance(elem, IntType):
            v: int | float = int(value)
        else:
            assert isinstance(elem, FloatType), f"no constant of {elem}"
            v = float(value)
        if isinstance(ty, TensorType):
            attr: Attribute = DenseAttr((v,), ty)
        elif isinstance(elem, IntType):
            attr = IntegerAttr(int(v), elem)
        else:
            attr = FloatAttr(float(v), elem)
        return self.make(O.Constant, [], ty, value=attr)

    def const_like(self, value: float, like: Value, elem: Type | None = None) -> Value:
        return self.const(value, shaped(like.type, elem or like.type.element))

    def binary(self, cls: type[Op], a: Value, b: Value | float) -> Value:
        """`a <op> b`, `b` a value or a constant of `a`'s type."""
        if not isinstance(b, Value):
            b = self.const_like(b, a)
        return self.make(cls, [a, b], a.type)

    def cmpi(self, pred: CmpIPredicate, a: Value, b: Value | int) -> Value:
        if not isinstance(b, Value):
            b = self.const_like(b, a)
        return self.make(O.CmpI, [a, b], shaped(a.type, i1), predicate=EnumAttr(pred))

    def select(self, cond: Value, a: Value, b: Value) -> Value:
        return self.make(O.Select, [cond, a, b], a.type)

    def cast(self, cls: type[Op], v: Value, elem: Type, **attrs: Attribute) -> Value:
        return self.make(cls, [v], shaped(v.type, elem), **attrs)

    def expand_dims(self, v: Value, axis: int) -> Value:
        shape = list(v.type.shape)
        shape.insert(axis, 1)
        return self.make(O.ExpandDims, [v], TensorType(tuple(shape), v.type.element), axis=IntegerAttr(axis, i32))

    def broadcast(self, v: Value, shape: Sequence[int]) -> Value:
        return self.make(O.Broadcast, [v], TensorType(tuple(shape), v.type.element))

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        return self.make(O.Reshape, [v], TensorType(tuple(shape), v.type.element))

    def trans(self, v: Value, order: Sequence[int]) -> Value:
        shape = tuple(v.type.shape[i] for i in order)
        return self.make(O.Trans, [v], TensorType(shape, v.type.element), order=DenseArrayAttr(i32, tuple(order)))

    def join(self, a: Value, b: Value) -> Value:
        return self.make(O.Join, [a, b], TensorType((*a.type.shape, 2), a.type.element))


def replace(op: Op, new: Sequence[Value]) -> None:
    """Replace every use of `op`'s results by `new` and erase `op`."""
    for old, v in zip(op.results, new):
        old.replace_all_uses_with(v)
    op.erase()
