"""`tt.fp_to_fp`: float conversions with an explicit rounding mode, fp8 formats included.

LLVM has no fp8 types, so fp8 values travel as i8 bit patterns (see `types.Fp8Format`). Widening from fp8 reads a
256-entry table of exact f32 values; narrowing to fp8 rounds in the source type with power-of-two scaling (exact),
then assembles the bits. Out-of-range values saturate to the largest finite fp8 value and NaN stays NaN, as PTX's
`cvt.rn.satfinite` does on the CUDA path.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.enums import RoundingMode

from .context import LoweringContext
from .elementwise import _float_resize, call_intrinsic, lift
from .rules import RULES
from .types import BF16, F16, F32, F64, I8, I32, PTR, Fp8Format, bit_width, fp8_format, llvm_type

#: (exponent bits, mantissa bits, bias) of the LLVM float types a conversion may compute in
_LAYOUT = {F32: (8, 23, 127), F64: (11, 52, 1023)}


def _decode_table(ctx: LoweringContext, fmt: Fp8Format) -> ir.Value:
    name = f"fp8.decode.e{fmt.ebits}m{fmt.mbits}b{fmt.bias}{'.fnuz' if fmt.fnuz else ''}"
    g = ctx.module.globals.get(name)
    if g is None:
        arr = ir.ArrayType(F32, 256)
        g = ir.GlobalVariable(ctx.module, arr, name=name)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(arr, [ir.Constant(F32, fmt.decode(i)) for i in range(256)])
        g.type = PTR
    return g


def fp8_to_float(ctx: LoweringContext, bits: ir.Value, fmt: Fp8Format, to: ir.Type) -> ir.Value:
    b = ctx.b
    p = b.gep(_decode_table(ctx, fmt), [b.zext(bits, I32)], source_etype=F32)
    v = b.load(p, typ=F32)
    return v if to == F32 else _float_resize(ctx, v, to)


def _pow2(ctx: LoweringContext, e: ir.Value, ty: ir.Type) -> ir.Value:
    """2**e as a normal float of type `ty` (e an i32 inside the normal range)."""
    _, mbits, bias = _LAYOUT[ty]
    it = ir.IntType(bit_width(ty))
    b = ctx.b
    return b.bitcast(b.shl(b.zext(b.add(e, ir.Constant(I32, bias)), it), ir.Constant(it, mbits)), ty)


def _exponent(ctx: LoweringContext, a: ir.Value) -> ir.Value:
    """The unbiased exponent field of a non-negative float as i32 (very negative for zero and subnormals)."""
    _, mbits, bias = _LAYOUT[a.type]
    it = ir.IntType(bit_width(a.type))
    b = ctx.b
    field = b.lshr(b.bitcast(a, it), ir.Constant(it, mbits))
    return b.sub(b.trunc(field, I32), ir.Constant(I32, bias))


def float_to_fp8(ctx: LoweringContext, x: ir.Value, fmt: Fp8Format, rtz: bool) -> ir.Value:
    b = ctx.b
    if x.type not in _LAYOUT:
        x = b.fpext(x, F32)  # f16/bf16 widen exactly
    ty = x.type
    it = ir.IntType(bit_width(ty))
    emin = 1 - fmt.bias
    is_nan = b.fcmp_unordered("uno", x, x)
    negative = b.icmp_signed("<", b.bitcast(x, it), ir.Constant(it, 0))
    a = call_intrinsic(ctx, "llvm.minnum", [call_intrinsic(ctx, "llvm.fabs", [x]), ir.Constant(ty, fmt.max_finite)])
    smax = lambda v, lo: call_intrinsic(ctx, "llvm.smax", [v, ir.Constant(I32, lo)])
    qe = b.sub(smax(_exponent(ctx, a), emin), ir.Constant(I32, fmt.mbits))
    q = _pow2(ctx, qe, ty)
    r = b.fmul(call_intrinsic(ctx, "llvm.trunc" if rtz else "llvm.roundeven", [b.fdiv(a, q)]), q)
    re = smax(_exponent(ctx, r), emin)
    scaled = b.fdiv(r, _pow2(ctx, b.sub(re, ir.Constant(I32, fmt.mbits)), ty))
    code = b.add(
        b.shl(b.trunc(b.sub(re, ir.Constant(I32, emin)), I8), ir.Constant(I8, fmt.mbits)), b.fptoui(scaled, I8)
    )
    signed = b.or_(code, ir.Constant(I8, 0x80))
    if fmt.fnuz:
        negative = b.and_(negative, b.icmp_unsigned("!=", code, ir.Constant(I8, 0)))
    out = b.select(negative, signed, code)
    return b.select(is_nan, ir.Constant(I8, fmt.nan_bits), out)


def rtz_narrow(ctx: LoweringContext, a: ir.Value, to: ir.Type) -> ir.Value:
    """Float narrowing rounded toward zero: step the nearest-even result back when it rounded away from zero."""
    b = ctx.b
    r = _float_resize(ctx, a, to)
    back = b.fpext(r, a.type)
    fabs = lambda v: call_intrinsic(ctx, "llvm.fabs", [v])
    away = b.fcmp_ordered(">", fabs(back), fabs(a))
    it = ir.IntType(bit_width(to))
    stepped = b.bitcast(b.sub(b.bitcast(r, it), ir.Constant(it, 1)), to)
    return b.select(away, stepped, r)


@RULES.register(O.FpToFp)
def lower_fp_to_fp(ctx: LoweringContext, op: O.FpToFp) -> None:
    src_t, dst_t = op.src.type, op.result.type
    src_fmt, dst_fmt = fp8_format(src_t), fp8_format(dst_t)
    to = llvm_type(dst_t)
    rtz = op.rounding == RoundingMode.RTZ
    if src_fmt is not None and dst_fmt is not None:
        lift(ctx, op, lambda a: float_to_fp8(ctx, fp8_to_float(ctx, a, src_fmt, F32), dst_fmt, rtz))
    elif src_fmt is not None:
        lift(ctx, op, lambda a: fp8_to_float(ctx, a, src_fmt, to))
    elif dst_fmt is not None:
        lift(ctx, op, lambda a: float_to_fp8(ctx, a, dst_fmt, rtz))
    else:
        src = llvm_type(src_t)
        if src not in (F16, BF16, F32, F64) or to not in (F16, BF16, F32, F64):
            raise UnsupportedError("cpu_ref", f"tt.fp_to_fp from {src_t.element} to {dst_t.element}", op.loc)
        if rtz and bit_width(to) < bit_width(src):
            lift(ctx, op, lambda a: rtz_narrow(ctx, a, to))
        else:
            lift(ctx, op, lambda a: _float_resize(ctx, a, to))
