"""The casts Triton's frontend asks the target for (`convert_custom_types` in `get_codegen_implementation`).

fp8e4b15's IR type is a plain i8, so Triton's frontend leaves its conversions to the backend (the CUDA backend
supplies inline PTX). Every SDK backend gets the CUDA path's bit conversions, written once here as integer tensor
ops that the backends lower like any others. fp8e4b15: sign, 4 exponent bits with bias 15, 3 mantissa bits, no
inf/NaN. Its bits are f16's sign and top seven magnitude bits, so widening shifts them into place; narrowing goes
through f16 (f32 rounds toward zero first), saturates the magnitude at 1.75 (f16 0x3F00; NaN and inf too, as PTX's
`min.f16` returns the non-NaN operand) and rounds half away from zero on the dropped byte.
"""

from __future__ import annotations

from typing import Any


def convert_custom_types(input: Any, dst_ty: Any, fp_downcast_rounding: Any = None, _semantic: Any = None) -> Any:
    import triton.language as tl

    s = _semantic

    def c(v: int) -> Any:
        return s.to_tensor(v)

    if input.type.scalar.is_fp8e4b15():
        byte = s.cast(s.bitcast(input, tl.uint8), tl.int32)
        bits = s.or_(s.shl(s.and_(byte, c(0x7F)), c(7)), s.shl(s.and_(byte, c(0x80)), c(8)))
        half = s.bitcast(s.cast(s.cast(bits, tl.uint16), tl.int16), tl.float16)
        return half if dst_ty.scalar.is_fp16() else s.cast(half, dst_ty.scalar)
    half = input if input.type.scalar.is_fp16() else s.cast(input, tl.float16, fp_downcast_rounding="rtz")
    bits = s.and_(s.cast(s.bitcast(half, tl.uint16), tl.int32), c(0xFFFF))
    magnitude = s.minimum(s.and_(bits, c(0x7FFF)), c(0x3F00), tl.PropagateNan.NONE)
    rounded = s.lshr(s.add(s.shl(magnitude, c(1)), c(0x80), False), c(8))
    code = s.or_(rounded, s.and_(s.lshr(bits, c(8)), c(0x80)))
    return s.bitcast(s.cast(code, tl.uint8), tl.float8e4b15)
