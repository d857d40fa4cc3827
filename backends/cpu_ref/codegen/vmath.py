"""Vectorizable math: exp and exp2 for f32 written as straight-line IR (no libm calls).

LLVM vectorizes loops around `llvm.exp.f32` but then lowers the vector intrinsic to one `expf` call per lane; with
the whole computation inline, the element loop becomes AVX2/AVX-512 code. Accuracy: within 2 ulp of the correctly
rounded result over the whole f32 range, subnormal results, overflow to inf, -inf → 0 and NaN included (tested
against float64 references). f64 keeps libm's exp; f16/bf16 compute in f32 and round once.

Method: x = n·ln2 + r with |r| ≤ ln2/2 (Cody–Waite split of ln2, fused multiply-adds), e^r by its degree-7 Taylor
polynomial (truncation error < 1e-8 relative), then the product scaled by 2^n as two exact power-of-two factors so
that results in the subnormal range are rounded once.
"""

from __future__ import annotations

import math

from llvmlite import ir
from triton_backend_sdk import math_polynomials as P

from .context import LoweringContext
from .numerics import narrow
from .types import F32, F64, I32

_LOG2E = 1.4426950408889634
# clamp bounds: e^89 overflows f32, e^-104 rounds to zero; inside them n stays in [-150, 129]
_HI, _LO = 89.0, -104.0
_TAYLOR = [1.0 / math.factorial(k) for k in range(8)]


def _f(v: float) -> ir.Constant:
    return ir.Constant(F32, v)


def _fma(ctx: LoweringContext, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    return ctx.b.call(ctx.intrinsic("llvm.fma.f32", F32, [F32, F32, F32]), [a, b, c])


def _pow2(ctx: LoweringContext, n: ir.Value) -> ir.Value:
    """2**n for an i32 n whose biased exponent is a normal one."""
    b = ctx.b
    bits = b.shl(b.add(n, ir.Constant(I32, 127)), ir.Constant(I32, 23))
    return b.bitcast(bits, F32)


def _exp_reduced(ctx: LoweringContext, x: ir.Value, n_f: ir.Value, r: ir.Value) -> ir.Value:
    b = ctx.b
    p = _f(_TAYLOR[-1])
    for c in reversed(_TAYLOR[:-1]):
        p = _fma(ctx, p, r, _f(c))
    n = b.fptosi(n_f, I32)
    if "+avx512f" in ctx.target.features:
        # p * 2^n rounded once (into the subnormals too): LLVM's ldexp, one vscalefps per vector. Elsewhere LLVM
        # makes a vector ldexp one libm call per lane, so the two exact power-of-two factors stay
        scaled = b.call(ctx.intrinsic("llvm.ldexp.f32.i32", F32, [F32, I32]), [p, n])
    else:
        half = b.ashr(n, ir.Constant(I32, 1))
        scaled = b.fmul(b.fmul(p, _pow2(ctx, half)), _pow2(ctx, b.sub(n, half)))
    is_nan = b.fcmp_unordered("uno", x, x)
    return b.select(is_nan, x, scaled)


def _clamp(ctx: LoweringContext, x: ir.Value, lo: float, hi: float) -> ir.Value:
    b = ctx.b
    mx = ctx.intrinsic("llvm.maxnum.f32", F32, [F32, F32])
    mn = ctx.intrinsic("llvm.minnum.f32", F32, [F32, F32])
    return b.call(mn, [b.call(mx, [x, _f(lo)]), _f(hi)])


def _round(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    return ctx.b.call(ctx.intrinsic("llvm.roundeven.f32", F32, [F32]), [x])


def exp_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    xc = _clamp(ctx, x, _LO, _HI)
    n_f = _round(ctx, b.fmul(xc, _f(_LOG2E)))
    neg_n = b.fneg(n_f)
    r = _fma(ctx, neg_n, _f(P.LN2_HI), xc)
    r = _fma(ctx, neg_n, _f(P.LN2_LO), r)
    return _exp_reduced(ctx, x, n_f, r)


def exp2_f32(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    xc = _clamp(ctx, x, _LO * _LOG2E, _HI * _LOG2E)
    n_f = _round(ctx, xc)
    frac = b.fsub(xc, n_f)  # exact: |xc| < 2^8
    r = _fma(ctx, frac, _f(P.LN2_HI), b.fmul(frac, _f(P.LN2_LO)))
    return _exp_reduced(ctx, x, n_f, r)


def via_f32(ctx: LoweringContext, a: ir.Value, fn) -> ir.Value:
    if a.type == F32:
        return fn(ctx, a)
    return narrow(ctx.b, fn(ctx, ctx.b.fpext(a, F32)), a.type)


def exp(ctx: LoweringContext, a: ir.Value) -> ir.Value:
    if a.type == F64:
        return ctx.b.call(ctx.intrinsic("llvm.exp.f64", F64, [F64]), [a])
    return via_f32(ctx, a, exp_f32)


def exp2(ctx: LoweringContext, a: ir.Value) -> ir.Value:
    if a.type == F64:
        return ctx.b.call(ctx.intrinsic("llvm.exp2.f64", F64, [F64]), [a])
    return via_f32(ctx, a, exp2_f32)
