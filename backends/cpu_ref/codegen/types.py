"""SDK IR types → LLVM types (llvmlite.ir), plus the bfloat type llvmlite does not ship."""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir
from llvmlite.ir.types import _BaseFloatType
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import types as T
from triton_backend_sdk.numerics import bf16_bits


class BFloatType(_BaseFloatType):
    """LLVM's `bfloat`; constants are spelled `0xRXXXX` (the top 16 bits of the float32, rounded to nearest even)."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def format_constant(self, value: float) -> str:
        return f"0xR{float_to_bf16_bits(value):04X}"


BFloatType._create_instance()


def float_to_bf16_bits(value: float) -> int:
    return bf16_bits(value)


I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F16, BF16, F32, F64 = ir.HalfType(), BFloatType(), ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()

_FLOATS = {T.FloatKind.F16: F16, T.FloatKind.BF16: BF16, T.FloatKind.F32: F32, T.FloatKind.F64: F64}


@dataclass(frozen=True)
class Fp8Format:
    """An 8-bit float format: LLVM has no type for it, so values travel as their i8 bit pattern."""

    ebits: int
    mbits: int
    bias: int
    #: IEEE-like: exponent all ones is inf (mantissa 0) or NaN
    ieee: bool
    #: "fnuz": 0x80 is the only NaN, no negative zero, no inf
    fnuz: bool

    def decode(self, byte: int) -> float:
        sign = -1.0 if byte & 0x80 else 1.0
        e = (byte >> self.mbits) & ((1 << self.ebits) - 1)
        m = byte & ((1 << self.mbits) - 1)
        if self.fnuz and byte == 0x80:
            return math.nan
        if self.ieee and e == (1 << self.ebits) - 1:
            return sign * math.inf if m == 0 else math.nan
        if not self.ieee and not self.fnuz and e == (1 << self.ebits) - 1 and m == (1 << self.mbits) - 1:
            return math.nan
        if e == 0:
            return sign * m * 2.0 ** (1 - self.bias - self.mbits)
        return sign * (1 + m / (1 << self.mbits)) * 2.0 ** (e - self.bias)

    @property
    def max_finite(self) -> float:
        return max(
            self.decode(b) for b in range(0x80) if not math.isnan(self.decode(b)) and not math.isinf(self.decode(b))
        )

    @property
    def nan_bits(self) -> int:
        return 0x80 if self.fnuz else 0x7F

    def encode(self, value: float) -> int:
        """Round to nearest even, saturating to the largest finite value (as PTX's cvt .satfinite does)."""
        if math.isnan(value):
            return self.nan_bits
        mag = abs(value)
        code = min(
            (b for b in range(0x80) if math.isfinite(self.decode(b))), key=lambda b: (abs(self.decode(b) - mag), b & 1)
        )
        negative = math.copysign(1.0, value) < 0
        return code | 0x80 if negative and not (self.fnuz and code == 0) else code


FP8_FORMATS = {
    T.FloatKind.F8E4M3FN: Fp8Format(4, 3, 7, ieee=False, fnuz=False),
    T.FloatKind.F8E5M2: Fp8Format(5, 2, 15, ieee=True, fnuz=False),
    T.FloatKind.F8E4M3FNUZ: Fp8Format(4, 3, 8, ieee=False, fnuz=True),
    T.FloatKind.F8E5M2FNUZ: Fp8Format(5, 2, 16, ieee=False, fnuz=True),
    T.FloatKind.F8E4M3B11FNUZ: Fp8Format(4, 3, 11, ieee=False, fnuz=True),
}


def fp8_format(t: T.Type) -> Fp8Format | None:
    """The fp8 format of `t`'s element type, or None when it is not an fp8 type."""
    e = t.element
    return FP8_FORMATS.get(e.kind) if isinstance(e, T.FloatType) else None


def llvm_type(t: T.Type, backend: str = "cpu_ref") -> ir.Type:
    """The LLVM type of one element (tensors are lowered element by element)."""
    t = t.element
    if isinstance(t, T.IntType):
        return ir.IntType(t.width)
    if isinstance(t, T.IndexType):
        return I64
    if isinstance(t, T.FloatType):
        lt = _FLOATS.get(t.kind)
        if lt is None and t.kind in FP8_FORMATS:
            return I8
        if lt is None:
            raise UnsupportedError(backend, f"float type {t} has no native CPU representation here")
        return lt
    if isinstance(t, T.PointerType):
        return PTR
    raise UnsupportedError(backend, f"type {t} cannot be lowered to LLVM")


def storage_type(t: T.Type) -> ir.Type:
    """How an element is stored in memory: i1 is a byte in Triton's memory model."""
    lt = llvm_type(t)
    return I8 if lt == I1 else lt


def is_float_type(lt: ir.Type) -> bool:
    return isinstance(lt, _BaseFloatType)


def bit_width(lt: ir.Type) -> int:
    if isinstance(lt, ir.IntType):
        return lt.width
    return {F16: 16, BF16: 16, F32: 32, F64: 64}[lt]
