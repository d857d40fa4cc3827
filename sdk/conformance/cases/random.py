"""`tl.rand`, `tl.randn`, `tl.randint`, `tl.randint4x`: Philox-4x32-10 as Triton's standard library defines it,
checked bit for bit (integers) and to float rounding (uniform/normal) against an independent numpy version."""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

from . import Case, Launch, register
from .tolerance import EXACT, normwise

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_K0, _K1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)


def philox(seed: int, c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, c3: np.ndarray, rounds: int = 10):
    """Philox-4x32 with Triton's constants and key schedule (seed split into two 32-bit key halves)."""
    k0 = np.full(c0.shape, np.uint32(seed & 0xFFFFFFFF), dtype=np.uint32)
    k1 = np.full(c0.shape, np.uint32((seed >> 32) & 0xFFFFFFFF), dtype=np.uint32)
    c0, c1, c2, c3 = (c.astype(np.uint32) for c in (c0, c1, c2, c3))
    with np.errstate(over="ignore"):
        for _ in range(rounds):
            p0 = c0.astype(np.uint64) * _M0
            p1 = c2.astype(np.uint64) * _M1
            hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), p0.astype(np.uint32)
            hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), p1.astype(np.uint32)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            k0 = k0 + _K0
            k1 = k1 + _K1
    return c0, c1, c2, c3


def _uniform(bits: np.ndarray) -> np.ndarray:
    """Triton's uint32 → float in [0, 1): the bits as int32, negative ones complemented, times ~2**-31 in float32."""
    x = bits.astype(np.uint32).view(np.int32)
    x = np.where(x < 0, ~x, x)
    return (x.astype(np.float32) * np.float32(4.6566127342e-10)).astype(np.float32)


@triton.jit
def random_kernel(out_ptr, n, seed, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if KIND == "randint":
        tl.store(out_ptr + offs, tl.randint(seed, offs), mask=mask)
    elif KIND == "randint4x":
        a, b, c, d = tl.randint4x(seed, offs)
        tl.store(out_ptr + offs, a ^ b ^ c ^ d, mask=mask)
    elif KIND == "rand":
        tl.store(out_ptr + offs, tl.rand(seed, offs), mask=mask)
    else:
        tl.store(out_ptr + offs, tl.randn(seed, offs), mask=mask)


def _reference(launch: Launch, kind: str) -> list[torch.Tensor]:
    n, seed = launch.args[1], launch.args[2]
    offs = np.arange(n, dtype=np.uint32)
    z = np.zeros(n, dtype=np.uint32)
    a, b, c, d = philox(seed, offs, z, z, z)
    if kind == "randint":
        return [torch.from_numpy(a.view(np.int32).copy())]
    if kind == "randint4x":
        return [torch.from_numpy((a ^ b ^ c ^ d).view(np.int32).copy())]
    if kind == "rand":
        return [torch.from_numpy(_uniform(a))]
    u1 = np.maximum(np.float32(1e-7), _uniform(a))
    u2 = _uniform(b)
    th = np.float64(6.283185307179586) * u2
    r = np.sqrt(np.float64(-2.0) * np.log(u1.astype(np.float64)))
    return [torch.from_numpy(r * np.cos(th))]


def _case(kind: str) -> Case:
    def build(dtype: str, shape: tuple[int, ...], g: torch.Generator) -> Launch:
        n = shape[0]
        seed = (
            int(torch.randint(0, 1 << 62, (1,), generator=g))
            if dtype == "seed64"
            else int(torch.randint(0, 1 << 31, (1,), generator=g))
        )
        out = torch.empty(n, dtype=torch.int32 if kind.startswith("randint") else torch.float32)
        return Launch([out, n, seed], (triton.cdiv(n, 128),), (0,), {"KIND": kind, "BLOCK": 128})

    return register(
        Case(
            f"random_{kind}",
            "philox",
            random_kernel,
            ("seed32", "seed64"),
            ((1,), (1000,)),
            build,
            lambda launch, d: _reference(launch, kind),
            EXACT if kind != "randn" else normwise(64),
            note="dtypes name the seed's width (i32 or i64 kernel argument)",
        )
    )


for _k in ("randint", "randint4x", "rand", "randn"):
    _case(_k)
