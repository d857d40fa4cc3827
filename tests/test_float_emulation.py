"""The SDK's one f32 → bf16 rounding (sdk/numerics.py) on every backend and in constant folding: nearest even and
toward zero against torch for random bit patterns (subnormals, ties, overflow to inf), bf16 NaN bits kept through a
widen-and-narrow round trip."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.numerics import bf16_bits, bf16_value


def _patterns(g: torch.Generator, n: int) -> torch.Tensor:
    """f32 values: random bits, bf16 subnormal range, exact ties, and the overflow edge."""
    rnd = torch.randint(-(2**31), 2**31 - 1, (n,), generator=g, dtype=torch.int64).to(torch.int32).view(torch.float32)
    sub = torch.randint(1, 0x00800000, (n,), generator=g, dtype=torch.int32).view(torch.float32)
    ties = (torch.randint(0, 2**15, (n,), generator=g, dtype=torch.int32) << 16 | 0x8000).view(torch.float32)
    edge = torch.tensor([3.3895e38, 3.4e38, -3.4e38, 1e-45, -1e-45, 0.0, -0.0], dtype=torch.float32)
    x = torch.cat([rnd, sub, -sub, ties, edge])
    return x[~x.isnan()]


@triton.jit
def _narrow_kernel(x_ptr, rne_ptr, rtz_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(rne_ptr + offs, x.to(tl.bfloat16), mask=m)
    tl.store(rtz_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"), mask=m)


def test_bf16_narrowing_matches_torch_subnormals_kept(backend: str) -> None:
    x = _patterns(torch.Generator().manual_seed(11), 300)
    rne = torch.empty(x.shape, dtype=torch.bfloat16)
    rtz = torch.empty_like(rne)
    _narrow_kernel[(triton.cdiv(x.numel(), 256),)](x, rne, rtz, x.numel(), BLOCK=256)
    assert torch.equal(rne.view(torch.int16), x.to(torch.bfloat16).view(torch.int16))
    assert torch.equal(rtz.view(torch.int16), (x.view(torch.int32) >> 16).to(torch.int16))
    sub = (x.abs() < 1.1754944e-38) & (x != 0)
    assert (rne[sub].view(torch.int16) & 0x7FFF).count_nonzero() > 0, "bf16 subnormal results flushed to zero"


@triton.jit
def _nan_round_trip_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32).to(tl.bfloat16))


def test_bf16_nan_bits_survive_widen_and_narrow(backend: str) -> None:
    payload = torch.arange(1, 129, dtype=torch.int32)
    bits = torch.cat([0x7F80 | payload[:127], 0xFF80 | payload[:127]]).to(torch.int16)
    bits = torch.cat([bits, bits[:2]])[:256]
    x = bits.view(torch.bfloat16)
    y = torch.empty_like(x)
    _nan_round_trip_kernel[(1,)](x, y, BLOCK=256)
    assert torch.equal(y.view(torch.int16), bits)


@pytest.mark.parametrize("seed", [0, 1])
def test_constant_folding_matches_torch(seed: int) -> None:
    x = _patterns(torch.Generator().manual_seed(seed), 500)
    want = x.to(torch.bfloat16).view(torch.int16).tolist()
    assert [bf16_bits(float(v)) - (0x10000 if bf16_bits(float(v)) & 0x8000 else 0) for v in x.tolist()] == want
    assert bf16_value(1.00390625) == 1.0 and bf16_value(1.01171875) == 1.015625
    assert bf16_bits(float("nan")) == 0x7FC0 and bf16_bits(3.5e38) == 0x7F80
