"""Elementwise rules: arith and math ops, casts, select, clamp. Each rule is the scalar computation; `lift` turns
it into a tile generator when the operands are tensors.

Integer division, remainder, shifts and float→int conversions arrive with in-range operands: the shared
legalization (sdk/transforms/int_semantics.py) selects Triton's results for x/0, INT_MIN/-1, shifts by >= the width
and out-of-range floats, so each is LLVM's plain instruction here.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir.enums import CmpFPredicate, PropagateNan

from . import vmath, vmath_more
from .context import LoweringContext, Tile
from .numerics import narrow, widen
from .rules import RULES
from .types import BF16, F16, F32, F64, I32, bit_width, fp8_format, llvm_type

Scalar = Callable[..., ir.Value]


def lift(ctx: LoweringContext, op: O.Op, fn: Scalar, weight: int = 1) -> None:
    """Define `op`'s single result as `fn(*operand elements)`, elementwise over tensors.

    `weight` is the op's cost in the generator's cost estimate (which decides what gets stored rather than
    recomputed): integer division, for one, does not vectorize on x86 and costs tens of cycles per element.
    """
    res = op.result
    srcs = [ctx.get(v) for v in op.operands]
    if not res.type.is_tensor:
        ctx.define(res, fn(*srcs))
        return
    cost = weight + sum(s.cost for s in srcs if isinstance(s, Tile) and s.buf is None)

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        return fn(*[s.element(b, idx) if isinstance(s, Tile) else s for s in srcs])

    ctx.define(res, Tile(res.type.shape, llvm_type(res.type), gen=gen, cost=cost))


def lift_each(ctx: LoweringContext, op: O.Op, fn: Callable[..., tuple[ir.Value, ...]], weight: int = 1) -> None:
    """Define each of `op`'s results as the matching element of `fn(*operand elements)` (a tuple): a custom op with
    several results (sdk/custom_ops.py). For tensors each result's generator calls `fn` and keeps its own element,
    which LLVM's CSE merges where the results are computed in one place."""
    srcs = [ctx.get(v) for v in op.operands]
    if not op.results[0].type.is_tensor:
        for res, value in zip(op.results, fn(*srcs)):
            ctx.define(res, value)
        return
    cost = weight + sum(s.cost for s in srcs if isinstance(s, Tile) and s.buf is None)
    for i, res in enumerate(op.results):

        def gen(b: ir.IRBuilder, idx: list[ir.Value], i: int = i) -> ir.Value:
            return fn(*[s.element(b, idx) if isinstance(s, Tile) else s for s in srcs])[i]

        ctx.define(res, Tile(res.type.shape, llvm_type(res.type), gen=gen, cost=cost))


def call_intrinsic(ctx: LoweringContext, name: str, args: list[ir.Value], ret: ir.Type | None = None) -> ir.Value:
    ty = args[0].type
    suffix = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64"}.get(ty) or f"i{ty.width}"
    fn = ctx.intrinsic(f"{name}.{suffix}", ret or ty, [a.type for a in args])
    return ctx.b.call(fn, args)


def call_libm(ctx: LoweringContext, name: str, args: list[ir.Value]) -> ir.Value:
    """A C math library function (`name` is the double version; `name + 'f'` the float one); half types widen."""
    b = ctx.b
    ty = args[0].type
    if ty == F64:
        return b.call(ctx.intrinsic(name, F64, [F64] * len(args)), args)
    wide = [a if a.type == F32 else widen(b, a, F32) for a in args]
    r = b.call(ctx.intrinsic(name + "f", F32, [F32] * len(args)), wide)
    return r if ty == F32 else narrow(b, r, ty)


# ---- integer -------------------------------------------------------------------------------------------------------


def _mulhi(ctx: LoweringContext, a: ir.Value, c: ir.Value) -> ir.Value:
    b = ctx.b
    w = a.type.width
    wide = ir.IntType(2 * w)
    p = b.mul(b.zext(a, wide), b.zext(c, wide))
    return b.trunc(b.lshr(p, ir.Constant(wide, w)), a.type)


_INT_BINARY: dict[type, Callable[[LoweringContext, ir.Value, ir.Value], ir.Value]] = {
    O.AddI: lambda ctx, a, c: ctx.b.add(a, c),
    O.SubI: lambda ctx, a, c: ctx.b.sub(a, c),
    O.MulI: lambda ctx, a, c: ctx.b.mul(a, c),
    O.DivSI: lambda ctx, a, c: ctx.b.sdiv(a, c),
    O.DivUI: lambda ctx, a, c: ctx.b.udiv(a, c),
    O.RemSI: lambda ctx, a, c: ctx.b.srem(a, c),
    O.RemUI: lambda ctx, a, c: ctx.b.urem(a, c),
    O.MinSI: lambda ctx, a, c: call_intrinsic(ctx, "llvm.smin", [a, c]),
    O.MaxSI: lambda ctx, a, c: call_intrinsic(ctx, "llvm.smax", [a, c]),
    O.MinUI: lambda ctx, a, c: call_intrinsic(ctx, "llvm.umin", [a, c]),
    O.MaxUI: lambda ctx, a, c: call_intrinsic(ctx, "llvm.umax", [a, c]),
    O.ShLI: lambda ctx, a, c: ctx.b.shl(a, c),
    O.ShRSI: lambda ctx, a, c: ctx.b.ashr(a, c),
    O.ShRUI: lambda ctx, a, c: ctx.b.lshr(a, c),
    O.AndI: lambda ctx, a, c: ctx.b.and_(a, c),
    O.OrI: lambda ctx, a, c: ctx.b.or_(a, c),
    O.XOrI: lambda ctx, a, c: ctx.b.xor(a, c),
    O.MulhiUI: _mulhi,
}


_INT_WEIGHT = {O.DivSI: 8, O.DivUI: 8, O.RemSI: 8, O.RemUI: 8}


@RULES.register(*_INT_BINARY)
def lower_int_binary(ctx: LoweringContext, op: O.Op) -> None:
    f = _INT_BINARY[type(op)]
    lift(ctx, op, lambda a, c: f(ctx, a, c), weight=_INT_WEIGHT.get(type(op), 1))


# ---- float ---------------------------------------------------------------------------------------------------------


def _fbin(name: str) -> Callable[[LoweringContext, ir.Value, ir.Value], ir.Value]:
    def f(ctx: LoweringContext, a: ir.Value, c: ir.Value) -> ir.Value:
        return getattr(ctx.b, name)(a, c, flags=ctx.fastmath)

    return f


def _num_select(ctx: LoweringContext, rel: str, a: ir.Value, c: ir.Value) -> ir.Value:
    """maxnum/minnum (a NaN operand yields the other) as compares and selects, not LLVM's intrinsic: a scalar
    `llvm.minnum`/`maxnum` carried around a loop is an FMinNum/FMaxNum recurrence, which LLVM 22's loop vectorizer
    (llvmlite 0.50) vectorizes with a NaN early exit that drops the remainder iterations (a min over 16 rows lost
    rows 13-15, fuzz seed 312 kernel 1202) or aborts the process ("VPlan cost model and legacy cost model
    disagreed"). As selects the loop is left scalar; elementwise code still vectorizes (compare + blend)."""
    b = ctx.b
    pick = b.select(b.fcmp_ordered(rel, a, c), a, c)
    return b.select(b.fcmp_unordered("uno", c, c), a, pick)


_FLOAT_BINARY: dict[type, Callable[[LoweringContext, ir.Value, ir.Value], ir.Value]] = {
    O.AddF: _fbin("fadd"),
    O.SubF: _fbin("fsub"),
    O.MulF: _fbin("fmul"),
    O.DivF: _fbin("fdiv"),
    O.RemF: lambda ctx, a, c: ctx.b.frem(a, c),
    O.PreciseDivF: lambda ctx, a, c: ctx.b.fdiv(a, c),
    O.ApproxDivF: lambda ctx, a, c: ctx.b.fdiv(a, c),
    O.MaxNumF: lambda ctx, a, c: _num_select(ctx, ">", a, c),
    O.MinNumF: lambda ctx, a, c: _num_select(ctx, "<", a, c),
    O.MaximumF: lambda ctx, a, c: call_intrinsic(ctx, "llvm.maximum", [a, c]),
    O.MinimumF: lambda ctx, a, c: call_intrinsic(ctx, "llvm.minimum", [a, c]),
    O.PowF: lambda ctx, a, c: call_intrinsic(ctx, "llvm.pow", [a, c]),
    O.CopySign: lambda ctx, a, c: call_intrinsic(ctx, "llvm.copysign", [a, c]),
    O.Atan2: lambda ctx, a, c: call_libm(ctx, "atan2", [a, c]),
}


@RULES.register(*_FLOAT_BINARY)
def lower_float_binary(ctx: LoweringContext, op: O.Op) -> None:
    f = _FLOAT_BINARY[type(op)]
    lift(ctx, op, lambda a, c: f(ctx, a, c))


def _intr(name: str) -> Callable[[LoweringContext, ir.Value], ir.Value]:
    return lambda ctx, a: call_intrinsic(ctx, name, [a])


def _libm(name: str) -> Callable[[LoweringContext, ir.Value], ir.Value]:
    return lambda ctx, a: call_libm(ctx, name, [a])


def _rsqrt(ctx: LoweringContext, a: ir.Value) -> ir.Value:
    return ctx.b.fdiv(ir.Constant(a.type, 1.0), call_intrinsic(ctx, "llvm.sqrt", [a]))


#: unary float ops computed by the C math library, one scalar call per element
_LIBM_UNARY: dict[type, str] = {
    cls: cls.function
    for cls in (
        O.Tan,
        O.Asin,
        O.Acos,
        O.Atan,
        O.Sinh,
        O.Cosh,
        O.Asinh,
        O.Acosh,
        O.Atanh,
        O.Erfc,
        O.Expm1,
        O.Log1p,
        O.Cbrt,
    )
}


def _inline_f32(fn32: Callable[[LoweringContext, ir.Value], ir.Value], f64: Scalar) -> Scalar:
    """`fn32` (vmath_more.py, straight-line IR the loop vectorizer takes) for f32/f16/bf16; `f64` for doubles."""
    return lambda ctx, a: f64(ctx, a) if a.type == F64 else vmath.via_f32(ctx, a, fn32)


#: unary float ops computed inline in f32 (vmath_more.py) and by libm in f64
_INLINE_UNARY: dict[type, Scalar] = {
    O.Tanh: _inline_f32(vmath_more.tanh_f32, _libm("tanh")),
    O.Erf: _inline_f32(vmath_more.erf_f32, _libm("erf")),
    O.Log: _inline_f32(vmath_more.log_f32, _intr("llvm.log")),
    O.Log2: _inline_f32(vmath_more.log2_f32, _intr("llvm.log2")),
    O.Log10: _inline_f32(vmath_more.log10_f32, _intr("llvm.log10")),
}

_FLOAT_UNARY: dict[type, Callable[[LoweringContext, ir.Value], ir.Value]] = {
    O.NegF: lambda ctx, a: ctx.b.fneg(a),
    O.Exp: vmath.exp,
    O.Exp2: vmath.exp2,
    **_INLINE_UNARY,
    O.Sin: _intr("llvm.sin"),
    O.Cos: _intr("llvm.cos"),
    O.Sqrt: _intr("llvm.sqrt"),
    O.PreciseSqrt: _intr("llvm.sqrt"),
    O.AbsF: _intr("llvm.fabs"),
    O.Floor: _intr("llvm.floor"),
    O.Ceil: _intr("llvm.ceil"),
    O.Trunc: _intr("llvm.trunc"),
    O.Round: _intr("llvm.round"),
    O.RoundEven: _intr("llvm.roundeven"),
    O.Rsqrt: _rsqrt,
    **{cls: _libm(name) for cls, name in _LIBM_UNARY.items()},
}

#: the inline exp/exp2 (vmath.py) is ~20 vector instructions per element
_EXP_WEIGHT = 16
#: the other inline functions (vmath_more.py) are 25-45 instructions; a scalar libm call per element (LLVM lowers
#: llvm.sin/cos on vectors to one call per lane as well) costs more still
_LIBM_WEIGHT = 24
#: costs of the unary ops that are more than an instruction, for the tile model's store-or-recompute decision: a
#: tile of them used twice (softmax's exp feeds a sum and a division) is then stored once, not computed twice
_UNARY_WEIGHT: dict[type, int] = {
    O.Exp: _EXP_WEIGHT,
    O.Exp2: _EXP_WEIGHT,
    **dict.fromkeys((*_INLINE_UNARY, O.Sin, O.Cos), _LIBM_WEIGHT),
    **dict.fromkeys(_LIBM_UNARY, _LIBM_WEIGHT),
}


@RULES.register(*_FLOAT_UNARY)
def lower_float_unary(ctx: LoweringContext, op: O.Op) -> None:
    fmt = fp8_format(op.result.type)
    if isinstance(op, O.AbsF) and fmt is not None:
        lift(ctx, op, lambda a: _fp8_abs(ctx, a, fmt.fnuz))
        return
    f = _FLOAT_UNARY[type(op)]
    lift(ctx, op, lambda a: f(ctx, a), weight=_UNARY_WEIGHT.get(type(op), 1))


def _fp8_abs(ctx: LoweringContext, a: ir.Value, fnuz: bool) -> ir.Value:
    """fp8 values travel as i8 bit patterns: |x| clears the sign bit, except that a NaN-only-at-0x80 (fnuz) format
    keeps its NaN."""
    b = ctx.b
    cleared = b.and_(a, ir.Constant(a.type, 0x7F))
    if not fnuz:
        return cleared
    return b.select(b.icmp_unsigned("==", a, ir.Constant(a.type, 0x80)), a, cleared)


_INT_UNARY: dict[type, Callable[[LoweringContext, ir.Value], ir.Value]] = {
    O.AbsI: lambda ctx, a: call_intrinsic(ctx, "llvm.abs", [a, ir.Constant(ir.IntType(1), 0)]),
    O.CountLeadingZeros: lambda ctx, a: call_intrinsic(ctx, "llvm.ctlz", [a, ir.Constant(ir.IntType(1), 0)]),
    O.CountTrailingZeros: lambda ctx, a: call_intrinsic(ctx, "llvm.cttz", [a, ir.Constant(ir.IntType(1), 0)]),
    O.CtPop: _intr("llvm.ctpop"),
}


@RULES.register(*_INT_UNARY)
def lower_int_unary(ctx: LoweringContext, op: O.Op) -> None:
    f = _INT_UNARY[type(op)]
    lift(ctx, op, lambda a: f(ctx, a))


@RULES.register(O.Fma)
def lower_fma(ctx: LoweringContext, op: O.Op) -> None:
    """f32/f64 only: an f16/bf16 fma arrives expanded by the shared narrow-fma pass (one rounding; a wider fma
    narrowed would round twice)."""
    if llvm_type(op.result.type) in (F16, BF16):
        raise UnsupportedError("cpu_ref", f"math.fma on {op.result.type.element} not legalized by narrow-fma", op.loc)
    lift(ctx, op, lambda a, c, d: call_intrinsic(ctx, "llvm.fma", [a, c, d]))


# ---- comparisons and select ----------------------------------------------------------------------------------------


@RULES.register(O.CmpI)
def lower_cmpi(ctx: LoweringContext, op: O.CmpI) -> None:
    p = op.predicate
    cmp = ctx.b.icmp_signed if p.signed else ctx.b.icmp_unsigned
    lift(ctx, op, lambda a, c: cmp(p.relation, a, c))


FCMP = {
    CmpFPredicate.OEQ: (True, "=="),
    CmpFPredicate.OGT: (True, ">"),
    CmpFPredicate.OGE: (True, ">="),
    CmpFPredicate.OLT: (True, "<"),
    CmpFPredicate.OLE: (True, "<="),
    CmpFPredicate.ONE: (True, "!="),
    CmpFPredicate.ORD: (True, "ord"),
    CmpFPredicate.UEQ: (False, "=="),
    CmpFPredicate.UGT: (False, ">"),
    CmpFPredicate.UGE: (False, ">="),
    CmpFPredicate.ULT: (False, "<"),
    CmpFPredicate.ULE: (False, "<="),
    CmpFPredicate.UNE: (False, "!="),
    CmpFPredicate.UNO: (False, "uno"),
}


@RULES.register(O.CmpF)
def lower_cmpf(ctx: LoweringContext, op: O.CmpF) -> None:
    p = op.predicate
    if p in (CmpFPredicate.FALSE, CmpFPredicate.TRUE):
        value = ir.Constant(ir.IntType(1), int(p is CmpFPredicate.TRUE))
        lift(ctx, op, lambda a, c: value)
        return
    ordered, pred = FCMP[p]
    cmp = ctx.b.fcmp_ordered if ordered else ctx.b.fcmp_unordered
    if llvm_type(op.lhs.type) == BF16:
        # compared as f32 (exact; -0 == +0 and NaN kept): an fcmp on bfloat whose operand InstCombine folds to a
        # constant built from bits (a masked load's `other`) aborted llvmlite's LLVM in ConstantInt::get
        # (fuzz seed 305 kernel 826)
        lift(ctx, op, lambda a, c: cmp(pred, widen(ctx.b, a, F32), widen(ctx.b, c, F32)))
        return
    lift(ctx, op, lambda a, c: cmp(pred, a, c))


@RULES.register(O.Select)
def lower_select(ctx: LoweringContext, op: O.Select) -> None:
    lift(ctx, op, lambda c, a, d: ctx.b.select(c, a, d))


@RULES.register(O.ClampF)
def lower_clampf(ctx: LoweringContext, op: O.ClampF) -> None:
    nan = op.propagate_nan == PropagateNan.ALL
    mx, mn = ("llvm.maximum", "llvm.minimum") if nan else ("llvm.maxnum", "llvm.minnum")
    lift(ctx, op, lambda x, lo, hi: call_intrinsic(ctx, mn, [call_intrinsic(ctx, mx, [x, lo]), hi]))


# ---- casts ---------------------------------------------------------------------------------------------------------


def _int_resize(ctx: LoweringContext, a: ir.Value, to: ir.Type, signed: bool) -> ir.Value:
    if a.type.width == to.width:
        return a
    if a.type.width > to.width:
        return ctx.b.trunc(a, to)
    return ctx.b.sext(a, to) if signed else ctx.b.zext(a, to)


def _float_resize(ctx: LoweringContext, a: ir.Value, to: ir.Type) -> ir.Value:
    if a.type == to:
        return a
    if bit_width(a.type) < bit_width(to) or (a.type == BF16 and to == F16) or (a.type == F16 and to == BF16):
        if bit_width(a.type) == bit_width(to):
            return narrow(ctx.b, widen(ctx.b, a, F32), to)
        return widen(ctx.b, a, to)
    if a.type == F64 and to in (F16, BF16):
        return narrow(ctx.b, _f64_to_f32_round_to_odd(ctx, a), to)
    return narrow(ctx.b, a, to)


def _f64_to_f32_round_to_odd(ctx: LoweringContext, a: ir.Value) -> ir.Value:
    """f64 → f32 rounded to odd, after which f32 → f16/bf16 rounds exactly as f64 → f16/bf16 would (f32 keeps
    more than two extra bits). Done inline because LLVM would call compiler-rt's `__truncdfhf2`, absent here."""
    b = ctx.b
    r = b.fptrunc(a, F32)
    back = b.fpext(r, F64)
    fabs = lambda v: call_intrinsic(ctx, "llvm.fabs", [v])
    bits = b.bitcast(r, I32)
    toward_zero = b.select(b.fcmp_ordered(">", fabs(back), fabs(a)), b.sub(bits, ir.Constant(I32, 1)), bits)
    inexact = b.fcmp_ordered("!=", back, a)
    odd = b.select(inexact, b.or_(toward_zero, ir.Constant(I32, 1)), toward_zero)
    return b.bitcast(odd, F32)


def _fp_to_int(ctx: LoweringContext, a: ir.Value, to: ir.Type, signed: bool) -> ir.Value:
    """Saturating, NaN → 0 (LLVM's saturating intrinsic): libdevice's `__nv_float2int_rz` family (extern.py).
    `arith.fptosi/fptoui` are legalized in SDK IR instead and arrive in range."""
    name = "llvm.fptosi.sat" if signed else "llvm.fptoui.sat"
    suffix = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64"}[a.type]
    fn = ctx.intrinsic(f"{name}.i{to.width}.{suffix}", to, [a.type])
    return ctx.b.call(fn, [a])


def _uint_to_float(b: ir.IRBuilder, a: ir.Value, to: ir.Type) -> ir.Value:
    """`uitofp` without LLVM's `uitofp i64`: LLVM 22's SLP vectorizer narrows `uitofp (sext i32 x to i64)` to
    `uitofp i32 x`, which is wrong for negative x (fuzz seed 316 kernel 647: `(rm - 1).to(tl.uint64) / 3` gave
    (2^32-1)/3 for row 0). Narrower values are widened with zeros and converted as signed (exact, one rounding);
    a u64 with its top bit clear converts as signed, one with it set is halved (the lost bit kept as a sticky bit,
    so the rounding stays one correct rounding: f64 has fewer than 63 significant bits) and doubled back."""
    i64 = ir.IntType(64)
    if a.type.width < 64:
        return b.sitofp(b.zext(a, i64), to)
    zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
    big = b.sitofp(b.or_(b.lshr(a, one), b.and_(a, one)), to)
    return b.select(b.icmp_signed("<", a, zero), b.fadd(big, big), b.sitofp(a, to))


def _int_to_half(ctx: LoweringContext, a: ir.Value, to: ir.Type, signed: bool) -> ir.Value:
    """An integer to f16/bf16 through a float that holds it exactly (f32 up to 24 bits, else f64: an i64's rounding
    to f64 then to 16 bits is still one rounding, 53 >= 2 * 11 + 2) and one rounding: LLVM's own `sitofp i16 to
    bfloat` aborted llvmlite's LLVM in SelectionDAG on x86 (fuzz seed 311 kernel 509)."""
    b = ctx.b
    wide = F32 if a.type.width <= 24 else F64
    v = b.sitofp(a, wide) if signed else _uint_to_float(b, a, wide)
    return _float_resize(ctx, v, to)


def _bitcast(ctx: LoweringContext, a: ir.Value, to: ir.Type) -> ir.Value:
    """Between bfloat and half through i16: InstCombine's folds of a direct bitcast between the two aborted
    llvmlite's LLVM in ConstantInt::get (fuzz seed 305 kernel 826)."""
    if a.type == to:
        return a
    if {a.type, to} == {BF16, F16}:
        return ctx.b.bitcast(ctx.b.bitcast(a, ir.IntType(16)), to)
    return ctx.b.bitcast(a, to)


def _cast_fn(ctx: LoweringContext, op: O.Op) -> Callable[[ir.Value], ir.Value]:
    to = llvm_type(op.result.type)
    b = ctx.b
    cls = type(op)
    if cls is O.ExtSI or cls is O.IndexCast:
        return lambda a: _int_resize(ctx, a, to, True)
    if cls in (O.ExtUI, O.TruncI, O.IndexCastUI):
        return lambda a: _int_resize(ctx, a, to, False)
    if cls in (O.ExtF, O.TruncF):
        return lambda a: _float_resize(ctx, a, to)
    if cls in (O.SIToFP, O.UIToFP):
        signed = cls is O.SIToFP
        if to in (F16, BF16):
            return lambda a: _int_to_half(ctx, a, to, signed)
        return lambda a: b.sitofp(a, to) if signed else _uint_to_float(b, a, to)
    if cls is O.FPToSI:
        return lambda a: b.fptosi(a, to)
    if cls is O.FPToUI:
        return lambda a: b.fptoui(a, to)
    if cls in (O.ArithBitcast, O.TTBitcast):
        return lambda a: _bitcast(ctx, a, to)
    if cls is O.IntToPtr:
        return lambda a: b.inttoptr(a, to)
    if cls is O.PtrToInt:
        return lambda a: b.ptrtoint(a, to)
    raise UnsupportedError("cpu_ref", f"cast {op.op_name}", op.loc)


@RULES.register(O.CastOp)
def lower_cast(ctx: LoweringContext, op: O.Op) -> None:
    lift(ctx, op, _cast_fn(ctx, op))
