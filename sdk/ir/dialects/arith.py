"""The `arith` dialect, and the elementwise op families every dialect's elementwise ops belong to.

A lowering rule registered for a family class (`FloatBinaryOp`, `CastOp`, ...) covers every member.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from ..attrs import Attribute, DenseAttr, FloatAttr, IntegerAttr
from ..core import IRVerificationError, Op, OpResult, Value, register_op
from ..enums import CmpFPredicate, CmpIPredicate
from ..fields import ConstantProp, EnumProp, FastMathProp, Operand, Result
from ..types import FloatType, IndexType, IntType, TensorType, Type, i1, is_float, is_int, like

# ---------------------------------------------------------------------------------------------------------------------
# Families


class ElementwiseOp(Op):
    """Maps each element of its tensor operands to the same element of the result. Declares no fields, so a plugin
    op derived from it alone is read and printed in the generic form."""

    elementwise = True
    pure = True
    #: the C99 math function that computes the op on doubles (`exp`; on floats `expf`), where C has one: a fact of
    #: the op that every C-like renderer and libm-calling code generator reads, instead of a name table of its own.
    #: `rint` for `math.roundeven` (C99 has no roundeven; rint is it in the default rounding mode kernels run in)
    function: ClassVar[str] = ""


def check_same_types(op: Op, values: Sequence[Value | OpResult], what: str = "operands and result") -> None:
    first = values[0].type
    for v in values:
        if v.type != first:
            shown = ", ".join(dict.fromkeys(str(x.type) for x in values))
            raise IRVerificationError(f"{what} must have one type, not {shown}", op)


class BinaryOp(ElementwiseOp):
    """`lhs <op> rhs`, operands and result of one type: `%a, %b [fastmath<..>] attr-dict : T`."""

    lhs = Operand()
    rhs = Operand()
    result = Result()
    fastmath = FastMathProp()
    assembly_format = "$lhs, $rhs (fastmath$fastmath)? attr-dict : type($result)"
    #: for an associative, commutative op: its neutral element n of an element type (`op(x, n) == x` for every x,
    #: NaN and -0.0 included), which lets a pass start a reassociated reduction by this op; None: not such an op
    neutral: ClassVar[Callable[[Type], int | float] | None] = None

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return types["lhs"][:1]

    def verify_(self) -> None:
        check_same_types(self, [self.lhs, self.rhs, self.result])


def _zero(t: Type) -> int:
    return 0


def _one(t: Type) -> int:
    return 1


def _all_ones(t: Type) -> int:  # integers are held in their signed reading
    return -1


def _signed_min(t: Type) -> int:
    return -(1 << (t.width - 1))


def _signed_max(t: Type) -> int:
    return (1 << (t.width - 1)) - 1


def _neg_zero(t: Type) -> float:
    return -0.0


def _float_one(t: Type) -> float:
    return 1.0


def _nan(t: Type) -> float:  # maxnum/minnum return the other operand of a NaN
    return float("nan")


def _neg_inf(t: Type) -> float:
    return float("-inf")


def _pos_inf(t: Type) -> float:
    return float("inf")


class IntBinaryOp(BinaryOp):
    def verify_(self) -> None:
        super().verify_()
        if not is_int(self.result.type):
            raise IRVerificationError(f"needs integer operands, not {self.result.type}", self)


class FloatBinaryOp(BinaryOp):
    def verify_(self) -> None:
        super().verify_()
        if not is_float(self.result.type):
            raise IRVerificationError(f"needs float operands, not {self.result.type}", self)


class UnaryOp(ElementwiseOp):
    """`op src`, operand and result of one type: `%x [fastmath<..>] attr-dict : T`."""

    src = Operand()
    result = Result()
    fastmath = FastMathProp()
    assembly_format = "$src (fastmath$fastmath)? attr-dict : type($result)"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return types["src"][:1]

    def verify_(self) -> None:
        check_same_types(self, [self.src, self.result])


class FloatUnaryOp(UnaryOp):
    def verify_(self) -> None:
        super().verify_()
        if not is_float(self.result.type):
            raise IRVerificationError(f"needs a float operand, not {self.result.type}", self)


class CastOp(UnaryOp):
    """Elementwise conversion from the operand's element type to the result's: `%x : T1 to T2`. Build with the
    result type: `ExtSI.build(x, i64)` (the element type; a tensor operand gives a tensor result)."""

    assembly_format = "$src (fastmath$fastmath)? attr-dict : type($src) to type($result)"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return None

    @classmethod
    def build(cls, src: Value, to: Type, **kw: object) -> Op:  # type: ignore[override]
        return super().build(src, result_types=[like(src.type, to.element)], **kw)

    def verify_(self) -> None:
        if self.src.type.shape != self.result.type.shape:
            raise IRVerificationError(f"casts {self.src.type} to a different shape, {self.result.type}", self)


# ---------------------------------------------------------------------------------------------------------------------
# Integer and float arithmetic


@register_op
class AddI(IntBinaryOp):
    name = "arith.addi"
    neutral = staticmethod(_zero)


@register_op
class SubI(IntBinaryOp):
    name = "arith.subi"


@register_op
class MulI(IntBinaryOp):
    name = "arith.muli"
    neutral = staticmethod(_one)


@register_op
class DivSI(IntBinaryOp):
    name = "arith.divsi"


@register_op
class DivUI(IntBinaryOp):
    name = "arith.divui"


@register_op
class RemSI(IntBinaryOp):
    name = "arith.remsi"


@register_op
class RemUI(IntBinaryOp):
    name = "arith.remui"


@register_op
class MinSI(IntBinaryOp):
    name = "arith.minsi"
    neutral = staticmethod(_signed_max)


@register_op
class MaxSI(IntBinaryOp):
    name = "arith.maxsi"
    neutral = staticmethod(_signed_min)


@register_op
class MinUI(IntBinaryOp):
    name = "arith.minui"
    neutral = staticmethod(_all_ones)


@register_op
class MaxUI(IntBinaryOp):
    name = "arith.maxui"
    neutral = staticmethod(_zero)


@register_op
class ShLI(IntBinaryOp):
    name = "arith.shli"


@register_op
class ShRSI(IntBinaryOp):
    name = "arith.shrsi"


@register_op
class ShRUI(IntBinaryOp):
    name = "arith.shrui"


@register_op
class AndI(IntBinaryOp):
    name = "arith.andi"
    neutral = staticmethod(_all_ones)


@register_op
class OrI(IntBinaryOp):
    name = "arith.ori"
    neutral = staticmethod(_zero)


@register_op
class XOrI(IntBinaryOp):
    name = "arith.xori"
    neutral = staticmethod(_zero)


@register_op
class CeilDivSI(IntBinaryOp):
    name = "arith.ceildivsi"


@register_op
class CeilDivUI(IntBinaryOp):
    name = "arith.ceildivui"


@register_op
class FloorDivSI(IntBinaryOp):
    name = "arith.floordivsi"


@register_op
class AddF(FloatBinaryOp):
    name = "arith.addf"
    neutral = staticmethod(_neg_zero)


@register_op
class SubF(FloatBinaryOp):
    name = "arith.subf"


@register_op
class MulF(FloatBinaryOp):
    name = "arith.mulf"
    neutral = staticmethod(_float_one)


@register_op
class DivF(FloatBinaryOp):
    name = "arith.divf"


@register_op
class RemF(FloatBinaryOp):
    name = "arith.remf"


@register_op
class MaxNumF(FloatBinaryOp):
    name = "arith.maxnumf"
    neutral = staticmethod(_nan)


@register_op
class MinNumF(FloatBinaryOp):
    name = "arith.minnumf"
    neutral = staticmethod(_nan)


@register_op
class MaximumF(FloatBinaryOp):
    name = "arith.maximumf"
    neutral = staticmethod(_neg_inf)


@register_op
class MinimumF(FloatBinaryOp):
    name = "arith.minimumf"
    neutral = staticmethod(_pos_inf)


@register_op
class NegF(FloatUnaryOp):
    name = "arith.negf"


# ---------------------------------------------------------------------------------------------------------------------
# Casts


@register_op
class ExtSI(CastOp):
    name = "arith.extsi"


@register_op
class ExtUI(CastOp):
    name = "arith.extui"


@register_op
class TruncI(CastOp):
    name = "arith.trunci"


@register_op
class ExtF(CastOp):
    name = "arith.extf"


@register_op
class TruncF(CastOp):
    name = "arith.truncf"


@register_op
class SIToFP(CastOp):
    name = "arith.sitofp"


@register_op
class UIToFP(CastOp):
    name = "arith.uitofp"


@register_op
class FPToSI(CastOp):
    name = "arith.fptosi"


@register_op
class FPToUI(CastOp):
    name = "arith.fptoui"


@register_op
class ArithBitcast(CastOp):
    name = "arith.bitcast"


@register_op
class IndexCast(CastOp):
    name = "arith.index_cast"


@register_op
class IndexCastUI(CastOp):
    name = "arith.index_castui"


# ---------------------------------------------------------------------------------------------------------------------
# Comparisons, select, constants


class _Compare(BinaryOp):
    """`pred, %a, %b : T` -> i1 (shaped like T)."""

    assembly_format = "$predicate, $lhs, $rhs (fastmath$fastmath)? attr-dict : type($lhs)"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return [like(types["lhs"][0], i1)]

    @classmethod
    def build(cls, predicate: object, lhs: Value, rhs: Value, **kw: object) -> Op:  # type: ignore[override]
        return super().build(lhs, rhs, predicate=predicate, **kw)

    def verify_(self) -> None:
        check_same_types(self, [self.lhs, self.rhs], "operands")
        if self.result.type != like(self.lhs.type, i1):
            raise IRVerificationError(f"result type {self.result.type} is not i1-valued like its operands", self)


@register_op
class CmpI(_Compare):
    name = "arith.cmpi"
    predicate = EnumProp(CmpIPredicate, required=True)


@register_op
class CmpF(_Compare):
    name = "arith.cmpf"
    predicate = EnumProp(CmpFPredicate, required=True)


@register_op
class Select(ElementwiseOp):
    """`arith.select %c, %a, %b : T` (a tensor condition also spells its type: `: tensor<..xi1>, T`)."""

    name = "arith.select"
    condition = Operand()
    true_value = Operand()
    false_value = Operand()
    result = Result()
    assembly_format = "$condition, $true_value, $false_value attr-dict : custom<types>"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        return types["true_value"][:1]

    @classmethod
    def parse_types(cls, p: object, st: object) -> None:
        st.types["result"] = p.type_list()[-1:]  # type: ignore[attr-defined]

    def print_types(self, w: object) -> str:
        cond = self.condition.type
        return f"{cond}, {self.result.type}" if isinstance(cond, TensorType) else str(self.result.type)

    def verify_(self) -> None:
        check_same_types(self, [self.true_value, self.false_value, self.result])
        cond = self.condition.type
        if cond != i1 and cond != like(self.result.type, i1):
            raise IRVerificationError(f"condition of type {cond} does not select {self.result.type}", self)


@register_op
class Constant(Op):
    """`arith.constant`; `value` is an IntegerAttr, FloatAttr or DenseAttr (a splat holds one value)."""

    name = "arith.constant"
    pure = True
    value = ConstantProp(required=True)
    result = Result()
    assembly_format = "attr-dict $value"

    @classmethod
    def infer_result_types(cls, types: dict[str, list[Type]], attrs: dict[str, Attribute]) -> list[Type] | None:
        v = attrs.get("value")
        return [v.type] if isinstance(v, (IntegerAttr, FloatAttr, DenseAttr)) else None

    @classmethod
    def from_int(cls, value: int, t: Type) -> Constant:
        """An integer constant of type `t` (a tensor type gives a splat); stored as MLIR keeps it (signless)."""
        from ..reader import signless

        elem = t.element
        if not isinstance(elem, (IntType, IndexType)):
            raise TypeError(f"integer constant of non-integer type {t}")
        v = signless(int(value), elem)
        return cls.build(value=DenseAttr((v,), t) if isinstance(t, TensorType) else IntegerAttr(v, t))  # type: ignore[return-value]

    @classmethod
    def from_float(cls, value: float, t: Type) -> Constant:
        """A float constant of type `t` (a tensor type gives a splat), rounded to the type's precision."""
        from ..reader import round_float

        elem = t.element
        if not isinstance(elem, FloatType):
            raise TypeError(f"float constant of non-float type {t}")
        v = round_float(float(value), elem)
        return cls.build(value=DenseAttr((v,), t) if isinstance(t, TensorType) else FloatAttr(v, t))  # type: ignore[return-value]

    @classmethod
    def splat(cls, value: float, t: TensorType) -> Constant:
        """`value` in every element of tensor type `t`."""
        return cls.from_float(value, t) if isinstance(t.element, FloatType) else cls.from_int(int(value), t)

    def verify_(self) -> None:
        v = self.attrs["value"]
        if isinstance(v, (IntegerAttr, FloatAttr, DenseAttr)) and v.type != self.result.type:
            raise IRVerificationError(f"value of type {v.type} for a result of type {self.result.type}", self)
