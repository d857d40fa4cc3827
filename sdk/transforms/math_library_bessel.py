"""Bessel functions of the first and second kind (j0, j1, y0, y1, jn, yn) in SDK IR ops, for backends whose device
library lacks them (OpenCL C has none). Accuracy is absolute (near the functions' zeros relative error is not
bounded): ~1e-15 (f64) / ~1e-7 (f32) times the functions' magnitude, measured by tests/test_math_library.py.

|x| ≤ X: the trapezoidal rule on J_m(x) = (1/2π)∫cos(mθ - x sin θ)dθ over a full period, exact up to aliasing terms
J_{M±m}(x) that are negligible for M points; Y0 and Y1 from Neumann's series
Y0 = (2/π)(ln(x/2) + γ)J0 - (4/π)Σ_k (-1)^k J_2k / k and its derivative (Y1 = -Y0'), whose sums over k fold into
fixed weights of the same samples cos(x sin θ_j), sin(x sin θ_j). |x| > X: Hankel's asymptotic expansion
√(2/(πx))(P cos χ ∓ Q sin χ) with χ = x - (ν/2 + 1/4)π, expressed through cos x and sin x.
jn/yn of integer order |n| ≤ 32: yn by upward recurrence from y0, y1 (stable); jn by upward recurrence where
|n| < |x| and Miller's downward recurrence (normalized by J0 + 2ΣJ_2k = 1) elsewhere; NaN beyond order 32.
"""

from __future__ import annotations

import functools
import math

from ..ir import ops as O
from ..ir.core import Value
from ..ir.dialects import libm as L
from .math_library_build import F, I, MathBuilder, is_f64

#: precision -> (X, trapezoid points M, Neumann terms K, Hankel tolerance)
_PLAN = {False: (10.0, 64, 15, 3e-9), True: (20.0, 120, 28, 1e-18)}
N_MAX = 32


@functools.cache
def _weights(wide: bool) -> tuple[list[float], list[list[float]]]:
    """Sample abscissae t_i = sin θ_i (θ_i in [0, π/2]) and, per function, the weights of cos(x t_i) / sin(x t_i):
    J0 (cos), J1 (sin), the Y0 sum (cos), the Y1 sum (sin), folded over the period by sin's symmetries."""
    _, M, K, _ = _PLAN[wide]
    th = [2 * math.pi * j / M for j in range(M)]
    s = [math.sin(v) for v in th]
    a = [sum((-1) ** k * math.cos(2 * k * v) / k for k in range(1, K + 1)) for v in th]
    q = M // 4
    t = [math.sin(2 * math.pi * i / M) for i in range(q + 1)]
    w = [[0.0] * (q + 1) for _ in range(4)]
    for j in range(M):
        i, sg = (j, 1) if j <= q else (2 * q - j, 1) if j <= 2 * q else (j - 2 * q, -1) if j <= 3 * q else (M - j, -1)
        w[0][i] += 1 / M
        w[1][i] += s[j] * sg / M
        w[2][i] += a[j] / M
        w[3][i] += s[j] * a[j] * sg / M
    return t, w


@functools.cache
def _hankel(nu: int, wide: bool) -> tuple[list[float], list[float]]:
    """Coefficients of P in 1/x² and of Q·x in 1/x², as many as the tolerance at X needs."""
    x, _, _, tol = _PLAN[wide]
    a, p, q = 1.0, [1.0], []
    for k in range(1, 80):
        a *= (4 * nu * nu - (2 * k - 1) ** 2) / (k * 8.0)
        sign = -1.0 if (k // 2) % 2 else 1.0
        (q if k % 2 else p).append(sign * a)
        if abs(a) / x**k < tol:
            break
    return p, q


def _samples(m: MathBuilder, a: Value) -> tuple[list[Value], list[Value]]:
    t, _ = _weights(is_f64(a))
    xs = [m.mul(a, ti) for ti in t]
    return [m.un(O.Cos, v) for v in xs], [m.un(O.Sin, v) for v in xs]


def _dot(m: MathBuilder, weights: list[float], vals: list[Value]) -> Value:
    acc = m.mul(vals[0], weights[0])
    for w, v in zip(weights[1:], vals[1:]):
        acc = m.fma(v, w, acc)
    return acc


def _small(m: MathBuilder, a: Value) -> tuple[Value, Value, Value, Value]:
    """J0, J1, Y0, Y1 at a = |x| ≤ X."""
    _, w = _weights(is_f64(a))
    c, s = _samples(m, a)
    j0, j1 = _dot(m, w[0], c), _dot(m, w[1], s)
    g = m.add(m.log(m.mul(a, 0.5)), 0.5772156649015329)
    y0 = m.sub(m.mul(m.mul(g, j0), 2 / math.pi), m.mul(_dot(m, w[2], c), 4 / math.pi))
    y1 = m.sub(m.mul(m.sub(m.mul(g, j1), m.div(j0, a)), 2 / math.pi), m.mul(_dot(m, w[3], s), 4 / math.pi))
    return j0, j1, y0, y1


def _large(m: MathBuilder, a: Value, nu: int) -> tuple[Value, Value]:
    """J_ν, Y_ν at a > X by Hankel's expansion."""
    p_c, q_c = _hankel(nu, is_f64(a))
    inv = m.div(1.0, a)
    z = m.mul(inv, inv)
    p = m.horner(z, p_c)
    q = m.mul(m.horner(z, q_c), inv)
    c, s = m.un(O.Cos, a), m.un(O.Sin, a)
    r = math.sqrt(0.5)
    if nu == 0:
        cos_chi, sin_chi = m.mul(m.add(c, s), r), m.mul(m.sub(s, c), r)
    else:
        cos_chi, sin_chi = m.mul(m.sub(s, c), r), m.neg(m.mul(m.add(s, c), r))
    amp = m.sqrt(m.mul(inv, 2 / math.pi))
    j = m.mul(amp, m.sub(m.mul(p, cos_chi), m.mul(q, sin_chi)))
    y = m.mul(amp, m.add(m.mul(p, sin_chi), m.mul(q, cos_chi)))
    return j, y


def _pair(m: MathBuilder, x: Value, nu: int, second_kind: bool) -> Value:
    split = _PLAN[is_f64(x)][0]
    a = m.abs(x)
    small = _small(m, a)
    j_large, y_large = _large(m, a, nu)
    near = m.cmpf(F.OLE, a, split)
    if second_kind:
        v = m.where(near, small[2 + nu], y_large)
        v = m.where(m.cmpf(F.OEQ, x, 0.0), float("-inf"), v)
        v = m.where(m.cmpf(F.OEQ, x, float("inf")), 0.0, v)
        return m.where(m.cmpf(F.ULT, x, 0.0), float("nan"), v)
    v = m.where(near, small[nu], j_large)
    v = m.where(m.cmpf(F.OEQ, a, float("inf")), 0.0, v)
    return m.where(m.cmpf(F.OLT, x, 0.0), m.neg(v), v) if nu == 1 else v  # J1 is odd


def bessel_j(m: MathBuilder, nu: int, x: Value) -> Value:
    return _pair(m, x, nu, False)


def bessel_y(m: MathBuilder, nu: int, x: Value) -> Value:
    return _pair(m, x, nu, True)


def _order(m: MathBuilder, n: Value) -> tuple[Value, Value, Value]:
    """|n|, whether n is odd, whether |n| is beyond N_MAX."""
    mag = m.make(O.AbsI, [n], n.type)
    odd = m.icmp(I.NE, m.ibin(O.AndI, n, 1), 0)
    return mag, odd, m.icmp(I.UGT, mag, N_MAX)


def bessel_yn(m: MathBuilder, n: Value, x: Value) -> Value:
    mag, odd, beyond = _order(m, n)
    y_prev, y = bessel_y(m, 0, x), bessel_y(m, 1, x)
    out = m.where(m.icmp(I.EQ, mag, 0), y_prev, y)
    inv2 = m.div(2.0, x)
    for k in range(1, N_MAX):
        y_prev, y = y, m.sub(m.mul(m.mul(inv2, float(k)), y), y_prev)
        out = m.where(m.icmp(I.EQ, mag, k + 1), y, out)
    neg = m.all(odd, m.icmp(I.SLT, n, 0))
    out = m.where(neg, m.neg(out), out)
    return m.where(beyond, float("nan"), out)


def bessel_jn(m: MathBuilder, n: Value, x: Value) -> Value:
    mag, odd, beyond = _order(m, n)
    a = m.abs(x)
    inv2 = m.div(2.0, a)
    # upward recurrence: accurate for orders below |x|
    j_prev, j = bessel_j(m, 0, a), bessel_j(m, 1, a)
    up = m.where(m.icmp(I.EQ, mag, 0), j_prev, j)
    for k in range(1, N_MAX):
        j_prev, j = j, m.sub(m.mul(m.mul(inv2, float(k)), j), j_prev)
        up = m.where(m.icmp(I.EQ, mag, k + 1), j, up)
    # Miller's downward recurrence from far above, rescaled so that it never overflows
    top = N_MAX + 40
    big = 1e100 if is_f64(x) else 1e15
    nxt, cur = m.c(0.0, x), m.c(1e-30 if is_f64(x) else 1e-10, x)
    total, picked = m.c(0.0, x), m.c(0.0, x)
    for k in range(top, 0, -1):
        prev = m.sub(m.mul(m.mul(inv2, float(k)), cur), nxt)  # J_{k-1}
        nxt, cur = cur, prev
        if (k - 1) % 2 == 0:
            total = m.add(total, cur if k - 1 == 0 else m.mul(cur, 2.0))
        if k - 1 <= N_MAX:
            picked = m.where(m.icmp(I.EQ, mag, k - 1), cur, picked)
        huge = m.cmpf(F.OGT, m.abs(cur), big)
        scale = lambda v, huge=huge: m.where(huge, m.mul(v, 1.0 / big), v)
        nxt, cur, total, picked = scale(nxt), scale(cur), scale(total), scale(picked)
    down = m.div(picked, total)
    order = m.cast(O.SIToFP, mag, x.type.element)
    v = m.where(m.cmpf(F.OLT, order, a), up, down)
    # tiny |x|: the series' leading terms (a/2)^n/n!·(1 - (a/2)²/(n+1)), where the recurrences would overflow
    h = m.mul(a, 0.5)
    lead = m.exp(m.sub(m.mul(order, m.log(h)), m.un(L.Lgamma, m.add(order, 1.0))))
    lead = m.mul(lead, m.sub(1.0, m.div(m.mul(h, h), m.add(order, 1.0))))
    v = m.where(m.cmpf(F.OLT, a, 1e-8 if is_f64(x) else 1e-4), lead, v)
    v = m.where(m.cmpf(F.OEQ, a, 0.0), m.where(m.icmp(I.EQ, mag, 0), m.c(1.0, x), 0.0), v)
    flip = m.all(odd, m.make(O.XOrI, [m.icmp(I.SLT, n, 0), m.cmpf(F.OLT, x, 0.0)], odd.type))
    v = m.where(flip, m.neg(v), v)
    return m.where(beyond, float("nan"), v)
