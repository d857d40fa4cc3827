"""Arithmetic spelled as SDK IR for the math library's expansions: `Builder` plus float and integer shorthands.

Every value an expansion handles has the shape of the op it replaces (a scalar or one tensor shape), so constants
are made "like" a value: `m.c(0.5, x)` is 0.5 of x's type, splat when x is a tensor. Constants are made once per
value and type within one expansion.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import ops as O
from ..ir.core import Op, Value
from ..ir.enums import CmpFPredicate, CmpIPredicate, EnumAttr
from ..ir.types import FloatType, IntType, Type, f32, f64, i1, i32, i64
from .build import Builder, shaped

F = CmpFPredicate
I = CmpIPredicate


def int_of(t: Type) -> IntType:
    """The integer type of a float element type's width."""
    elem = t.element
    assert isinstance(elem, FloatType)
    return i64 if elem == f64 else i32


def is_f64(v: Value) -> bool:
    return v.type.element == f64


class MathBuilder(Builder):
    """`Builder` with the float/integer vocabulary the expansions are written in."""

    def __init__(self, anchor: Op) -> None:
        super().__init__(anchor)
        self._consts: dict[tuple[str, str], Value] = {}

    # ---- constants and casts --------------------------------------------------------------------------------------

    def c(self, value: float, like: Value, elem: Type | None = None) -> Value:
        """A constant of `like`'s shape and `elem` (default: `like`'s element type)."""
        ty = shaped(like.type, elem or like.type.element)
        if isinstance(ty.element, IntType):
            w = ty.element.width
            value = int(value) & ((1 << w) - 1)
            if w > 1 and value >= 1 << (w - 1):
                value -= 1 << w
            key = (str(value), str(ty))
        else:
            key = (float(value).hex(), str(ty))
        got = self._consts.get(key)
        if got is None:
            got = self._consts[key] = self.const(value, ty)
        return got

    def to(self, cls: type[Op], v: Value, elem: Type) -> Value:
        return self.cast(cls, v, elem)

    def ext(self, v: Value) -> Value:
        """f32 → f64 (exact)."""
        return self.cast(O.ExtF, v, f64)

    def narrow(self, v: Value) -> Value:
        """f64 → f32, rounded to nearest."""
        return self.cast(O.TruncF, v, f32)

    def bits(self, x: Value) -> Value:
        return self.cast(O.ArithBitcast, x, int_of(x.type))

    def from_bits(self, n: Value, elem: Type) -> Value:
        return self.cast(O.ArithBitcast, n, elem)

    def zext32(self, b: Value) -> Value:
        """An i1 as i32 0/1."""
        return self.cast(O.ExtUI, b, i32)

    # ---- float arithmetic -----------------------------------------------------------------------------------------

    def _v(self, x: Value | float, like: Value) -> Value:
        return x if isinstance(x, Value) else self.c(x, like)

    def _bin(self, cls: type[Op], a: Value | float, b: Value | float) -> Value:
        like = a if isinstance(a, Value) else b
        assert isinstance(like, Value)
        return self.make(cls, [self._v(a, like), self._v(b, like)], like.type)

    def add(self, a: Value | float, b: Value | float) -> Value:
        return self._bin(O.AddF, a, b)

    def sub(self, a: Value | float, b: Value | float) -> Value:
        return self._bin(O.SubF, a, b)

    def mul(self, a: Value | float, b: Value | float) -> Value:
        return self._bin(O.MulF, a, b)

    def div(self, a: Value | float, b: Value | float) -> Value:
        """IEEE division, correctly rounded."""
        return self._bin(O.PreciseDivF, a, b)

    def fma(self, a: Value, b: Value | float, c: Value | float) -> Value:
        return self.make(O.Fma, [a, self._v(b, a), self._v(c, a)], a.type)

    def un(self, cls: type[Op], x: Value) -> Value:
        return self.make(cls, [x], x.type)

    def neg(self, x: Value) -> Value:
        return self.un(O.NegF, x)

    def abs(self, x: Value) -> Value:
        return self.un(O.AbsF, x)

    def sqrt(self, x: Value) -> Value:
        return self.un(O.PreciseSqrt, x)

    def exp(self, x: Value) -> Value:
        """A precise exp: an expansion's stated accuracy holds on a backend that approximates `math.exp`."""
        return self.un(O.PreciseExp, x)

    def log(self, x: Value) -> Value:
        return self.un(O.Log, x)

    def copysign(self, a: Value, b: Value) -> Value:
        return self.make(O.CopySign, [a, b], a.type)

    def horner(self, x: Value, coeffs: Sequence[float]) -> Value:
        """c0 + c1·x + c2·x² + ... (coefficients lowest first), by fused multiply-adds."""
        acc = self.c(coeffs[-1], x)
        for k in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, k)
        return acc

    # ---- comparisons, logic, select -------------------------------------------------------------------------------

    def cmpf(self, pred: CmpFPredicate, a: Value, b: Value | float) -> Value:
        return self.make(O.CmpF, [a, self._v(b, a)], shaped(a.type, i1), predicate=EnumAttr(pred))

    def icmp(self, pred: CmpIPredicate, a: Value, b: Value | int) -> Value:
        return self.cmpi(pred, a, b if isinstance(b, Value) else self.c(b, a))

    def all(self, *conds: Value) -> Value:
        acc = conds[0]
        for c in conds[1:]:
            acc = self.make(O.AndI, [acc, c], acc.type)
        return acc

    def any(self, *conds: Value) -> Value:
        acc = conds[0]
        for c in conds[1:]:
            acc = self.make(O.OrI, [acc, c], acc.type)
        return acc

    def not_(self, cond: Value) -> Value:
        return self.make(O.XOrI, [cond, self.c(1, cond)], cond.type)

    def where(self, cond: Value, a: Value | float, b: Value | float) -> Value:
        like = a if isinstance(a, Value) else b
        assert isinstance(like, Value)
        return self.select(cond, self._v(a, like), self._v(b, like))

    def is_nan(self, x: Value) -> Value:
        return self.cmpf(F.UNO, x, x)

    def is_inf(self, x: Value) -> Value:
        return self.cmpf(F.OEQ, self.abs(x), float("inf"))

    def is_finite(self, x: Value) -> Value:
        return self.cmpf(F.OLT, self.abs(x), float("inf"))

    def signbit(self, x: Value) -> Value:
        return self.icmp(I.SLT, self.bits(x), 0)

    # ---- integer arithmetic ---------------------------------------------------------------------------------------

    def ibin(self, cls: type[Op], a: Value, b: Value | int) -> Value:
        return self.make(cls, [a, b if isinstance(b, Value) else self.c(b, a)], a.type)

    # ---- neighbours -----------------------------------------------------------------------------------------------

    def next_up(self, r: Value) -> Value:
        """The float after `r` toward +inf, for r not +inf or NaN (bit arithmetic: no libm call)."""
        n = self.bits(r)
        stepped = self.ibin(O.AddI, n, self.where(self.signbit(r), self.c(-1, n), self.c(1, n)))
        up = self.from_bits(stepped, r.type.element)
        tiny = self.from_bits(self.c(1, n), r.type.element)
        return self.where(self.cmpf(F.OEQ, r, 0.0), tiny, up)

    def next_down(self, r: Value) -> Value:
        return self.neg(self.next_up(self.neg(r)))
