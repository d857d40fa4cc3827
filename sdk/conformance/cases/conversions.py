"""Casts: int↔int (sign/zero extension, truncation), int↔float, float↔float with rounding modes, fp8 formats
(`tt.fp_to_fp`), bit casts and bool conversions."""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import FLOATS, INTS, TORCH, full_range, np_of, rand
from .tolerance import EXACT

BLOCK = 128
SHAPES = ((1,), (300,))
_TL = {
    "int8": tl.int8,
    "int16": tl.int16,
    "int32": tl.int32,
    "int64": tl.int64,
    "uint8": tl.uint8,
    "uint16": tl.uint16,
    "uint32": tl.uint32,
    "uint64": tl.uint64,
    "float16": tl.float16,
    "bfloat16": tl.bfloat16,
    "float32": tl.float32,
    "float64": tl.float64,
    "bool": tl.int1,
}


@triton.jit
def cast_kernel(x_ptr, out_ptr, n, DST: tl.constexpr, ROUND: tl.constexpr, BITCAST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if BITCAST:
        y = x.to(DST, bitcast=True)
    elif ROUND == "rtz":
        y = x.to(DST, fp_downcast_rounding="rtz")
    else:
        y = x.to(DST)
    tl.store(out_ptr + offs, y, mask=mask)


def _rtz_reference(x: torch.Tensor, dst: torch.dtype) -> torch.Tensor:
    """Round toward zero: the nearest-even result, stepped back toward zero when it rounded away."""
    r = x.to(dst)
    away = r.double().abs() > x.double().abs()
    bits = r.view(torch.int16 if dst.itemsize == 2 else torch.int32)
    stepped = (bits - 1).view(dst)
    return torch.where(away, stepped, r)


def _int_cast(a: np.ndarray, dst: str) -> np.ndarray:
    return a.astype(np.dtype(dst))  # numpy: two's complement wrap, sign extension by source signedness


def _cast_case(src: str, dsts: tuple[str, ...], rounding: str = "", bitcast: bool = False) -> Case:
    def build(dst: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        if src in INTS:
            x = full_range(shape, src, g) if dst in INTS else rand(shape, src, g, 1, 120)
        elif src == "bool":
            x = rand(shape, "bool", g)
        else:
            # float → unsigned of a negative value is undefined (C) / saturating (PTX): positive inputs only
            x = (
                rand(shape, src, g, 0.01, 200.0)
                if dst not in INTS
                else rand(shape, src, g, 0.5, 100.0, signed=not dst.startswith("u"))
            )
        out = torch.empty(shape, dtype=TORCH[dst])
        return Launch(
            [x, out, shape[0]],
            (triton.cdiv(shape[0], BLOCK),),
            (1,),
            {"DST": _TL[dst], "ROUND": rounding, "BITCAST": bitcast, "BLOCK": BLOCK},
        )

    def reference(launch: Launch, dst: str) -> list[torch.Tensor]:
        x = launch.args[0]
        if bitcast:
            return [x.view(TORCH[dst])]
        if src in INTS and dst in INTS:
            return [torch.from_numpy(_int_cast(np_of(x), dst))]
        if rounding == "rtz":
            return [_rtz_reference(x, TORCH[dst])]
        if dst in INTS:
            return [torch.from_numpy(np.trunc(np_of(x.double())).astype(np.dtype(dst)))]
        if dst == "bool":
            return [x != 0]
        return [
            x.double().to(TORCH[dst]) if src in FLOATS else torch.from_numpy(np_of(x).astype(np.float64)).to(TORCH[dst])
        ]

    tag = "bitcast" if bitcast else ("fp_to_fp_rtz" if rounding else "cast")
    feature = "tt.bitcast" if bitcast else ("tt.fp_to_fp" if rounding else "arith.cast")
    return register(
        Case(f"{tag}_from_{src}", feature, cast_kernel, dsts, SHAPES, build, reference, EXACT, interpreter=not rounding)
    )


for _s in INTS:
    _cast_case(_s, tuple(d for d in INTS + FLOATS + ("bool",) if d != _s))
for _s in FLOATS:
    _cast_case(_s, tuple(d for d in FLOATS + ("int8", "int32", "int64", "uint8", "uint32", "bool") if d != _s))
_cast_case("bool", ("int8", "int32", "float32", "float16"))
_cast_case("float32", ("float16", "bfloat16"), rounding="rtz")
_cast_case("float32", ("int32", "uint32"), bitcast=True)
_cast_case("float64", ("int64",), bitcast=True)
_cast_case("float16", ("int16", "bfloat16"), bitcast=True)


@triton.jit
def fp8_kernel(x_ptr, out_ptr, bits_ptr, n, FP8: tl.constexpr, ROUND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if ROUND == "rtz":
        f8 = x.to(FP8, fp_downcast_rounding="rtz")
    else:
        f8 = x.to(FP8)
    tl.store(bits_ptr + offs, f8.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(out_ptr + offs, f8.to(x.dtype), mask=mask)


#: the fnuz formats (float8e4b8, float8e5b16) are AMD-only in Triton's frontend
_FP8 = {"e4m3fn": (tl.float8e4nv, torch.float8_e4m3fn, 440.0), "e5m2": (tl.float8e5, torch.float8_e5m2, 50000.0)}


def _fp8_case(fmt: str, dtypes: tuple[str, ...]) -> Case:
    tl_t, torch_t, hi = _FP8[fmt]

    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        x = rand(shape, dtype, g, 0.001, hi)
        x = torch.where(torch.rand(shape, generator=g) < 0.5, x / 256, x)
        return Launch(
            [x, torch.empty_like(x), torch.empty(shape, dtype=torch.uint8), shape[0]],
            (triton.cdiv(shape[0], BLOCK),),
            (1, 2),
            {"FP8": tl_t, "ROUND": "", "BLOCK": BLOCK},
        )

    def reference(launch: Launch, dtype: str) -> list[torch.Tensor]:
        f8 = launch.args[0].to(torch_t)
        return [f8.to(TORCH[dtype]), f8.view(torch.uint8)]

    return register(
        Case(
            f"fp8_{fmt}",
            "tt.fp_to_fp",
            fp8_kernel,
            dtypes,
            SHAPES,
            build,
            reference,
            EXACT,
            interpreter=False,
            note="float → fp8 → float round trip and bits vs torch's float8 types",
        )
    )


for _f in _FP8:
    _fp8_case(_f, ("float16", "bfloat16", "float32", "float64"))


def _e4b15_reference(launch: Launch, dtype: str) -> list[torch.Tensor]:
    """The CUDA path's fp8e4b15 bit conversions: via f16 (f32 rounds toward zero), magnitude saturated at 1.75
    (NaN/inf included), rounded half away from zero; widening places the 7 magnitude bits on f16's."""
    x = launch.args[0]
    half = x if x.dtype == torch.float16 else _rtz_reference(x, torch.float16)
    bits = half.view(torch.int16).int() & 0xFFFF
    mag = torch.clamp(bits & 0x7FFF, max=0x3F00)
    code = ((mag * 2 + 0x80) >> 8) | ((bits >> 8) & 0x80)
    back = (((code & 0x7F) << 7) | ((code & 0x80) << 8)).to(torch.int32)
    back = torch.where(back >= 0x8000, back - 0x10000, back).to(torch.int16).view(torch.float16)
    return [back.to(x.dtype), code.to(torch.uint8)]


def _e4b15_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    x = rand(shape, dtype, g, 2.0**-16, 2.5)
    x = torch.where(torch.rand(shape, generator=g) < 0.5, x / 64, x)
    return Launch(
        [x, torch.empty_like(x), torch.empty(shape, dtype=torch.uint8), shape[0]],
        (triton.cdiv(shape[0], BLOCK),),
        (1, 2),
        {"FP8": tl.float8e4b15, "ROUND": "", "BLOCK": BLOCK},
    )


register(
    Case(
        "fp8_e4b15",
        "convert_custom_types",
        fp8_kernel,
        ("float16", "float32"),
        SHAPES,
        _e4b15_build,
        _e4b15_reference,
        EXACT,
        interpreter=False,
        min_triton=(3, 7),
        note="fp8e4b15 is an i8 in the IR: the target's convert_custom_types codegen function converts it",
    )
)
