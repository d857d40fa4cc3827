"""`tt.dot_scaled`: c = (a · 2^(sa-127)) @ (b · 2^(sb-127)) + acc with microscaling (MX) operands.

Each operand is e2m1 (two fp4 values per byte, the low nibble first, packed along K), e4m3, e5m2 (fp8 bit patterns),
bf16 or fp16; a scale is one e8m0 byte per 32 elements along K (`sa` is M × K/32, `sb` is N × K/32), 255 meaning NaN.
Like the CUDA path on GPUs without native MX instructions, the operands are upcast and scaled elementwise first
(scale bits shifted into a float's exponent, so a scale byte of 0 gives 0), then multiplied with fp32 accumulation by
the `tt.dot` kernel. Upcast values are exact in fp32 (fp4/fp8 significands are at most 4 bits).
"""

from __future__ import annotations

from llvmlite import ir
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import ops as O
from triton_backend_sdk.ir import types as T
from triton_backend_sdk.ir.core import Value

from .context import LoweringContext, Tile
from .convert import fp8_to_float
from .dot import _loop_nest, _microkernel, _microkernel_plan
from .rules import RULES
from .types import F32, FP8_FORMATS, I8, I32, llvm_type

_FP8 = {"e4m3": FP8_FORMATS[T.FloatKind.F8E4M3FN], "e5m2": FP8_FORMATS[T.FloatKind.F8E5M2]}
_KINDS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")


def _c32(x: int) -> ir.Constant:
    return ir.Constant(I32, x)


def _as_i8(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    return v if v.type == I8 else b.bitcast(v, I8)


def _fp4_to_float(b: ir.IRBuilder, nib: ir.Value) -> ir.Value:
    """e2m1 (sign, 2 exponent bits with bias 1, 1 mantissa bit) in the low 4 bits of an i32 → f32."""
    e = b.and_(b.lshr(nib, _c32(1)), _c32(3))
    m = b.and_(nib, _c32(1))
    normal = b.or_(b.shl(b.add(e, _c32(126)), _c32(23)), b.shl(m, _c32(22)))
    sub = b.select(b.icmp_unsigned("!=", m, _c32(0)), _c32(0x3F000000), _c32(0))  # 0.5 or 0
    mag = b.select(b.icmp_unsigned("==", e, _c32(0)), sub, normal)
    return b.bitcast(b.or_(mag, b.shl(b.and_(nib, _c32(8)), _c32(28))), F32)


def _scale(b: ir.IRBuilder, s: ir.Value) -> ir.Value:
    """e8m0 byte → f32 2^(s-127) by placing it in the exponent field (0 → 0.0); 255 → NaN."""
    sv = b.zext(_as_i8(b, s), I32)
    bits = b.select(b.icmp_unsigned("==", sv, _c32(255)), _c32(0x7FC00000), b.shl(sv, _c32(23)))
    return b.bitcast(bits, F32)


def _operand(ctx: LoweringContext, v: Value, kind: str, scale: Value | None, lhs: bool, m_or_n: int, k_: int) -> Tile:
    """The upcast, scaled operand as an f32 tile of shape (M, K) for the lhs or (K, N) for the rhs."""
    t = ctx.tile(v)
    st = ctx.tile(scale) if scale is not None else None
    shape = (m_or_n, k_) if lhs else (k_, m_or_n)
    c64 = lambda x: ir.Constant(ir.IntType(64), x)

    def gen(b: ir.IRBuilder, idx: list[ir.Value]) -> ir.Value:
        row, k = (idx[0], idx[1]) if lhs else (idx[1], idx[0])
        if kind == "e2m1":
            half = b.lshr(k, c64(1))
            byte = t.element(b, [row, half] if lhs else [half, row])
            shift = b.trunc(b.shl(b.and_(k, c64(1)), c64(2)), I32)
            x = _fp4_to_float(b, b.and_(b.lshr(b.zext(_as_i8(b, byte), I32), shift), _c32(15)))
        elif kind in _FP8:
            x = fp8_to_float(ctx, _as_i8(b, t.element(b, idx)), _FP8[kind], F32)
        else:
            x = b.fpext(t.element(b, idx), F32)
        if st is None:
            return x
        return b.fmul(x, _scale(b, st.element(b, [row, b.lshr(k, c64(5))])))

    return ctx.materialize(Tile(shape, F32, gen=gen, cost=t.cost + 8))


def _k_of(kind: str, packed: int) -> int:
    return packed * (2 if kind == "e2m1" else 1)


def _split(op: O.DotScaled, kinds: list[str]) -> tuple[Value, Value | None, Value, Value | None, Value]:
    """(a, a_scale, b, b_scale, acc): the printed form lists a scale only where there is one; with one scale, the
    shapes tell which (a scale is M × K/32 or N × K/32, b is K × N or K/2 × N, never both with K ≥ 32)."""
    ops = list(op.operands)
    if len(ops) == 5:
        return ops[0], ops[1], ops[2], ops[3], ops[4]
    if len(ops) == 3:
        return ops[0], None, ops[1], None, ops[2]
    a, x, y, acc = ops
    m_, n_ = acc.type.shape[-2:]
    k_ = _k_of(kinds[0], a.type.shape[-1])
    b_shape = (k_ // (2 if kinds[1] == "e2m1" else 1), n_)
    if x.type.shape == (m_, k_ // 32) and y.type.shape == b_shape:
        return a, x, y, None, acc
    if x.type.shape == b_shape and y.type.shape == (n_, k_ // 32):
        return a, None, x, y, acc
    raise UnsupportedError("cpu_ref", "tt.dot_scaled whose scale operand cannot be told from the shapes", op.loc)


@RULES.register(O.DotScaled)
def lower_dot_scaled(ctx: LoweringContext, op: O.DotScaled) -> None:
    kinds = [op.attrs[n].value if n in op.attrs else "" for n in ("a_elem_type", "b_elem_type")]
    a, sa, b_, sb, acc = _split(op, kinds)
    res = op.result
    shape = res.type.shape
    if len(shape) != 2 or llvm_type(res.type) != F32 or any(k not in _KINDS for k in kinds):
        raise UnsupportedError("cpu_ref", f"tt.dot_scaled {kinds[0]} x {kinds[1]} -> {res.type}", op.loc)
    m_, n_ = shape
    k_ = _k_of(kinds[0], a.type.shape[-1])
    a_t = _operand(ctx, a, kinds[0], sa, True, m_, k_)
    b_t = _operand(ctx, b_, kinds[1], sb, False, n_, k_)
    out = ctx.materialize(ctx.tile(acc))
    plan = _microkernel_plan(ctx, F32, m_, n_)
    if plan is not None:
        _microkernel(ctx, a_t, b_t, out, [], F32, plan)
    else:
        _loop_nest(ctx, a_t, b_t, out, [], F32)
    ctx.define(res, out)
