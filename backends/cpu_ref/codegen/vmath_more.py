"""Vectorizable f32 tanh, erf, log, log2 and log10 as straight-line IR, like vmath.py's exp.

These were one scalar libm call per element (LLVM lowers `llvm.log.v16f32` to 16 `logf` calls, and a loop calling
`tanhf` does not vectorize at all), which made GELU, cross-entropy and log-softmax kernels, and every kernel
Inductor writes with `libdevice.tanh/erf/log`, run one element per call. Written branch-free, the element loop
becomes AVX2/AVX-512 code. f64 keeps libm; f16/bf16 compute in f32 and round once (vmath.via_f32).

Polynomial coefficients are least-squares fits (relative error, Chebyshev nodes, float64) rounded to f32; the error
bounds below were measured against float64 references over dense samples and are checked by
tests/test_math_library.py's accuracy table on every backend:
- tanh: |x| < 0.9 odd polynomial x + x³·P(x²) (0.91 ulp); above, 1 - 2/(e^{2|x|} + 1) (≤ 1.6 ulp with the inline
  exp's ≤ 2 ulp; 0.97 with an exact exp); ±1 from |x| ≥ 9.0109 as the correctly rounded tanh.
- erf: |x| < 0.9 x + x·Q(x²) (0.82 ulp); 0.9 ≤ |x| < 3.92, 1 - exp(R(|x|)) with R fitting ln erfc (1.13 ulp with an
  exact exp); ±1 beyond, where erf rounds to ±1 in f32.
- log: x = 2^e·m, m in [√½, √2), log1p(m - 1) = f - f²/2 + f³·S(f) added to e·ln2 in two parts (0.84 ulp over random
  normal and subnormal inputs); log2 and log10 scale the same log1p with split constants.
"""

from __future__ import annotations

import math

from llvmlite import ir
from triton_backend_sdk import math_polynomials as P

from .context import LoweringContext
from .types import F32, I32
from .vmath import _fma, exp_f32

_LOG2E_HI = 1.4426950216293335  # f32(log2(e)); the rest in _LOG2E_LO
_LOG2E_LO = 1.9259629911266175e-08
_LOG10_2_HI = 0.3010300099849701  # f32(log10(2)); the rest in _LOG10_2_LO
_LOG10_2_LO = -1.4320988897559699e-08
_LOG10E_HI = 0.4342944920063019  # f32(log10(e)); the rest in _LOG10E_LO
_LOG10E_LO = -1.0103050052231683e-08
#: below this tanh(x) rounds to x (|x|³/3 is under half an ulp of x); ±0 and subnormals keep their bits
_TANH_TINY = 2.0**-12


def _f(v: float) -> ir.Constant:
    return ir.Constant(F32, v)


def _horner(ctx: LoweringContext, coeffs: list[float], u: ir.Value) -> ir.Value:
    p: ir.Value = _f(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        p = _fma(ctx, p, u, _f(c))
    return p


def _call(ctx: LoweringContext, name: str, *args: ir.Value) -> ir.Value:
    return ctx.b.call(ctx.intrinsic(f"{name}.f32", F32, [F32] * len(args)), list(args))


def _is_nan(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    return ctx.b.fcmp_unordered("uno", x, x)


def tanh_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    a = _call(ctx, "llvm.fabs", x)
    x2 = b.fmul(x, x)
    small = _fma(ctx, b.fmul(x2, x), _horner(ctx, P.TANH_P, x2), x)
    e = exp_f32(ctx, b.fadd(a, a))
    big = b.fsub(_f(1.0), b.fdiv(_f(2.0), b.fadd(e, _f(1.0))))
    big = _call(ctx, "llvm.copysign", big, x)
    small = b.select(b.fcmp_ordered("<", a, _f(_TANH_TINY)), x, small)
    return b.select(b.fcmp_ordered("<", a, _f(P.TANH_SMALL)), small, big)


def erf_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    a = _call(ctx, "llvm.fabs", x)
    small = _fma(ctx, x, _horner(ctx, P.ERF_Q, b.fmul(x, x)), x)
    ac = _call(ctx, "llvm.minnum", a, _f(P.ERF_BIG))
    big = b.fsub(_f(1.0), exp_f32(ctx, _horner(ctx, P.ERF_R, ac)))
    big = b.select(b.fcmp_ordered(">=", a, _f(P.ERF_BIG)), _f(1.0), big)
    big = b.select(_is_nan(ctx, x), x, _call(ctx, "llvm.copysign", big, x))
    return b.select(b.fcmp_ordered("<", a, _f(P.ERF_SMALL)), small, big)


def _log_parts(ctx: LoweringContext, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(e, f, r) with x = 2^e·(1 + f) for a positive finite x, f in [√½ - 1, √2 - 1), and log1p(f) = f + r."""
    b = ctx.b
    i32 = lambda v: ir.Constant(I32, v)
    sub = b.fcmp_ordered("<", x, _f(2.0**-126))
    xs = b.select(sub, b.fmul(x, _f(2.0**23)), x)
    bits = b.bitcast(xs, I32)
    e = b.sub(b.ashr(bits, i32(23)), b.select(sub, i32(127 + 23), i32(127)))
    m = b.bitcast(b.or_(b.and_(bits, i32(0x7FFFFF)), i32(0x3F800000)), F32)
    over = b.fcmp_ordered(">", m, _f(math.sqrt(2.0)))
    m = b.select(over, b.fmul(m, _f(0.5)), m)
    e_f = b.sitofp(b.add(e, b.zext(over, I32)), F32)
    f = b.fsub(m, _f(1.0))
    r = b.fmul(b.fmul(f, f), _fma(ctx, f, _horner(ctx, P.LOG_S, f), _f(-0.5)))
    return e_f, f, r


def _log_special(ctx: LoweringContext, x: ir.Value, y: ir.Value) -> ir.Value:
    """log's results at 0 (-inf), below 0 (NaN), +inf and NaN (themselves); y elsewhere."""
    b = ctx.b
    y = b.select(b.fcmp_ordered("==", x, _f(math.inf)), x, y)
    y = b.select(b.fcmp_ordered("==", x, _f(0.0)), _f(-math.inf), y)
    y = b.select(b.fcmp_ordered("<", x, _f(0.0)), _f(math.nan), y)
    return b.select(_is_nan(ctx, x), x, y)


def log_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    e, f, r = _log_parts(ctx, x)
    s = b.fadd(_fma(ctx, e, _f(P.LN2_LO), r), f)
    return _log_special(ctx, x, _fma(ctx, e, _f(P.LN2_HI), s))


def log2_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    e, f, r = _log_parts(ctx, x)
    # log2(1 + f) with f·log2(e) in two parts, rounded once; e (exact) last
    t = _fma(ctx, f, _f(_LOG2E_HI), _fma(ctx, f, _f(_LOG2E_LO), ctx.b.fmul(r, _f(_LOG2E_HI))))
    return _log_special(ctx, x, ctx.b.fadd(e, t))


def log10_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    e, f, r = _log_parts(ctx, x)
    low = _fma(ctx, f, _f(_LOG10E_LO), _fma(ctx, r, _f(_LOG10E_HI), b.fmul(e, _f(_LOG10_2_LO))))
    y = _fma(ctx, e, _f(_LOG10_2_HI), _fma(ctx, f, _f(_LOG10E_HI), low))
    return _log_special(ctx, x, y)


__all__ = ["erf_f32", "log2_f32", "log10_f32", "log_f32", "tanh_f32"]
