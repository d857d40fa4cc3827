"""SDK IR types → LLVM types (llvmlite.ir), plus the bfloat type llvmlite does not ship."""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir.types import _BaseFloatType
from triton_backend_sdk.errors import UnsupportedError
from triton_backend_sdk.ir import types as T
from triton_backend_sdk.numerics import bf16_bits
from triton_backend_sdk.numerics_fp8 import FP8_FORMATS, Fp8Format


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


def fp8_format(t: T.Type) -> Fp8Format | None:
    """The fp8 format of `t`'s element type (the SDK's; values travel as their i8 bit pattern, LLVM having no fp8
    types), or None when it is not an fp8 type."""
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


#: How a boolean element is kept in a stack or constant buffer (a tile's, a loop-carried slot's): a 16-bit 0/1, not
#: a byte. LLVM 22's x86 backend reads 8 booleans held as bytes into a 16-bit AVX-512 mask register whose upper half
#: is the next 8 bytes and clears that half with a `kmovb` that its register allocator drops when it spills the mask
#: (it treats the kmovb as a copy); an 8-lane byte store widened to 16 lanes then wrote 8 bytes past its mask (fuzz
#: seed 315 kernel 399: a masked int8 store beside other stores under one mask). 8 booleans read from 16-bit
#: elements fill their register exactly, so no extension is needed. Memory (Triton's `*i1`) stays a byte.
BOOL_IN_BUFFER = I16


def buffer_type(lt: ir.Type) -> ir.Type:
    """The element type of a stack or constant buffer holding elements computed as `lt`."""
    return BOOL_IN_BUFFER if lt == I1 else lt


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
