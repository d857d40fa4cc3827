"""Dtype tables and seeded random inputs for the cases: never zero unless a case asks for it, ragged by design."""

from __future__ import annotations

import numpy as np
import torch

TORCH = {
    "bool": torch.bool,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
FLOATS = ("float16", "bfloat16", "float32", "float64")
NUMERIC = INTS + FLOATS


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def bits(dtype: str) -> int:
    return 1 if dtype == "bool" else TORCH[dtype].itemsize * 8


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def rand(
    shape: tuple[int, ...], dtype: str, g: torch.Generator, lo: float = 0.5, hi: float = 4.0, signed: bool = True
) -> torch.Tensor:
    """Random values with lo <= |x| <= hi (integers: in [lo, hi], negatives only for signed types)."""
    t = TORCH[dtype]
    if dtype == "bool":
        return torch.rand(shape, generator=g) < 0.5
    if dtype in INTS:
        ilo, ihi = max(int(lo), 1), max(int(hi), 1)
        v = torch.randint(ilo, ihi + 1, shape, generator=g, dtype=torch.int64)
        if signed and dtype in SIGNED:
            v = torch.where(torch.rand(shape, generator=g) < 0.5, -v, v)
        return v.to(t)
    mag = lo + (hi - lo) * torch.rand(shape, generator=g, dtype=torch.float64)
    sign = torch.where(torch.rand(shape, generator=g) < 0.5, -1.0, 1.0).double() if signed else 1.0
    return (mag * sign).to(t)


def full_range(shape: tuple[int, ...], dtype: str, g: torch.Generator) -> torch.Tensor:
    """Integers over the whole range of `dtype` (bit patterns), zeros replaced by one."""
    b = bits(dtype)
    raw = torch.randint(-(1 << 62), 1 << 62, shape, generator=g, dtype=torch.int64) * 2 + 1
    v = raw.numpy().astype(np.uint64) & np.uint64((1 << b) - 1 if b < 64 else 0xFFFFFFFFFFFFFFFF)
    v[v == 0] = 1
    return torch.from_numpy(v.astype(np.dtype(str(TORCH[dtype]).replace("torch.", ""))))


def np_of(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def select(cond: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """`torch.where` for every dtype: older torch builds (2.11 on the GPU machine) lack it for uint16/32/64."""
    if x.dtype in (torch.uint16, torch.uint32, torch.uint64):
        return torch.from_numpy(np.where(np_of(cond), np_of(x), np_of(y)))
    return torch.where(cond, x, y)


def c_divmod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """C semantics (truncate toward zero; remainder has the dividend's sign), exact for every integer width."""
    q = np.array(
        [
            int(x) // int(y) if (int(x) >= 0) == (int(y) >= 0) or int(x) % int(y) == 0 else int(x) // int(y) + 1
            for x, y in zip(a.ravel(), b.ravel())
        ],
        dtype=object,
    )
    r = np.array([int(x) - int(qq) * int(y) for x, y, qq in zip(a.ravel(), b.ravel(), q)], dtype=object)
    return q.reshape(a.shape).astype(a.dtype), r.reshape(a.shape).astype(a.dtype)
