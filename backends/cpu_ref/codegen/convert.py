"""`tt.fp_to_fp`: float conversions with an explicit rounding mode, fp8 formats included.

LLVM has no fp8 types, so fp8 values travel as i8 bit patterns. Both directions are the SDK's
(`triton_backend_sdk.numerics_fp8`): widening reads the 256-entry table of exact f32 values of the format; narrowing
is the SDK's integer rounding (nearest even or toward zero, saturating as PTX's `cvt.rn.satfinite`) in LLVM
instructions, branch-free, so a tile's loop still vectorizes.
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.enums import RoundingMode
from triton_backend_sdk.numerics import bits_float
from triton_backend_sdk.numerics_fp8 import Fp8Format, f32_to_fp8_bits

from .context import LoweringContext
from .elementwise import _f64_to_f32_round_to_odd, _float_resize, call_intrinsic, lift
from .numerics import LLVMOps, widen
from .rules import RULES
from .types import BF16, F16, F32, F64, I8, I32, PTR, bit_width, fp8_format, llvm_type


def _decode_table(ctx: LoweringContext, fmt: Fp8Format) -> ir.Value:
    name = f"fp8.decode.e{fmt.ebits}m{fmt.mbits}b{fmt.bias}{'.fnuz' if fmt.fnuz else ''}"
    g = ctx.module.globals.get(name)
    if g is None:
        arr = ir.ArrayType(F32, 256)
        g = ir.GlobalVariable(ctx.module, arr, name=name)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(arr, [ir.Constant(F32, bits_float(v)) for v in fmt.f32_bits])
        g.type = PTR
    return g


def fp8_to_float(ctx: LoweringContext, bits: ir.Value, fmt: Fp8Format, to: ir.Type) -> ir.Value:
    b = ctx.b
    p = b.gep(_decode_table(ctx, fmt), [b.zext(bits, I32)], source_etype=F32)
    v = b.load(p, typ=F32)
    return v if to == F32 else _float_resize(ctx, v, to)


def float_to_fp8(ctx: LoweringContext, x: ir.Value, fmt: Fp8Format, rtz: bool) -> ir.Value:
    """f16/bf16 widen exactly; f64 narrows to f32 rounded to odd (toward zero for `rtz`), exact for fp8 after."""
    b = ctx.b
    if x.type == F64:
        x = rtz_narrow(ctx, x, F32) if rtz else _f64_to_f32_round_to_odd(ctx, x)
    elif x.type != F32:
        x = widen(b, x, F32)
    return b.trunc(f32_to_fp8_bits(LLVMOps(b), b.bitcast(x, I32), fmt, rtz), I8)


def rtz_narrow(ctx: LoweringContext, a: ir.Value, to: ir.Type) -> ir.Value:
    """Float narrowing rounded toward zero: step the nearest-even result back when it rounded away from zero."""
    b = ctx.b
    r = _float_resize(ctx, a, to)
    back = widen(b, r, a.type)
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
