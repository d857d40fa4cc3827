"""`triton-sdk demo`: compile and run real Triton kernels on an SDK backend, check them against torch, time them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def bias_scale_kernel(x_ptr, bias_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    """out[m, n] = (x[m, n] + bias[n]) * 2, a 2-D broadcast over a 2-D grid."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_m + rn[None, :], mask=mask)
    b = tl.load(bias_ptr + rn, mask=rn < N)
    tl.store(out_ptr + rm[:, None] * stride_m + rn[None, :], (x + b[None, :]) * 2, mask=mask)


@triton.jit
def axpb_kernel(x_ptr, out_ptr, a, b, n, BLOCK: tl.constexpr):
    """out = a * x + b with runtime scalar arguments."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + b, mask=mask)


@dataclass
class DemoResult:
    name: str
    ok: bool
    max_err: float
    ms: float
    torch_ms: float


def _time(fn: Callable[[], object], reps: int = 5) -> float:
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1000


def run_demo(size: int = 1 << 20, seed: int = 0) -> list[DemoResult]:
    import torch

    g = torch.Generator().manual_seed(seed)
    results = []

    def check(name: str, ours: Callable[[], torch.Tensor], ref: Callable[[], torch.Tensor], tol: float) -> None:
        got, want = ours(), ref()
        err = (got.float() - want.float()).abs().max().item()
        results.append(DemoResult(name, err <= tol, err, _time(ours), _time(ref)))

    n = size + 17  # ragged: not a multiple of the block
    x = torch.rand(n, generator=g)
    y = torch.rand(n, generator=g)
    out = torch.empty_like(x)

    def add() -> torch.Tensor:
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out

    check(f"vector add fp32 n={n}", add, lambda: x + y, 0.0)

    rows, cols = 512, 781
    for dtype in (torch.float32, torch.float16):
        xs = torch.randn(rows, cols, generator=g).to(dtype)
        ys = torch.empty_like(xs)

        def softmax(xs: torch.Tensor = xs, ys: torch.Tensor = ys) -> torch.Tensor:
            softmax_kernel[(rows,)](ys, xs, xs.stride(0), ys.stride(0), cols, BLOCK=1024)
            return ys

        tol = 1e-6 if dtype == torch.float32 else 1e-3
        check(
            f"softmax {str(dtype)[6:]} {rows}x{cols}",
            softmax,
            lambda xs=xs: torch.softmax(xs.float(), dim=1).to(xs.dtype),
            tol,
        )

    m, nn = 300, 421
    xm = torch.randn(m, nn, generator=g)
    bias = torch.randn(nn, generator=g)
    om = torch.empty_like(xm)

    def bias_scale() -> torch.Tensor:
        bias_scale_kernel[(triton.cdiv(m, 32), triton.cdiv(nn, 64))](xm, bias, om, m, nn, xm.stride(0), BM=32, BN=64)
        return om

    check(f"2-D broadcast {m}x{nn}", bias_scale, lambda: (xm + bias) * 2, 1e-6)

    def axpb() -> torch.Tensor:
        axpb_kernel[(triton.cdiv(n, 1024),)](x, out, 1.5, -0.25, n, BLOCK=1024)
        return out

    check("scalar args a*x+b", axpb, lambda: 1.5 * x - 0.25, 1e-6)
    return results
