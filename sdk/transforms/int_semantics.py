"""Triton's integer semantics made explicit: every division, shift and float→int conversion gets in-range operands.

LLVM (and C) leave x/0, INT_MIN/-1, shifts by >= the bit width and out-of-range or NaN float→int conversions
undefined or poison, and x86 traps on the divisions even in a masked-off lane. Triton's CUDA path gives each a
value; this pass spells those values out in SDK IR (compares and selects around an operation whose operands are
then always in range), so a backend renders the plain operation: `sdiv`, C's `/`, `fptosi`, a cast. What the CUDA
path computes, as recorded on an H200 (Triton 3.6; tests/data/int_semantics_cuda.json):

- `divsi/divui/remsi/remui` by 0 give all ones, except that 64-bit operands whose dividend fits in 32 bits (as
  unsigned) give 0xFFFFFFFF: LLVM's NVPTX backend divides those with the 32-bit instruction. INT_MIN / -1 wraps to
  INT_MIN, INT_MIN % -1 is 0.
- `ceildivsi/ceildivui/floordivsi` become the truncating quotient stepped by one where it rounded the wrong way.
- `shli/shrui/shrsi`: the amount is unsigned; an amount >= the width gives 0 (`shrsi`: the sign fill). A 64-bit
  shift reads only the amount's low 32 bits (PTX's shift amounts are 32-bit).
- `fptosi/fptoui` saturate to an integer of max(width, 16) bits (PTX has no 8-bit conversion: an 8-bit result is
  the low byte of the 16-bit one), NaN giving 0, except that an f64 source or a 64-bit conversion gives the sign-bit
  pattern (INT_MIN, or 2^(w-1) unsigned).

`tt.mulhiui` is total (both backends spell it natively) and is left alone.

AxisInfo cannot see through the guards (`x % select(N == 0, 1, N)` is not `x % N` to it), so the pass analyzes each
function first and states the plain op's facts on the guarded result as `tt.contiguity`/`tt.divisibility`/
`tt.constancy` hints where the guarded form proves less (`_carry_facts`): tutorial 03's `offs_bn = (...) % N` keeps
its runs of 16.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..analysis.axis_info import HINTS, AxisInfo, AxisInfoMap, analyze
from ..ir import ops as O
from ..ir.attrs import DenseAttr, IntegerAttr
from ..ir.core import Module, Op, Value
from ..ir.enums import CmpFPredicate, CmpIPredicate, EnumAttr
from ..ir.types import FloatKind, FloatType, IntType, TensorType, Type, f32, f64, i1, i32
from ..pipeline import IRPass, PassContext
from .build import Builder, replace, shaped

_DIVISIONS = (O.DivSI, O.DivUI, O.RemSI, O.RemUI)
_ROUNDED = (O.CeilDivSI, O.CeilDivUI, O.FloorDivSI)
_SHIFTS = (O.ShLI, O.ShRSI, O.ShRUI)
_CONVERSIONS = (O.FPToSI, O.FPToUI)
#: float sources whose conversion the pass knows (fp8 and tf32 are converted through f32 by the casts' rules)
_CONVERTIBLE = (FloatKind.F16, FloatKind.BF16, FloatKind.F32, FloatKind.F64)


def _int_elem(v: Value) -> IntType | None:
    e = v.type.element
    return e if isinstance(e, IntType) and e.width > 1 else None


def _signed(value: int, width: int) -> int:
    """`value` modulo 2^width, as the signed integer of that bit pattern (how signless constants are spelled)."""
    value %= 1 << width
    return value - (1 << width) if value >> (width - 1) else value


class _Builder(Builder):
    """A builder that makes each constant once per expanded op."""

    def __init__(self, anchor: Op) -> None:
        super().__init__(anchor)
        self._consts: dict[tuple[float, Type], Value] = {}

    def const(self, value: float, ty: Type) -> Value:
        key = (value, ty)
        if key not in self._consts:
            self._consts[key] = super().const(value, ty)
        return self._consts[key]


class IntSemantics(IRPass):
    """Expands the ops above into guarded plain operations (see the module docstring for the values)."""

    name = "int-semantics"

    def run(self, module: Module, ctx: PassContext) -> None:
        for func in [op for op in module.walk() if isinstance(op, O.Func)]:
            before = analyze(func)
            replaced = [(new, before[op.result]) for op, new in _expand(func)]
            if replaced:
                _carry_facts(replaced, analyze(func))


def _expand(func: O.Func) -> Iterator[tuple[Op, Value]]:
    """Replaces each op the pass expands; yields it with the value that now stands for its result."""
    for op in list(func.walk()):
        if isinstance(op, _DIVISIONS + _ROUNDED + _SHIFTS) and _int_elem(op.result) is not None:
            b = _Builder(op)
            a, c = op.operands
            if isinstance(op, _DIVISIONS):
                new = division(b, type(op), a, c)
            elif isinstance(op, _ROUNDED):
                new = _rounded_division(b, op, a, c)
            else:
                new = shift(b, type(op), a, c)
        elif isinstance(op, _CONVERSIONS) and _convertible(op):
            new = float_to_int(_Builder(op), op.src, op.result.type, isinstance(op, O.FPToSI))
        else:
            continue
        yield op, new
        _replace(op, new)


def _replace(op: Op, new: Value) -> None:
    """`op`'s uses now read `new`, which takes its name (dumps and error messages keep the kernel's names)."""
    new.name = op.result.name
    replace(op, [new])


def _carry_facts(replaced: list[tuple[Value, AxisInfo]], after: AxisInfoMap) -> None:
    """Puts the replaced ops' AxisInfo facts on the values standing for them, as the hint attributes the analysis
    reads, where the guarded form proves less (AxisInfo cannot see that `x % select(c == 0, 1, c)` is `x % c`).

    The carried facts are those of the plain op, which Triton's analysis derives assuming a nonzero divisor (and,
    as everywhere in AxisInfo, no overflow): where the divisor is 0 the result is the guard's constant, which the
    facts do not describe, exactly as on Triton's CUDA path. Both sets of facts hold otherwise, so each dimension
    keeps the longer runs (with the divisibility of their starts) and the longer constancy."""
    for v, old in replaced:
        new = after[v]
        if not isinstance(v.owner, Op) or old.rank != new.rank:
            continue
        best = [_stronger(old, new, d) for d in range(new.rank)]
        facts = tuple(zip(*best))
        if facts == (new.contiguity, new.divisibility, new.constancy):
            continue
        hint = TensorType((new.rank,), i32)
        for name, vals in zip(HINTS, facts):
            v.owner.attrs[name] = DenseAttr(tuple(min(x, 1 << 30) for x in vals), hint)


def _stronger(a: AxisInfo, b: AxisInfo, d: int) -> tuple[int, int, int]:
    """Dimension `d`'s (contiguity, divisibility, constancy) from two sets of facts that both hold: divisibility is
    about the starts of the contiguity runs, so it goes with the longer runs."""
    if a.contiguity[d] == b.contiguity[d]:
        run = a.contiguity[d], max(a.divisibility[d], b.divisibility[d])
    else:
        x = a if a.contiguity[d] > b.contiguity[d] else b
        run = x.contiguity[d], x.divisibility[d]
    return *run, max(a.constancy[d], b.constancy[d])


def _convertible(op: Op) -> bool:
    src = op.operands[0].type.element
    return isinstance(src, FloatType) and src.kind in _CONVERTIBLE and _int_elem(op.result) is not None


def _const_int(v: Value) -> int | None:
    """The value of an integer constant (scalar or splat), None when `v` is not one."""
    owner = v.owner
    if not isinstance(owner, O.Constant):
        return None
    attr = owner.value
    if isinstance(attr, IntegerAttr):
        return int(attr.value)
    if isinstance(attr, DenseAttr) and attr.is_splat:
        return int(attr.values[0])
    return None


Guard = tuple[Value | None, Value | None, Value]


def _divisor(b: Builder, c: Value, signed: bool) -> Guard:
    """(c == 0, c == -1, a divisor that is neither): no compare where `c` is a constant that needs none."""
    k = _const_int(c)
    w = c.type.element.width
    if k is not None and _signed(k, w) not in (0, -1):
        return None, None, c
    zero = b.cmpi(CmpIPredicate.EQ, c, 0)
    if not signed:
        return zero, None, b.select(zero, b.const_like(1, c), c)
    minus1 = b.cmpi(CmpIPredicate.EQ, c, -1)
    return zero, minus1, b.select(b.binary(O.OrI, zero, minus1), b.const_like(1, c), c)


def _divide(b: Builder, cls: type[Op], a: Value, guard: Guard) -> Value:
    zero, minus1, safe = guard
    r = b.binary(cls, a, safe)
    if minus1 is not None and cls is O.DivSI:
        # x / -1 is -x, INT_MIN wrapping to itself; x % -1 is already x % 1 = 0
        r = b.select(minus1, b.binary(O.SubI, b.const_like(0, a), a), r)
    return r if zero is None else b.select(zero, _by_zero(b, a), r)


def division(b: Builder, cls: type[Op], a: Value, c: Value) -> Value:
    """`a / c` or `a % c` with a divisor that is never 0 (nor -1 against INT_MIN): the result is selected there."""
    return _divide(b, cls, a, _divisor(b, c, cls in (O.DivSI, O.RemSI)))


def _by_zero(b: Builder, a: Value) -> Value:
    ones = b.const_like(-1, a)
    if a.type.element.width != 64:
        return ones
    fits = b.cmpi(CmpIPredicate.ULT, a, 1 << 32)
    return b.select(fits, b.const_like(0xFFFFFFFF, a), ones)


def _rounded_division(b: Builder, op: Op, a: Value, c: Value) -> Value:
    """ceildiv/floordiv: the truncating quotient, stepped by one where the remainder is nonzero and the signs of
    the operands say truncation rounded the wrong way."""
    signed = not isinstance(op, O.CeilDivUI)
    guard = _divisor(b, c, signed)
    q = _divide(b, O.DivSI if signed else O.DivUI, a, guard)
    inexact = b.cmpi(CmpIPredicate.NE, _divide(b, O.RemSI if signed else O.RemUI, a, guard), 0)
    if signed:
        negative = b.cmpi(CmpIPredicate.SLT, a, 0), b.cmpi(CmpIPredicate.SLT, c, 0)
        floor = isinstance(op, O.FloorDivSI)
        wrong_way = b.make(
            O.CmpI,
            list(negative),
            shaped(a.type, i1),
            predicate=EnumAttr(CmpIPredicate.NE if floor else CmpIPredicate.EQ),
        )
        step = b.cast(O.ExtUI, b.binary(O.AndI, inexact, wrong_way), a.type.element)
        return b.binary(O.SubI if floor else O.AddI, q, step)
    return b.binary(O.AddI, q, b.cast(O.ExtUI, inexact, a.type.element))


def shift(b: Builder, cls: type[Op], a: Value, c: Value) -> Value:
    """`a << c`, `a >> c` with an amount below the width; larger amounts select the clamped result."""
    w = a.type.element.width
    k = _const_int(c)
    if k is not None and 0 <= k % (1 << w) < w:
        return b.binary(cls, a, c)
    amount = b.binary(O.AndI, c, 0xFFFFFFFF) if w == 64 else c
    if cls is O.ShRSI:
        return b.binary(O.ShRSI, a, b.binary(O.MinUI, amount, w - 1))
    big = b.cmpi(CmpIPredicate.UGE, amount, w)
    return b.select(big, b.const_like(0, a), b.binary(cls, a, b.binary(O.AndI, c, w - 1)))


def _cmpf(b: Builder, pred: CmpFPredicate, x: Value, bound: float) -> Value:
    return b.make(O.CmpF, [x, b.const_like(bound, x)], shaped(x.type, i1), predicate=EnumAttr(pred))


def float_to_int(b: Builder, x: Value, to: Type, signed: bool) -> Value:
    """Saturating conversion through max(width, 16) bits, NaN as the module docstring says. f16/bf16 are widened
    to f32 first (exactly), so every bound is a float the comparison's type holds."""
    src = x.type.element
    assert isinstance(src, FloatType)
    if src.kind in (FloatKind.F16, FloatKind.BF16):
        x = b.cast(O.ExtF, x, f32)
    w = to.element.width
    cw = max(w, 16)
    mid = IntType(cw)
    lo, hi = (-(1 << (cw - 1)), (1 << (cw - 1)) - 1) if signed else (0, (1 << cw) - 1)
    upper = float(hi + 1)  # a power of two: exact in f32 and f64
    below_upper, above = _cmpf(b, CmpFPredicate.OLT, x, upper), _cmpf(b, CmpFPredicate.OGE, x, upper)
    above_lower = _cmpf(b, CmpFPredicate.OGT, x, float(lo))
    inside = b.binary(O.AndI, below_upper, above_lower)
    plain = b.cast(O.FPToSI if signed else O.FPToUI, b.select(inside, x, b.const_like(0.0, x)), mid)
    outside = b.select(above, b.const_like(_signed(hi, cw), plain), b.const_like(_signed(lo, cw), plain))
    nan = 1 << (cw - 1) if src == f64 or cw == 64 else 0
    if _signed(nan, cw) != _signed(lo, cw):
        is_nan = b.make(O.CmpF, [x, x], shaped(x.type, i1), predicate=EnumAttr(CmpFPredicate.UNO))
        outside = b.select(is_nan, b.const_like(_signed(nan, cw), plain), outside)
    r = b.select(inside, plain, outside)
    return b.cast(O.TruncI, r, to.element) if cw != w else r
