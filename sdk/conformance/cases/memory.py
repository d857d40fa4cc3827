"""Loads and stores: masks with `other`, scalar pointers, 2-D strided tiles on 2-D grids, int64 offsets, cache and
eviction hints, volatile loads, i1 stored as bytes, pointer ↔ integer round trips."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .inputs import NUMERIC, rand
from .tolerance import EXACT


@triton.jit
def masked_copy_kernel(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=OTHER, cache_modifier=".cg", eviction_policy="evict_last")
    tl.store(out_ptr + offs, x, mask=offs < n + 7, cache_modifier=".wb", eviction_policy="evict_first")


def _masked_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    n = shape[0]
    x = rand((n,), dtype, g)
    out = rand((n + 7,), dtype, g)
    return Launch([x, out, n], (triton.cdiv(n + 7, 64),), (1,), {"OTHER": 3, "BLOCK": 64})


def _masked_ref(launch: Launch, dtype: str) -> list[torch.Tensor]:
    x, out = launch.args[0], launch.args[1].clone()
    out[: x.numel()] = x
    out[x.numel() :] = 3
    return [out]


register(
    Case(
        "load_mask_other",
        "tt.load",
        masked_copy_kernel,
        NUMERIC + ("bool",),
        ((1,), (100,), (1000,)),
        _masked_build,
        _masked_ref,
        EXACT,
    )
)


@triton.jit
def tile2d_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask, volatile=True)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :], x * 2, mask=mask)


def _tile_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    m, n = shape
    x = rand((n, m), dtype, g).t()  # non-contiguous view
    out = torch.empty((m, n), dtype=x.dtype)
    return Launch(
        [x, out, m, n, x.stride(0), x.stride(1), out.stride(0)],
        (triton.cdiv(m, 16), triton.cdiv(n, 32)),
        (1,),
        {"BM": 16, "BN": 32},
    )


register(
    Case(
        "load_2d_strided",
        "tt.load",
        tile2d_kernel,
        ("int32", "int64", "float16", "bfloat16", "float32"),
        ((1, 1), (33, 65), (100, 7)),
        _tile_build,
        lambda launch, d: [launch.args[0] * 2],
        EXACT,
    )
)


@triton.jit
def scalar_ptr_kernel(x_ptr, out_ptr, BIG: tl.int64):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    base = out_ptr + BIG  # 64-bit pointer arithmetic: far out and back
    tl.store(base - BIG + pid, v + v)
    p = (x_ptr + pid).to(tl.int64, bitcast=True)  # ptr_to_int / int_to_ptr round trip
    w = tl.load(p.to(x_ptr.dtype, bitcast=True) if False else tl.cast(p, x_ptr.dtype, bitcast=True))
    tl.store(out_ptr + tl.num_programs(0) + pid, w)


def _scalar_build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
    x = rand(shape, dtype, g, 1, 40)
    return Launch([x, torch.empty(2 * shape[0], dtype=x.dtype), 3 << 33], (shape[0],), (1,))


register(
    Case(
        "scalar_pointers_int64",
        "tt.addptr",
        scalar_ptr_kernel,
        ("int8", "int32", "int64", "float32"),
        ((1,), (37,)),
        _scalar_build,
        lambda launch, d: [torch.cat([launch.args[0] * 2, launch.args[0]])],
        EXACT,
        interpreter=False,
        note="the interpreter cannot address 2**34 elements past a tensor",
    )
)
