"""libdevice conversions and arithmetic with a rounding mode (`_rn/_rz/_rd/_ru`), exact, from round-to-nearest ops.

Directed rounding: compute r = the round-to-nearest result, then the sign of the exact result minus r, exactly
(TwoSum for sums; the residual of a fused multiply-add for products, quotients and square roots; a compare back for
conversions), and step r to its neighbour toward -inf (`_rd`) or +inf (`_ru`) where it lies on the wrong side;
`_rz` is `_rd` for positive results and `_ru` for negative ones. An overflow to ±inf of a finite exact result counts
as rounding away from it. f32 products, quotients, square roots and fmas take their residual in f64, where it is
exact; f64 ones scale tiny operands by powers of two so that the residual does not underflow. The f64 fma with a
directed rounding is refused (no wider type to take its residual in).
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import ops as O
from ..ir.core import Op, Value
from ..ir.types import IntType, Type, f32, f64, i32, i64
from .math_library_build import F, I, MathBuilder

MODES = ("rn", "rz", "rd", "ru")
_ROUND = {"rn": O.RoundEven, "rz": O.Trunc, "rd": O.Floor, "ru": O.Ceil}
#: libdevice's spelling of each type in conversion names: (SDK type, signed)
_INTS = {"int": (i32, True), "uint": (i32, False), "ll": (i64, True), "ull": (i64, False)}
_FLOATS = {"float": f32, "double": f64}
#: below this magnitude an f64 residual may underflow: scale by _SCALE first
_TINY = 2.0**-900
_SCALE = 2.0**600


def step(m: MathBuilder, r: Value, above: Value, below: Value, mode: str) -> Value:
    """r rounded in `mode`, given whether the exact result lies above / below the nearest-rounded r."""
    if mode == "rn":
        return r
    rd = m.where(below, m.next_down(r), r)
    ru = m.where(above, m.next_up(r), r)
    if mode == "rd":
        return rd
    if mode == "ru":
        return ru
    return m.where(m.cmpf(F.OGT, r, 0.0), rd, m.where(m.cmpf(F.OLT, r, 0.0), ru, r))


def _sign_of(m: MathBuilder, e: Value) -> tuple[Value, Value]:
    return m.cmpf(F.OGT, e, 0.0), m.cmpf(F.OLT, e, 0.0)


def _overflowed(m: MathBuilder, r: Value, *finite_inputs: Value) -> Value:
    return m.all(m.is_inf(r), *[m.is_finite(v) for v in finite_inputs])


def _with_overflow(m: MathBuilder, r: Value, above: Value, below: Value, over: Value) -> tuple[Value, Value]:
    """An overflow to ±inf lies above (+inf) or below (-inf) the finite exact result."""
    pos = m.cmpf(F.OGT, r, 0.0)
    return m.any(above, m.all(over, m.not_(pos))), m.any(below, m.all(over, pos))


# ---- arithmetic -------------------------------------------------------------------------------------------------------


def _add_ru(m: MathBuilder, a: Value, b: Value, mode: str) -> Value:
    s = m.add(a, b)
    bb = m.sub(s, a)
    e = m.add(m.sub(a, m.sub(s, bb)), m.sub(b, bb))  # TwoSum: a + b = s + e exactly
    above, below = _sign_of(m, e)
    above, below = _with_overflow(m, s, above, below, _overflowed(m, s, a, b))
    return step(m, s, above, below, mode)


def add(m: MathBuilder, a: Value, b: Value, mode: str) -> Value:
    """a + b; `_rd` as -((-a) + (-b)) rounded up, which also gives an exact zero sum its -0."""
    if mode == "rd":
        return m.neg(_add_ru(m, m.neg(a), m.neg(b), "ru"))
    return _add_ru(m, a, b, mode)


def mul(m: MathBuilder, a: Value, b: Value, mode: str) -> Value:
    r = m.mul(a, b)
    if r.type.element == f32:
        e = m.sub(m.mul(m.ext(a), m.ext(b)), m.ext(r))  # the f32 product is exact in f64
    else:
        # near underflow, scale both factors by 2^550 (r by 2^1100): the residual's sign survives even when the
        # exact product is far below the smallest subnormal
        tiny = m.cmpf(F.OLT, m.abs(r), _TINY)
        plain = m.fma(a, b, m.neg(r))
        half = 2.0**550
        scaled = m.fma(m.mul(a, half), m.mul(b, half), m.neg(m.mul(m.mul(r, half), half)))
        e = m.where(tiny, scaled, plain)
    above, below = _sign_of(m, e)
    above, below = _with_overflow(m, r, above, below, _overflowed(m, r, a, b))
    return step(m, r, above, below, mode)


def div(m: MathBuilder, a: Value, b: Value, mode: str) -> Value:
    """The sign of a/b - r is that of the residual a - r·b times b's sign."""
    r = m.div(a, b)
    if r.type.element == f32:
        res = m.fma(m.neg(m.ext(r)), m.ext(b), m.ext(a))
    else:
        small_r = m.cmpf(F.OLT, m.abs(r), _TINY)
        small_a = m.cmpf(F.OLT, m.abs(a), _TINY)
        a_s = m.mul(a, _SCALE)
        plain = m.fma(m.neg(r), b, a)
        by_r = m.fma(m.neg(m.mul(r, _SCALE)), b, a_s)
        by_b = m.fma(m.neg(r), m.mul(b, _SCALE), a_s)
        res = m.where(small_r, by_r, m.where(small_a, by_b, plain))
    pos_b = m.cmpf(F.OGT, b, 0.0)
    neg_b = m.cmpf(F.OLT, b, 0.0)
    rp, rn = _sign_of(m, res)
    above = m.any(m.all(rp, pos_b), m.all(rn, neg_b))
    below = m.any(m.all(rn, pos_b), m.all(rp, neg_b))
    nonzero_b = m.cmpf(F.ONE, b, 0.0)
    above, below = _with_overflow(m, r, above, below, m.all(_overflowed(m, r, a, b), nonzero_b))
    return step(m, r, above, below, mode)


def sqrt(m: MathBuilder, x: Value, mode: str) -> Value:
    r = m.sqrt(x)
    if r.type.element == f32:
        rr = m.ext(r)
        res = m.fma(m.neg(rr), rr, m.ext(x))
    else:
        tiny = m.cmpf(F.OLT, x, _TINY)
        plain = m.fma(m.neg(r), r, x)
        rs = m.mul(r, 2.0**300)
        scaled = m.fma(m.neg(rs), rs, m.mul(x, _SCALE))
        res = m.where(tiny, scaled, plain)
    above, below = _sign_of(m, res)
    return step(m, r, above, below, mode)


def _fma32_ru(m: MathBuilder, a: Value, b: Value, c: Value, mode: str) -> Value:
    p = m.mul(m.ext(a), m.ext(b))  # exact
    cc = m.ext(c)
    s = m.add(p, cc)
    bb = m.sub(s, p)
    e = m.add(m.sub(p, m.sub(s, bb)), m.sub(cc, bb))  # p + c = s + e exactly
    r = m.narrow(s)
    d = m.add(m.sub(s, m.ext(r)), e)
    above, below = _sign_of(m, d)
    above, below = _with_overflow(m, r, above, below, _overflowed(m, r, a, b, c))
    return step(m, r, above, below, mode)


def fma32(m: MathBuilder, a: Value, b: Value, c: Value, mode: str) -> Value:
    if mode == "rd":
        return m.neg(_fma32_ru(m, m.neg(a), b, m.neg(c), "ru"))
    return _fma32_ru(m, a, b, c, mode)


# ---- conversions ------------------------------------------------------------------------------------------------------


def float_to_int(m: MathBuilder, x: Value, to: IntType, signed: bool, mode: str) -> Value:
    """Round in `mode`, then convert saturating (NaN → 0), as PTX's cvt.r*i does."""
    r = m.un(_ROUND[mode], x)
    return m.cast(O.FPToSI if signed else O.FPToUI, r, to)


def double_to_float(m: MathBuilder, x: Value, mode: str) -> Value:
    r = m.narrow(x)
    back = m.ext(r)
    return step(m, r, m.cmpf(F.OLT, back, x), m.cmpf(F.OGT, back, x), mode)


def int_to_float(m: MathBuilder, x: Value, to: Type, signed: bool, mode: str) -> Value:
    """Round to nearest, then compare the result converted back (exact: it is an integer below 2^w) with x."""
    r = m.cast(O.SIToFP if signed else O.UIToFP, x, to)
    if mode == "rn":
        return r
    w = x.type.element.width
    limit = 2.0 ** (w - 1 if signed else w)
    too_big = m.cmpf(F.OGE, r, limit)
    back = m.cast(O.FPToSI if signed else O.FPToUI, r, x.type.element)
    gt, lt = (I.SGT, I.SLT) if signed else (I.UGT, I.ULT)
    below = m.any(too_big, m.icmp(gt, back, x))  # r lies above x: x is below r
    above = m.all(m.not_(too_big), m.icmp(lt, back, x))
    return step(m, r, above, below, mode)


def register(add_entry: Callable[[str, Callable, str, str], None], refused: dict[str, str]) -> None:
    """Add every libdevice conversion and rounded arithmetic function to the table."""
    exact = "exact"
    for mode in MODES:
        for src, ft in _FLOATS.items():
            for dst, (it, signed) in _INTS.items():
                add_entry(
                    f"__nv_{src}2{dst}_{mode}",
                    lambda m, a, t, it=it, s=signed, md=mode: float_to_int(m, a[0], it, s, md),
                    exact + " (saturating, NaN → 0)",
                    "expansion",
                )
        add_entry(
            f"__nv_double2float_{mode}", lambda m, a, t, md=mode: double_to_float(m, a[0], md), exact, "expansion"
        )
        for src, (it, signed) in _INTS.items():
            for dst, ft in _FLOATS.items():
                if it == i32 and ft == f64 and mode != "rn":
                    continue  # exact conversions: libdevice has only the _rn name
                add_entry(
                    f"__nv_{src}2{dst}_{mode}",
                    lambda m, a, t, ft=ft, s=signed, md=mode: int_to_float(m, a[0], ft, s, md),
                    exact,
                    "expansion",
                )
        if mode == "rn":
            continue
        for prefix, ty in (("f", f32), ("d", f64)):
            for name, fn in (("add", add), ("mul", mul), ("div", div)):
                add_entry(
                    f"__nv_{prefix}{name}_{mode}",
                    lambda m, a, t, fn=fn, md=mode: fn(m, a[0], a[1], md),
                    exact + " (directed rounding emulated)",
                    "expansion",
                )
            add_entry(
                f"__nv_{prefix}sub_{mode}",
                lambda m, a, t, md=mode: add(m, a[0], m.neg(a[1]), md),
                exact + " (directed rounding emulated)",
                "expansion",
            )
            add_entry(
                f"__nv_{prefix}rcp_{mode}",
                lambda m, a, t, md=mode: div(m, m.c(1.0, a[0]), a[0], md),
                exact + " (directed rounding emulated)",
                "expansion",
            )
            add_entry(
                f"__nv_{prefix}sqrt_{mode}",
                lambda m, a, t, md=mode: sqrt(m, a[0], md),
                exact + " (directed rounding emulated)",
                "expansion",
            )
        add_entry(
            f"__nv_fmaf_{mode}",
            lambda m, a, t, md=mode: fma32(m, *a, md),
            exact + " (directed rounding emulated in f64)",
            "expansion",
        )
        refused[f"__nv_fma_{mode}"] = (
            "an f64 fma with a directed rounding mode is not emulated (an f32 fma computes its error exactly in f64; "
            "f64 has no wider type here)"
        )
    for sym, cls in (("llrint", O.RoundEven), ("llround", O.Round)):
        for suffix in ("f", ""):
            add_entry(
                f"__nv_{sym}{suffix}",
                lambda m, a, t, cls=cls: m.cast(O.FPToSI, m.un(cls, a[0]), i64),
                exact + " (saturating, NaN → 0)",
                "expansion",
            )


__all__ = ["MODES", "Op", "register"]
