"""fp8e4b15 casts for Triton's frontend (`convert_custom_types`): the IR type of fp8e4b15 is a plain i8, so the target
supplies the conversion, here as integer tensor ops that render to OpenCL C like any others.

fp8e4b15: sign, 4 exponent bits with bias 15, 3 mantissa bits, no inf/NaN. Its bits are f16's sign and top seven
magnitude bits, so widening shifts them into place. Narrowing goes through f16 (from f32 rounding toward zero, as
Triton's CUDA path does), saturates the magnitude at 1.75 (f16 0x3F00; inf and NaN too) and rounds half away from
zero on the dropped byte.
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
        magnitude = s.shl(s.and_(byte, c(0x7F)), c(7))
        sign = s.shl(s.and_(byte, c(0x80)), c(8))
        half = s.bitcast(s.cast(s.cast(s.or_(magnitude, sign), tl.uint16), tl.int16), tl.float16)
        return half if dst_ty.scalar.is_fp16() else s.cast(half, dst_ty.scalar)
    if input.type.scalar.is_fp16():
        half = input
    else:
        half = s.cast(input, tl.float16, fp_downcast_rounding="rtz")
    bits = s.and_(s.cast(s.bitcast(half, tl.uint16), tl.int32), c(0xFFFF))
    magnitude = s.minimum(s.and_(bits, c(0x7FFF)), c(0x3F00), tl.PropagateNan.NONE)
    rounded = s.lshr(s.add(s.shl(magnitude, c(1)), c(0x80), False), c(8))
    code = s.or_(rounded, s.and_(s.lshr(bits, c(8)), c(0x80)))
    return s.bitcast(s.cast(code, tl.uint8), tl.float8e4b15)
