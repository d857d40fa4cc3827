"""`tt.extern_elementwise`: libdevice (`__nv_*`) names mapped to CPU math, other symbols called as C functions.

`triton.language.extra.libdevice` resolves to CUDA's libdevice module for SDK backends, so kernels name `__nv_*`
functions. Each is mapped, in this order, to: an explicit rule below (conversions with rounding modes, bit casts,
integer helpers, predicates, functions C has no name for), or the C math library function of the same name without
the prefix (`__nv_tanhf` → `tanhf`, found in this process). A `__nv_*` name with neither raises `UnsupportedError`;
so do arithmetic ops with a directed rounding mode (`_rz/_ru/_rd`), which the CPU cannot do per instruction.
A symbol outside libdevice is declared as an external C function with the scalar signature and resolved when the
object is loaded (native plugins, the process).
"""

from __future__ import annotations

import ctypes
import functools
import math
import re
from collections.abc import Callable

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O

from .context import LoweringContext
from .convert import rtz_narrow
from .elementwise import _fp_to_int, _mulhi, call_intrinsic, call_libm, lift
from .rules import RULES
from .types import F32, F64, I1, I32, I64, is_float_type, llvm_type

Impl = Callable[[LoweringContext, list[ir.Value], ir.Type], ir.Value]
_ROUND = {"rn": "llvm.roundeven", "rz": "llvm.trunc", "rd": "llvm.floor", "ru": "llvm.ceil"}


@functools.cache
def _libc_has(name: str) -> bool:
    return hasattr(ctypes.CDLL(None), name)


def _fconst(ty: ir.Type, v: float) -> ir.Constant:
    return ir.Constant(ty, v)


def _bool_i32(ctx: LoweringContext, c: ir.Value, ret: ir.Type) -> ir.Value:
    return ctx.b.zext(c, ret)


def _is_inf(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    return ctx.b.fcmp_ordered("==", call_intrinsic(ctx, "llvm.fabs", [x]), _fconst(x.type, math.inf))


def _to_int(ctx: LoweringContext, a: list[ir.Value], ret: ir.Type, signed: bool, mode: str) -> ir.Value:
    x = call_intrinsic(ctx, _ROUND[mode], [a[0]])
    return _fp_to_int(ctx, x, ret, signed)


def _int_to_float(ctx: LoweringContext, a: list[ir.Value], ret: ir.Type, signed: bool) -> ir.Value:
    return ctx.b.sitofp(a[0], ret) if signed else ctx.b.uitofp(a[0], ret)


def _erfinv(ctx: LoweringContext, y: ir.Value) -> ir.Value:
    """Inverse error function: Winitzki's closed form (rel. error ~2e-3), then three Newton steps on erf in f64."""
    b = ctx.b
    ty = y.type
    d = y if ty == F64 else b.fpext(y, F64)
    c = lambda v: _fconst(F64, v)
    a = 0.147
    ln = call_libm(ctx, "log", [b.fmul(b.fsub(c(1.0), d), b.fadd(c(1.0), d))])
    t = b.fadd(c(2 / (math.pi * a)), b.fmul(ln, c(0.5)))
    inner = b.fsub(call_intrinsic(ctx, "llvm.sqrt", [b.fsub(b.fmul(t, t), b.fdiv(ln, c(a)))]), t)
    x = call_intrinsic(ctx, "llvm.copysign", [call_intrinsic(ctx, "llvm.sqrt", [inner]), d])
    for _ in range(3):
        err = b.fsub(call_libm(ctx, "erf", [x]), d)
        slope = b.fmul(c(2 / math.sqrt(math.pi)), call_intrinsic(ctx, "llvm.exp", [b.fneg(b.fmul(x, x))]))
        x = b.fsub(x, b.fdiv(err, slope))
    ad = call_intrinsic(ctx, "llvm.fabs", [d])
    x = b.select(b.fcmp_ordered("==", ad, c(1.0)), call_intrinsic(ctx, "llvm.copysign", [c(math.inf), d]), x)
    x = b.select(b.fcmp_unordered(">", ad, c(1.0)), c(math.nan), x)
    x = b.select(b.fcmp_ordered("==", d, c(0.0)), d, x)
    return x if ty == F64 else b.fptrunc(x, ty)


def _hadd(ctx: LoweringContext, a: list[ir.Value], signed: bool, round_up: bool) -> ir.Value:
    b = ctx.b
    ext = b.sext if signed else b.zext
    s = b.add(ext(a[0], I64), ext(a[1], I64))
    if round_up:
        s = b.add(s, ir.Constant(I64, 1))
    return b.trunc(b.ashr(s, ir.Constant(I64, 1)) if signed else b.lshr(s, ir.Constant(I64, 1)), a[0].type)


def _mulhi_signed(ctx: LoweringContext, x: ir.Value, y: ir.Value) -> ir.Value:
    b = ctx.b
    w = x.type.width
    wide = ir.IntType(2 * w)
    p = b.mul(b.sext(x, wide), b.sext(y, wide))
    return b.trunc(b.ashr(p, ir.Constant(wide, w)), x.type)


def _mul24(ctx: LoweringContext, a: list[ir.Value], signed: bool) -> ir.Value:
    b = ctx.b
    if signed:
        f = lambda v: b.ashr(b.shl(v, ir.Constant(I32, 8)), ir.Constant(I32, 8))
    else:
        f = lambda v: b.and_(v, ir.Constant(I32, 0xFFFFFF))
    return b.mul(f(a[0]), f(a[1]))


def _sad(ctx: LoweringContext, a: list[ir.Value], signed: bool) -> ir.Value:
    b = ctx.b
    gt = b.icmp_signed(">", a[0], a[1]) if signed else b.icmp_unsigned(">", a[0], a[1])
    diff = b.select(gt, b.sub(a[0], a[1]), b.sub(a[1], a[0]))
    return b.add(diff, a[2])


def _byte_perm(ctx: LoweringContext, a: list[ir.Value]) -> ir.Value:
    """__byte_perm(x, y, s): byte i of the result is byte (s >> 4i) & 7 of the 8-byte value y:x."""
    b = ctx.b
    both = b.or_(b.shl(b.zext(a[1], I64), ir.Constant(I64, 32)), b.zext(a[0], I64))
    out = ir.Constant(I32, 0)
    for i in range(4):
        sel = b.and_(b.lshr(a[2], ir.Constant(I32, 4 * i)), ir.Constant(I32, 7))
        byte = b.and_(b.lshr(both, b.shl(b.zext(sel, I64), ir.Constant(I64, 3))), ir.Constant(I64, 0xFF))
        out = b.or_(out, b.shl(b.trunc(byte, I32), ir.Constant(I32, 8 * i)))
    return out


def _norm(ctx: LoweringContext, a: list[ir.Value], recip: bool) -> ir.Value:
    b = ctx.b
    acc = b.fmul(a[0], a[0])
    for v in a[1:]:
        acc = call_intrinsic(ctx, "llvm.fma", [v, v, acc])
    r = call_intrinsic(ctx, "llvm.sqrt", [acc])
    return b.fdiv(_fconst(r.type, 1.0), r) if recip else r


def _recip(ctx: LoweringContext, v: ir.Value) -> ir.Value:
    return ctx.b.fdiv(_fconst(v.type, 1.0), v)


#: libdevice base names (without `__nv_` and the f32 suffix `f`) with explicit implementations
_EXPLICIT: dict[str, Impl] = {
    "isnan": lambda ctx, a, r: _bool_i32(ctx, ctx.b.fcmp_unordered("uno", a[0], a[0]), r),
    "isinf": lambda ctx, a, r: _bool_i32(ctx, _is_inf(ctx, a[0]), r),
    "isfinite": lambda ctx, a, r: _bool_i32(
        ctx, ctx.b.fcmp_ordered("<", call_intrinsic(ctx, "llvm.fabs", [a[0]]), _fconst(a[0].type, math.inf)), r
    ),
    "finite": lambda ctx, a, r: _bool_i32(
        ctx, ctx.b.fcmp_ordered("<", call_intrinsic(ctx, "llvm.fabs", [a[0]]), _fconst(a[0].type, math.inf)), r
    ),
    "signbit": lambda ctx, a, r: _bool_i32(
        ctx,
        ctx.b.icmp_signed(
            "<",
            ctx.b.bitcast(a[0], ir.IntType(a[0].type == F64 and 64 or 32)),
            ir.Constant(ir.IntType(a[0].type == F64 and 64 or 32), 0),
        ),
        r,
    ),
    "rsqrt": lambda ctx, a, r: _recip(ctx, call_intrinsic(ctx, "llvm.sqrt", [a[0]])),
    "rcbrt": lambda ctx, a, r: _recip(ctx, call_libm(ctx, "cbrt", a)),
    "rhypot": lambda ctx, a, r: _recip(ctx, call_libm(ctx, "hypot", a)),
    "norm3d": lambda ctx, a, r: _norm(ctx, a, False),
    "norm4d": lambda ctx, a, r: _norm(ctx, a, False),
    "rnorm3d": lambda ctx, a, r: _norm(ctx, a, True),
    "rnorm4d": lambda ctx, a, r: _norm(ctx, a, True),
    "saturate": lambda ctx, a, r: call_intrinsic(
        ctx,
        "llvm.minnum",
        [call_intrinsic(ctx, "llvm.maxnum", [a[0], _fconst(a[0].type, 0.0)]), _fconst(a[0].type, 1.0)],
    ),
    "sinpi": lambda ctx, a, r: call_libm(ctx, "sin", [ctx.b.fmul(a[0], _fconst(a[0].type, math.pi))]),
    "cospi": lambda ctx, a, r: call_libm(ctx, "cos", [ctx.b.fmul(a[0], _fconst(a[0].type, math.pi))]),
    "normcdf": lambda ctx, a, r: ctx.b.fmul(
        _fconst(r, 0.5), call_libm(ctx, "erfc", [ctx.b.fmul(a[0], _fconst(r, -1 / math.sqrt(2)))])
    ),
    "erfinv": lambda ctx, a, r: _erfinv(ctx, a[0]),
    "erfcinv": lambda ctx, a, r: _erfinv(ctx, ctx.b.fsub(_fconst(r, 1.0), a[0])),
    "normcdfinv": lambda ctx, a, r: ctx.b.fmul(
        _fconst(r, -math.sqrt(2)), _erfinv(ctx, ctx.b.fsub(_fconst(r, 1.0), ctx.b.fmul(_fconst(r, 2.0), a[0])))
    ),
    "erfcx": lambda ctx, a, r: ctx.b.fmul(
        call_intrinsic(ctx, "llvm.exp", [ctx.b.fmul(a[0], a[0])]), call_libm(ctx, "erfc", a)
    ),
    "fdivide": lambda ctx, a, r: ctx.b.fdiv(a[0], a[1]),
    "powi": lambda ctx, a, r: ctx.b.call(
        ctx.intrinsic(f"llvm.powi.{'f64' if r == F64 else 'f32'}.i32", r, [r, I32]), a
    ),
    "fabs": lambda ctx, a, r: call_intrinsic(ctx, "llvm.fabs", a),
    "copysign": lambda ctx, a, r: call_intrinsic(ctx, "llvm.copysign", a),
    "sqrt": lambda ctx, a, r: call_intrinsic(ctx, "llvm.sqrt", a),
    "fma": lambda ctx, a, r: call_intrinsic(ctx, "llvm.fma", a),
    "abs": lambda ctx, a, r: call_intrinsic(ctx, "llvm.abs", [a[0], ir.Constant(I1, 0)]),
    "llabs": lambda ctx, a, r: call_intrinsic(ctx, "llvm.abs", [a[0], ir.Constant(I1, 0)]),
    "brev": lambda ctx, a, r: call_intrinsic(ctx, "llvm.bitreverse", a),
    "brevll": lambda ctx, a, r: call_intrinsic(ctx, "llvm.bitreverse", a),
    "clz": lambda ctx, a, r: call_intrinsic(ctx, "llvm.ctlz", [a[0], ir.Constant(I1, 0)]),
    "clzll": lambda ctx, a, r: ctx.b.trunc(call_intrinsic(ctx, "llvm.ctlz", [a[0], ir.Constant(I1, 0)]), I32),
    "popc": lambda ctx, a, r: call_intrinsic(ctx, "llvm.ctpop", a),
    "popcll": lambda ctx, a, r: ctx.b.trunc(call_intrinsic(ctx, "llvm.ctpop", a), I32),
    "ffs": lambda ctx, a, r: _ffs(ctx, a[0]),
    "ffsll": lambda ctx, a, r: _ffs(ctx, a[0]),
    "byte_perm": lambda ctx, a, r: _byte_perm(ctx, a),
    "mulhi": lambda ctx, a, r: _mulhi_signed(ctx, a[0], a[1]),
    "mul64hi": lambda ctx, a, r: _mulhi_signed(ctx, a[0], a[1]),
    "umulhi": lambda ctx, a, r: _mulhi(ctx, a[0], a[1]),
    "umul64hi": lambda ctx, a, r: _mulhi(ctx, a[0], a[1]),
    "mul24": lambda ctx, a, r: _mul24(ctx, a, True),
    "umul24": lambda ctx, a, r: _mul24(ctx, a, False),
    "hadd": lambda ctx, a, r: _hadd(ctx, a, True, False),
    "rhadd": lambda ctx, a, r: _hadd(ctx, a, True, True),
    "uhadd": lambda ctx, a, r: _hadd(ctx, a, False, False),
    "urhadd": lambda ctx, a, r: _hadd(ctx, a, False, True),
    "sad": lambda ctx, a, r: _sad(ctx, a, True),
    "usad": lambda ctx, a, r: _sad(ctx, a, False),
    "min": lambda ctx, a, r: call_intrinsic(ctx, "llvm.smin", a),
    "max": lambda ctx, a, r: call_intrinsic(ctx, "llvm.smax", a),
    "llmin": lambda ctx, a, r: call_intrinsic(ctx, "llvm.smin", a),
    "llmax": lambda ctx, a, r: call_intrinsic(ctx, "llvm.smax", a),
    "umin": lambda ctx, a, r: call_intrinsic(ctx, "llvm.umin", a),
    "umax": lambda ctx, a, r: call_intrinsic(ctx, "llvm.umax", a),
    "ullmin": lambda ctx, a, r: call_intrinsic(ctx, "llvm.umin", a),
    "ullmax": lambda ctx, a, r: call_intrinsic(ctx, "llvm.umax", a),
    "double2hiint": lambda ctx, a, r: ctx.b.trunc(ctx.b.lshr(ctx.b.bitcast(a[0], I64), ir.Constant(I64, 32)), I32),
    "double2loint": lambda ctx, a, r: ctx.b.trunc(ctx.b.bitcast(a[0], I64), I32),
    "hiloint2double": lambda ctx, a, r: ctx.b.bitcast(
        ctx.b.or_(ctx.b.shl(ctx.b.zext(a[0], I64), ir.Constant(I64, 32)), ctx.b.zext(a[1], I64)), F64
    ),
}

for _name in (
    "float_as_int",
    "float_as_uint",
    "int_as_float",
    "uint_as_float",
    "double_as_longlong",
    "longlong_as_double",
):
    _EXPLICIT[_name] = lambda ctx, a, r: ctx.b.bitcast(a[0], r)


def _ffs(ctx: LoweringContext, x: ir.Value) -> ir.Value:
    b = ctx.b
    tz = call_intrinsic(ctx, "llvm.cttz", [x, ir.Constant(I1, 0)])
    r = b.select(
        b.icmp_unsigned("==", x, ir.Constant(x.type, 0)), ir.Constant(x.type, 0), b.add(tz, ir.Constant(x.type, 1))
    )
    return r if x.type == I32 else b.trunc(r, I32)


_ARITH_RN: dict[str, Callable[[LoweringContext, list[ir.Value]], ir.Value]] = {
    "add": lambda ctx, a: ctx.b.fadd(a[0], a[1]),
    "sub": lambda ctx, a: ctx.b.fsub(a[0], a[1]),
    "mul": lambda ctx, a: ctx.b.fmul(a[0], a[1]),
    "div": lambda ctx, a: ctx.b.fdiv(a[0], a[1]),
    "rcp": lambda ctx, a: _recip(ctx, a[0]),
    "sqrt": lambda ctx, a: call_intrinsic(ctx, "llvm.sqrt", a),
    "rsqrt": lambda ctx, a: _recip(ctx, call_intrinsic(ctx, "llvm.sqrt", a)),
}
_CONV = re.compile(r"(float|double|int|uint|ll|ull)2(float|double|int|uint|ll|ull)_(rn|rz|rd|ru)")
_ROUNDED = re.compile(r"(?:f|d)?(add|sub|mul|div|rcp|sqrt|rsqrt)_(rn|rz|rd|ru)|(fmaf?|fma)_(rn|rz|rd|ru)")


def _libdevice_impl(name: str) -> Impl | None:
    """The implementation of libdevice function `name` (without `__nv_`), or None."""
    name = name.removeprefix("fast_")
    m = _CONV.fullmatch(name)
    if m:
        src, dst, mode = m.groups()
        if src in ("float", "double") and dst in ("float", "double"):
            if mode == "rn":
                return lambda ctx, a, r: ctx.b.fptrunc(a[0], r) if r == F32 else ctx.b.fpext(a[0], r)
            if mode == "rz":
                return lambda ctx, a, r: rtz_narrow(ctx, a[0], r)
            return None
        if src in ("float", "double"):
            return lambda ctx, a, r: _to_int(ctx, a, r, dst in ("int", "ll"), mode)
        if mode != "rn":
            return None
        return lambda ctx, a, r: _int_to_float(ctx, a, r, src in ("int", "ll"))
    m = _ROUNDED.fullmatch(name)
    if m:
        op, mode = (m.group(1), m.group(2)) if m.group(1) else ("fma", m.group(4))
        if mode != "rn":
            return None
        if op == "fma":
            return lambda ctx, a, r: call_intrinsic(ctx, "llvm.fma", a)
        return lambda ctx, a, r: _ARITH_RN[op](ctx, a)
    for key in (name, name[:-1] if name.endswith(("f", "d")) else None):
        if key in _EXPLICIT:
            return _EXPLICIT[key]
    if _libc_has(name):
        return lambda ctx, a, r: ctx.b.call(ctx.intrinsic(name, r, [v.type for v in a]), a)
    return None


def _external(ctx: LoweringContext, symbol: str, args: list[ir.Value], ret: ir.Type) -> ir.Value:
    return ctx.b.call(ctx.intrinsic(symbol, ret, [a.type for a in args]), args)


@RULES.register(O.ExternElementwise)
def lower_extern(ctx: LoweringContext, op: O.ExternElementwise) -> None:
    symbol = op.symbol
    ret = llvm_type(op.result.type)
    if not symbol.startswith("__nv_"):
        lift(ctx, op, lambda *a: _external(ctx, symbol, list(a), ret))
        return
    impl = _libdevice_impl(symbol[5:])
    if impl is None:
        raise UnsupportedError(
            "cpu_ref",
            f"libdevice function {symbol} has no CPU implementation "
            "(directed rounding modes and some special functions are not available)",
            op.loc,
        )
    if not (is_float_type(ret) or isinstance(ret, ir.IntType)):
        raise UnsupportedError("cpu_ref", f"{symbol} returning {op.result.type.element}", op.loc)
    lift(ctx, op, lambda *a: impl(ctx, list(a), ret))
