"""Portable expansions of libdevice's special functions in SDK IR ops (accuracies are stated in math_library.py and
measured by tests/test_math_library.py against mpmath/scipy).

Each function is written once for f32 and f64 with precision-dependent thresholds and term counts; polynomial and
series coefficients are computed here in Python (double precision) from their closed forms, not copied tables.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

from ..ir import ops as O
from ..ir.core import Value
from ..ir.dialects import libm as L
from ..ir.types import f64, i32
from .math_library_build import F, I, MathBuilder, is_f64

SQRT_PI = math.sqrt(math.pi)
INV_SQRT_PI = 1.0 / SQRT_PI
INF = float("inf")
NAN = float("nan")


#: π and 1/√2 as double-doubles (hi + lo, |lo| ≤ ulp(hi)/2): π's tail is the known 1.2246467991473532e-16; 1/√2's is
#: one exact Newton correction of the double (0.5 - hi²) / (2·hi)
PI_DD = (math.pi, 1.2246467991473532e-16)
_H = math.sqrt(0.5)
SQRT_HALF_DD = (_H, float((Fraction(1, 2) - Fraction(_H) ** 2) / (2 * Fraction(_H))))


def _hi_lo(dd: tuple[float, float], single: bool) -> tuple[float, float]:
    """A double-double constant as a working-precision head plus its tail (for products needing one rounding)."""
    hi, lo = dd
    if not single:
        return hi, lo
    head = struct.unpack("f", struct.pack("f", hi))[0]
    return head, (hi - head) + lo


# ---- small exact ones ----------------------------------------------------------------------------------------------


def fdim(m: MathBuilder, x: Value, y: Value) -> Value:
    """x - y where x > y, +0 otherwise, NaN if either is NaN."""
    nan = m.cmpf(F.UNO, x, y)
    return m.where(m.cmpf(F.OGT, x, y), m.sub(x, y), m.where(nan, m.add(x, y), 0.0))


def saturate(m: MathBuilder, x: Value) -> Value:
    return m.make(O.MinNumF, [m.make(O.MaxNumF, [x, m.c(0.0, x)], x.type), m.c(1.0, x)], x.type)


def ilogb(m: MathBuilder, x: Value) -> Value:
    """The unbiased exponent from the bits; subnormals by counting leading zeros of the significand."""
    wide = is_f64(x)
    mant_bits, bias, width = (52, 1023, 64) if wide else (23, 127, 32)
    n = m.bits(x)
    e = m.ibin(O.AndI, m.ibin(O.ShRUI, n, mant_bits), (1 << (width - 1 - mant_bits)) - 1)
    frac = m.ibin(O.AndI, n, (1 << mant_bits) - 1)
    normal = m.ibin(O.SubI, e, bias)
    lz = m.make(O.CountLeadingZeros, [frac], frac.type)
    sub = m.ibin(O.SubI, m.ibin(O.SubI, m.c(width - 1, n), lz), bias - 1 + mant_bits)
    r = m.where(m.icmp(I.EQ, e, 0), sub, normal)
    if wide:
        r = m.cast(O.TruncI, r, i32)
    int_min, int_max = m.c(-(2**31), r), m.c(2**31 - 1, r)
    r = m.where(m.is_inf(x), int_max, r)
    return m.where(m.any(m.cmpf(F.OEQ, x, 0.0), m.is_nan(x)), int_min, r)


def norm(m: MathBuilder, args: list[Value]) -> Value:
    """sqrt of the sum of squares as hypot of hypots: no overflow or underflow of the squares."""
    h = lambda a, b: m.make(L.Hypot, [a, b], a.type)
    if len(args) == 3:
        return h(h(args[0], args[1]), args[2])
    return h(h(args[0], args[1]), h(args[2], args[3]))


def powi(m: MathBuilder, x: Value, n: Value) -> Value:
    """|x|^n by pow, negated where x's sign bit is set and n is odd (so a rounded n keeps its parity)."""
    p = m.make(O.PowF, [m.abs(x), m.cast(O.SIToFP, n, x.type.element)], x.type)
    odd = m.icmp(I.NE, m.ibin(O.AndI, n, 1), 0)
    return m.where(m.all(m.signbit(x), odd), m.neg(p), p)


def rcp64h(m: MathBuilder, x: Value) -> Value:
    r = m.div(1.0, x)
    return m.from_bits(m.ibin(O.AndI, m.bits(r), -(1 << 32)), f64)


# ---- sinpi, cospi ----------------------------------------------------------------------------------------------------


def _pi_reduce(m: MathBuilder, x: Value) -> tuple[Value, Value, Value]:
    """x = n/2 + r with |r| ≤ 1/4 (exact), sin(πr), cos(πr), and q = n mod 4 (as a float)."""
    n = m.un(O.RoundEven, m.mul(x, 2.0))
    r = m.sub(x, m.mul(n, 0.5))
    q = m.sub(n, m.mul(m.un(O.Floor, m.mul(n, 0.25)), 4.0))
    single = not is_f64(x)
    hi, lo = _hi_lo(PI_DD, single)
    t = m.fma(r, hi, m.mul(r, lo))
    return m.un(O.Sin, t), m.un(O.Cos, t), q


def _by_quadrant(m: MathBuilder, q: Value, vals: list[Value]) -> Value:
    out = vals[3]
    for k in (2, 1, 0):
        out = m.where(m.cmpf(F.OEQ, q, float(k)), vals[k], out)
    return out


def sinpi(m: MathBuilder, x: Value) -> Value:
    """sin(πx), exact reduction; sinpi(±n) = ±0 for integers n."""
    s, c, q = _pi_reduce(m, x)
    v = _by_quadrant(m, q, [s, c, m.neg(s), m.neg(c)])
    return m.where(m.cmpf(F.OEQ, v, 0.0), m.copysign(m.c(0.0, x), x), v)


def cospi(m: MathBuilder, x: Value) -> Value:
    """cos(πx), exact reduction; cospi(n + 1/2) = +0."""
    s, c, q = _pi_reduce(m, x)
    v = _by_quadrant(m, q, [c, m.neg(s), m.neg(c), s])
    return m.where(m.cmpf(F.OEQ, v, 0.0), m.c(0.0, x), v)


# ---- erfcx, normcdf -------------------------------------------------------------------------------------------------

#: erfcx: below the threshold exp(x²)·erfc(x) (erfc still a normal number there), above it the continued fraction
#: erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), truncated after the given number of terms
_ERFCX_CF = {False: (3.0, 12), True: (6.0, 16)}


def erfcx(m: MathBuilder, x: Value) -> Value:
    """exp(x²)·erfc(x) without overflow for large x (≈ 1/(x√π)), inf for x below -9.3 (f32) / -26.6 (f64)."""
    threshold, terms = _ERFCX_CF[is_f64(x)]
    hi = m.mul(x, x)
    lo = m.fma(x, x, m.neg(hi))
    direct = m.mul(m.mul(m.exp(hi), m.add(lo, 1.0)), m.un(O.Erfc, x))
    f = x
    for k in range(terms, 0, -1):
        f = m.add(x, m.div(k / 2.0, f))
    frac = m.div(INV_SQRT_PI, f)
    return m.where(m.cmpf(F.OGE, x, threshold), frac, direct)


def normcdf(m: MathBuilder, x: Value) -> Value:
    """½·erfc(-x/√2), the argument's rounding error corrected to first order (it is amplified ~x² in the tail)."""
    single = not is_f64(x)
    c_hi, c_lo = _hi_lo(SQRT_HALF_DD, single)
    nx = m.neg(x)
    t = m.mul(nx, c_hi)
    t_lo = m.fma(nx, m.c(c_hi, x), m.neg(t))
    t_lo = m.fma(nx, m.c(c_lo, x), t_lo)
    slope = m.mul(m.exp(m.neg(m.mul(t, t))), 2.0 * INV_SQRT_PI)
    v = m.fma(m.neg(t_lo), slope, m.un(O.Erfc, t))
    return m.mul(v, 0.5)


# ---- erfinv, erfcinv, normcdfinv ----------------------------------------------------------------------------------

_WINITZKI_A = 0.147


def _winitzki(m: MathBuilder, w: Value) -> Value:
    """|erfinv(z)| from w = ln(1 - z²), to ~2e-3 relative (Winitzki's closed form)."""
    t = m.add(m.mul(w, 0.5), 2.0 / (math.pi * _WINITZKI_A))
    return m.sqrt(m.sub(m.sqrt(m.sub(m.mul(t, t), m.mul(w, 1.0 / _WINITZKI_A))), t))


def _central(m: MathBuilder, z: Value) -> Value:
    """erfinv(z) for |z| ≤ 1/2: Newton on erf from Winitzki's guess (1 step f32, 2 steps f64)."""
    w = m.un(O.Log1p, m.neg(m.mul(z, z)))
    x = m.copysign(_winitzki(m, w), z)
    for _ in range(2 if is_f64(z) else 1):
        err = m.sub(m.un(O.Erf, x), z)
        x = m.sub(x, m.mul(m.mul(err, SQRT_PI / 2), m.exp(m.mul(x, x))))
    return x


def _tail(m: MathBuilder, q: Value) -> Value:
    """erfcinv(q) for 0 < q ≤ 1/2: Newton on log(erfc(x)) = log(erfcx(x)) - x², which neither underflows nor loses
    precision down to the smallest subnormal q (2 steps f32, 3 steps f64)."""
    w = m.add(m.log(q), m.log(m.sub(2.0, q)))
    x = _winitzki(m, w)
    log_q = m.log(q)
    for _ in range(3 if is_f64(q) else 2):
        ex = erfcx(m, x)
        hi = m.mul(x, x)
        lo = m.fma(x, x, m.neg(hi))
        g = m.sub(m.sub(m.sub(m.log(ex), log_q), hi), lo)
        x = m.fma(m.mul(g, SQRT_PI / 2), ex, x)
    return x


def erfinv(m: MathBuilder, z: Value) -> Value:
    a = m.abs(z)
    central = _central(m, z)
    tail = m.copysign(_tail(m, m.sub(1.0, a)), z)
    v = m.where(m.cmpf(F.OLE, a, 0.5), central, tail)
    v = m.where(m.cmpf(F.OEQ, a, 1.0), m.copysign(m.c(INF, z), z), v)
    return m.where(m.cmpf(F.UGT, a, 1.0), m.c(NAN, z), v)


def erfcinv(m: MathBuilder, y: Value) -> Value:
    """Central region through 1 - y (exact for 1/2 ≤ y ≤ 3/2), the tails through y and 2 - y (exact for y ≥ 1)."""
    central = _central(m, m.sub(1.0, y))
    upper = m.cmpf(F.OGT, y, 1.0)
    q = m.where(upper, m.sub(2.0, y), y)
    t = _tail(m, q)
    tail = m.where(upper, m.neg(t), t)
    mid = m.all(m.cmpf(F.OGE, y, 0.5), m.cmpf(F.OLE, y, 1.5))
    v = m.where(mid, central, tail)
    v = m.where(m.cmpf(F.OEQ, y, 0.0), INF, v)
    v = m.where(m.cmpf(F.OEQ, y, 2.0), -INF, v)
    return m.where(m.any(m.cmpf(F.ULT, y, 0.0), m.cmpf(F.UGT, y, 2.0)), NAN, v)


def normcdfinv(m: MathBuilder, p: Value) -> Value:
    """-√2·erfcinv(2p); + 0 makes the median +0."""
    return m.add(m.mul(erfcinv(m, m.mul(p, 2.0)), -math.sqrt(2.0)), 0.0)


# ---- modified Bessel functions I0, I1 --------------------------------------------------------------------------------


def _series_terms(nu: int, x: float, tol: float) -> list[float]:
    """Coefficients of Σ u^k / (k!·(k+ν)!) in u = x²/4, as many as |x| ≤ x needs for relative `tol`."""
    u = x * x / 4
    coeffs, k, total, term = [], 0, 0.0, 0.0
    while True:
        c = 1.0 / (math.factorial(k) * math.factorial(k + nu))
        coeffs.append(c)
        term = c * u**k
        total += term
        if k > 2 and term < tol * total:
            return coeffs
        k += 1


def _asymptotic(nu: int, count: int) -> list[float]:
    """a_k(ν) = (-1)^k Π_{j≤k} (4ν² - (2j-1)²) / (k!·8^k): I_ν(x) ~ e^x/√(2πx) Σ a_k / x^k."""
    out, p = [1.0], 1.0
    for k in range(1, count):
        p *= (4 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k)
        out.append(-p if k % 2 else p)
    return out


#: |x| below which the power series is used; beyond it the asymptotic expansion with this many terms
_BESSEL_I = {False: (9.0, 12, 3e-8), True: (20.0, 24, 1.2e-17)}


def bessel_i(m: MathBuilder, x: Value, nu: int) -> Value:
    """I0 / I1: power series in x²/4 for small |x|, e^|x|/√(2π|x|)·Σ a_k/|x|^k beyond (e^|x| split in two halves so
    that it overflows only where I_ν does)."""
    split, count, tol = _BESSEL_I[is_f64(x)]
    a = m.abs(x)
    u = m.mul(m.mul(a, a), 0.25)
    series = m.horner(u, _series_terms(nu, split, tol))
    if nu == 1:
        series = m.mul(series, m.mul(a, 0.5))
    inv = m.div(1.0, a)
    poly = m.horner(inv, _asymptotic(nu, count))
    half = m.exp(m.mul(a, 0.5))
    scale = m.div(half, m.sqrt(m.mul(a, 2.0 * math.pi)))
    asym = m.mul(m.mul(scale, poly), half)
    v = m.where(m.cmpf(F.OLE, a, split), series, asym)
    v = m.where(m.cmpf(F.OEQ, a, INF), INF, v)
    return m.copysign(v, x) if nu == 1 else v
