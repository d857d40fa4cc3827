"""Micro-benchmark of integer division, shifts and float→int conversion (the ops sdk/transforms/int_semantics.py
guards) on each SDK backend: median ms of a 2^22-element elementwise kernel, divisors and amounts loaded at run time.

    python -m benchmarks.int_ops [cpu_ref opencl]
"""

from __future__ import annotations

import os
import sys

import torch
import triton
from triton_backend_sdk.bench.timing import median_ms

# the kernels are the integer-semantics tests' own (tests/ is not a package; tools/gpu imports them the same way)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from int_semantics_cases import float_to_int_kernel, int_binary_kernel

N = 1 << 22
BLOCK = 1024


def cases() -> dict[str, object]:
    g = torch.Generator().manual_seed(0)
    out: dict[str, object] = {}
    grid = (triton.cdiv(N, BLOCK),)
    for dtype in (torch.int32, torch.int64):
        x = torch.randint(-(1 << 30), 1 << 30, (N,), generator=g, dtype=dtype)
        y = torch.randint(1, 1000, (N,), generator=g, dtype=dtype)
        s = torch.randint(0, 31, (N,), generator=g, dtype=dtype)
        z = torch.empty_like(x)
        name = str(dtype).removeprefix("torch.")
        for op, rhs in (("div", y), ("rem", y), ("shl", s), ("shr", s)):
            out[f"{op} {name}"] = lambda x=x, r=rhs, z=z, op=op: int_binary_kernel[grid](x, r, z, N, OP=op, BLOCK=BLOCK)
    f = torch.randn(N, generator=g) * 1000
    for dtype in (torch.int32, torch.int8, torch.uint8, torch.int64):
        z = torch.empty(N, dtype=dtype)
        out[f"f32->{str(dtype).removeprefix('torch.')}"] = lambda z=z: float_to_int_kernel[grid](f, z, N, BLOCK=BLOCK)
    return out


def main(backends: list[str]) -> None:
    import triton_backend_sdk

    for name in backends:
        triton_backend_sdk.use(name)
        for case, fn in cases().items():
            print(f"{name:8s} {case:12s} {median_ms(fn, 15):8.2f} ms", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["cpu_ref", "opencl"])
