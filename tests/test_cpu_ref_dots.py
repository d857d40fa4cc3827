"""cpu_ref dots whose numerics a plain op-suite comparison would not pin down: `tl.dot_scaled` against a torch
reference built from the MX format definitions (fp4 e2m1 packed two per byte along K, low nibble first; fp8 e4m3/e5m2;
e8m0 scales, one per 32 elements along K), and f16 results that accumulate in f32 and round once."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk

FP4 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


@pytest.fixture(autouse=True)
def cpu_ref():
    prev = triton.runtime.driver.active
    triton_backend_sdk.use("cpu_ref")
    yield
    triton.runtime.driver.set_active(prev)


@triton.jit
def mx_kernel(
    a_ptr,
    sa_ptr,
    b_ptr,
    sb_ptr,
    out_ptr,
    M: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    TA: tl.constexpr,
    TB: tl.constexpr,
    SA: tl.constexpr,
    SB: tl.constexpr,
):
    KA: tl.constexpr = K // 2 if TA == "e2m1" else K
    KB: tl.constexpr = K // 2 if TB == "e2m1" else K
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(b_ptr + tl.arange(0, KB)[:, None] * N + tl.arange(0, N)[None, :])
    sa = None
    sb = None
    if SA:
        sa = tl.load(sa_ptr + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    if SB:
        sb = tl.load(sb_ptr + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a, sa, TA, b, sb, TB)
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def _operand(kind: str, rows: int, cols: int, packed_dim: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(kernel input, its f32 value) for a rows × cols operand; e2m1 is packed along `packed_dim`."""
    if kind == "bf16":
        x = (torch.randn(rows, cols, generator=g) * 2).to(torch.bfloat16)
        return x, x.float()
    codes = torch.randint(0, 256, (rows, cols), generator=g, dtype=torch.uint8)
    if kind == "e2m1":
        lo, hi = codes & 0xF, codes >> 4
        shape = (rows // 2, cols) if packed_dim == 0 else (rows, cols // 2)
        lo = lo.narrow(packed_dim, 0, shape[packed_dim])
        hi = hi.narrow(packed_dim, 0, shape[packed_dim])
        packed = lo | (hi << 4)
        value = torch.stack([FP4[lo.long()], FP4[hi.long()]], dim=packed_dim + 1).flatten(packed_dim, packed_dim + 1)
        return packed, value
    fp8 = torch.float8_e4m3fn if kind == "e4m3" else torch.float8_e5m2
    codes = torch.where((codes & 0x7F) >= (0x7F if kind == "e4m3" else 0x7C), codes & 0x3F, codes)  # finite only
    return codes, codes.view(fp8).float()


@pytest.mark.parametrize(
    "ta,tb,sa,sb", [("e2m1", "bf16", True, False), ("bf16", "e2m1", False, True), ("e4m3", "e5m2", True, True)]
)
def test_dot_scaled_matches_the_mx_definition(ta, tb, sa, sb):
    g = torch.Generator().manual_seed(3)
    M, N, K = 16, 32, 64
    a, av = _operand(ta, M, K, 1, g)
    b, bv = _operand(tb, K, N, 0, g)
    sav = torch.randint(120, 134, (M, K // 32), generator=g, dtype=torch.uint8)
    sbv = torch.randint(120, 134, (N, K // 32), generator=g, dtype=torch.uint8)
    if sa:
        av = av * torch.exp2(sav.float() - 127).repeat_interleave(32, dim=1)
    if sb:
        bv = bv * torch.exp2(sbv.float() - 127).repeat_interleave(32, dim=1).T
    out = torch.full((M, N), -1.0)
    mx_kernel[(1,)](a, sav, b, sbv, out, M, N, K, ta, tb, sa, sb)
    # the upcast values' products are exact and the dot accumulates in f64: the result is the exact product
    # rounded to f32 (an f32 matmul reference is not: 2.7e-5 relative off at [13, 21] of e4m3 x e5m2)
    torch.testing.assert_close(out, (av.double() @ bv.double()).float(), rtol=0, atol=0)


@triton.jit
def half_dot_kernel(a_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    c = tl.dot(a, b, out_dtype=tl.float16)
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


def test_f16_dot_result_rounds_once():
    """K = 1024 products of halves: one rounding of the f32 sum to f16, not 1024 (which drifts by tens of ulps)."""
    g = torch.Generator().manual_seed(5)
    M, N, K = 16, 16, 1024
    a = torch.randn(M, K, generator=g).half()
    b = torch.randn(K, N, generator=g).half()
    out = torch.empty(M, N, dtype=torch.float16)
    half_dot_kernel[(1,)](a, b, out, M, N, K)
    exact = a.double() @ b.double()
    ulp = torch.finfo(torch.float16).eps * exact.abs().clamp(min=1.0)
    assert ((out.double() - exact).abs() <= ulp).all()
