"""`tt.dot_scaled` → upcast, scale, `tt.dot`: microscaling (MX) matmul for every backend.

c = (a · 2^(sa-127)) @ (b · 2^(sb-127)) + acc. Each operand is e2m1 (two fp4 values per byte, the low nibble first,
packed along K, or along M/N when `lhs_k_pack`/`rhs_k_pack` is false), e4m3, e5m2 (fp8), bf16 or fp16. A scale is
one e8m0 byte per 16 or 32 elements along K (`sa` is [..., M, K/f], `sb` is [..., N, K/f]; Triton deduces f from
the shapes), or an fp8 value (nvfp4's e4m3 scales). Like Triton's own decomposition for GPUs without MX instructions
(DecomposeScaledBlocked): the operand is upcast, multiplied by its scale broadcast along K, an e8m0 byte of 255 gives
NaN unless `fastMath`, and a scale byte of 0 gives 0 (the byte is placed in a float's exponent field). The upcast
values are computed in f32, where they are exact (fp4/fp8 significands have at most 3 bits, times a power of two
inside f32's range), then `tt.dot` multiplies them; Triton's GPU path computes them in bf16/fp16 instead, which gives
the same values except where fp16's narrower range overflows or rounds.

On a device with f64 (`accumulate_f64`, from the descriptor) the dot accumulates in f64 and rounds once to f32: every
product of two upcast values is exact (at most 11 + 11 significant bits), so the sum is exact to 2^-53 of the sum of
|products| and the result is the correctly rounded one, in any order on any backend. An f32 accumulation is not: the
scales reach 2^15, so a row's partial sums reach 10^5-10^8 while results cancel to ~1, and one f32 ulp of a partial
sum (0.03-32 there) is worth several bf16 ulps of the result — upstream test_scaled_dot saw 1-element failures from
it on both sides of the comparison (tools/check_upstream_reference.py). Without f64 the dot accumulates in f32.

Everything is built from ops both backends already render: integer bit ops, casts, `tt.fp_to_fp`, join/trans/
reshape/expand_dims/broadcast and `tt.dot`.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import ops as O
from ..ir.attrs import BoolAttr, IntegerAttr, StringAttr
from ..ir.core import Module, Op, Value
from ..ir.enums import CmpIPredicate, EnumAttr, InputPrecision
from ..ir.types import FloatKind, FloatType, IntType, TensorType, f32, f64, i32
from ..pipeline import IRPass, PassContext
from .build import Builder, replace

#: operand formats whose values are float types (an i8/i16 operand of these is bitcast to them first)
_FLOATS = {
    "e4m3": FloatType(FloatKind.F8E4M3FN),
    "e5m2": FloatType(FloatKind.F8E5M2),
    "bf16": FloatType(FloatKind.BF16),
    "fp16": FloatType(FloatKind.F16),
}
_FORMATS = ("e2m1", *_FLOATS)
_F32_NAN_BITS = 0x7FC00000
#: 2^-1 as f32 bits: the e2m1 subnormal 0b001; also 126 << 23, the exponent bias difference (127 - 1) in place
_HALF_BITS = 0x3F000000


def _flag(op: Op, name: str, default: bool) -> bool:
    a = op.attrs.get(name)
    if isinstance(a, (BoolAttr, IntegerAttr)):
        return bool(a.value)
    return default


def _format(op: Op, name: str) -> str:
    a = op.attrs.get(name)
    kind = a.value if isinstance(a, StringAttr) else ""
    if kind not in _FORMATS:
        raise UnsupportedError("sdk", f"tt.dot_scaled operand format {kind!r} (known: {', '.join(_FORMATS)})", op.loc)
    return kind


def _packed_axis(rank: int, kind: str, k_pack: bool, lhs: bool) -> int | None:
    """The axis two fp4 values share a byte along (None: one value per element): K, or M/N when not `k_pack`."""
    if kind != "e2m1":
        return None
    return (rank - 1 if lhs else rank - 2) if k_pack else (rank - 2 if lhs else rank - 1)


def _unpacked(shape: tuple[int, ...], kind: str, k_pack: bool, lhs: bool) -> tuple[int, ...]:
    out = list(shape)
    axis = _packed_axis(len(shape), kind, k_pack, lhs)
    if axis is not None:
        out[axis] *= 2
    return tuple(out)


class _Side:
    """One operand of the dot: its value, format, packing and where K lies (last axis for a, second-to-last for b)."""

    def __init__(self, op: Op, value: Value, kind: str, k_pack: bool, lhs: bool) -> None:
        if kind != "e2m1" and not k_pack:
            raise UnsupportedError("sdk", f"tt.dot_scaled {kind} operand packed along M/N (only e2m1 is)", op.loc)
        self.value, self.kind, self.lhs = value, kind, lhs
        self.rank = len(value.type.shape)
        self.k_axis = self.rank - 1 if lhs else self.rank - 2
        self.packed_axis = _packed_axis(self.rank, kind, k_pack, lhs)
        self.shape = _unpacked(value.type.shape, kind, k_pack, lhs)


def _fp4_to_f32(bld: Builder, nib: Value) -> Value:
    """e2m1 codes (sign, 2 exponent bits of bias 1, 1 mantissa bit) in the low 4 bits of i32 → f32, in integer ops:
    a normal magnitude's 3 bits, shifted into f32's exponent/mantissa fields and rebiased by 126; 0b001 is 0.5."""
    mag = bld.binary(O.AndI, nib, 7)
    normal = bld.binary(O.AddI, bld.binary(O.ShLI, mag, 22), _HALF_BITS)
    sub = bld.binary(O.MulI, mag, _HALF_BITS)  # mag is 0 or 1 here
    bits = bld.select(bld.cmpi(CmpIPredicate.ULT, mag, 2), sub, normal)
    sign = bld.binary(O.ShLI, bld.binary(O.AndI, nib, 8), 28)
    return bld.cast(O.TTBitcast, bld.binary(O.OrI, bits, sign), f32)


def _unpack_fp4(bld: Builder, side: _Side) -> Value:
    """The packed bytes as an f32 tensor of the unpacked shape: element 2i is the low nibble of byte i."""
    byte = bld.cast(O.ExtUI, side.value, i32)
    lo = _fp4_to_f32(bld, byte)
    hi = _fp4_to_f32(bld, bld.binary(O.ShRUI, byte, 4))
    joined = bld.join(lo, hi)  # [..., A, B, 2]
    r = side.rank
    if side.packed_axis == r - 2:
        joined = bld.trans(joined, [*range(r - 1), r, r - 1])  # [..., A, 2, B]
    return bld.reshape(joined, side.shape)


def _upcast(bld: Builder, side: _Side) -> Value:
    v = side.value
    if side.kind == "e2m1":
        if v.type.element != IntType(8):
            raise UnsupportedError("sdk", f"tt.dot_scaled e2m1 operand of {v.type.element} (packed i8 expected)")
        return _unpack_fp4(bld, side)
    ft = _FLOATS[side.kind]
    if isinstance(v.type.element, IntType):
        v = bld.cast(O.TTBitcast, v, ft)
    if v.type.element != ft:
        raise UnsupportedError("sdk", f"tt.dot_scaled {side.kind} operand of {v.type.element}")
    return bld.cast(O.FpToFp if ft.width == 8 else O.ExtF, v, f32)


def _scale_f32(bld: Builder, scale: Value, nan_check: bool) -> Value:
    """Scale values as f32: e8m0 bytes through the exponent field (0 → 0.0, 255 → NaN unless fastMath); fp8
    scales (nvfp4's e4m3) are converted."""
    elem = scale.type.element
    if isinstance(elem, FloatType):
        return bld.cast(O.FpToFp if elem.width == 8 else O.ExtF, scale, f32) if elem != f32 else scale
    s = bld.cast(O.ExtUI, scale, i32)
    value = bld.cast(O.TTBitcast, bld.binary(O.ShLI, s, 23), f32)
    if not nan_check:
        return value
    nan = bld.const_like(float("nan"), value)
    return bld.select(bld.cmpi(CmpIPredicate.EQ, s, 255), nan, value)


def _broadcast_scale(bld: Builder, scale: Value, side: _Side) -> Value:
    """[..., R, K/f] → the operand's shape ([..., M, K] for a, [..., K, N] for b), each scale repeated f times."""
    r = side.rank
    if not side.lhs:
        scale = bld.trans(scale, [*range(r - 2), r - 1, r - 2])  # [..., K/f, N]
    shape = list(scale.type.shape)
    target = list(side.shape)
    factor = target[side.k_axis] // shape[side.k_axis]
    e = bld.expand_dims(scale, side.k_axis + 1)
    wide = list(e.type.shape)
    wide[side.k_axis + 1] = factor
    return bld.reshape(bld.broadcast(e, wide), target)


def _operand(bld: Builder, side: _Side, scale: Value | None, nan_check: bool) -> Value:
    x = _upcast(bld, side)
    if scale is None:
        return x
    return bld.binary(O.MulF, x, _broadcast_scale(bld, _scale_f32(bld, scale, nan_check), side))


def decompose(op: Op, accumulate_f64: bool = False) -> None:
    """Rewrite one `tt.dot_scaled` in place (`accumulate_f64`: module docstring)."""
    kinds = (_format(op, "a_elem_type"), _format(op, "b_elem_type"))
    packs = (_flag(op, "lhs_k_pack", True), _flag(op, "rhs_k_pack", True))
    a, sa, b, sb, acc = op.a, op.a_scale, op.b, op.b_scale, op.c
    res_t = op.result.type
    if len(res_t.shape) not in (2, 3) or not isinstance(res_t.element, FloatType):
        raise UnsupportedError("sdk", f"tt.dot_scaled -> {res_t} (2-D or batched 3-D float results)", op.loc)
    nan_check = not _flag(op, "fastMath", False)
    bld = Builder(op)
    lhs = _operand(bld, _Side(op, a, kinds[0], packs[0], True), sa, nan_check)
    rhs = _operand(bld, _Side(op, b, kinds[1], packs[1], False), sb, nan_check)
    acc_t = f64 if accumulate_f64 else f32
    if accumulate_f64:
        lhs, rhs = bld.cast(O.ExtF, lhs, f64), bld.cast(O.ExtF, rhs, f64)
    wide = acc if acc.type.element == acc_t else bld.cast(O.ExtF, acc, acc_t)
    out = bld.make(
        O.Dot, [lhs, rhs, wide], TensorType(res_t.shape, acc_t), inputPrecision=EnumAttr(InputPrecision.IEEE)
    )
    if accumulate_f64:
        out = bld.cast(O.TruncF, out, f32)
    if res_t.element != f32:
        out = bld.cast(O.TruncF, out, res_t.element)
    replace(op, [out])


class DecomposeDotScaled(IRPass):
    name = "decompose-dot-scaled"

    def __init__(self, accumulate_f64: bool = False) -> None:
        self.accumulate_f64 = accumulate_f64

    def run(self, module: Module, ctx: PassContext) -> None:
        for op in list(module.walk()):
            if isinstance(op, O.DotScaled):
                decompose(op, self.accumulate_f64)
