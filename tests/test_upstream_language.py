"""Regressions from Triton's upstream language suite (issue 12) on every backend: AMD's fnuz fp8 types (fp8e4b8,
fp8e5b16) compile and convert bit for bit with torch's float8_e4m3fnuz / float8_e5m2fnuz, and a num_warps that is
not a power of 2 is refused with the error type Triton's own backends raise (AssertionError)."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

_FNUZ = {"fp8e4b8": (tl.float8e4b8, torch.float8_e4m3fnuz), "fp8e5b16": (tl.float8e5b16, torch.float8_e5m2fnuz)}


@triton.jit
def _round_trip(x_ptr, bits_ptr, back_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    f8 = tl.load(x_ptr + offs, mask=mask).to(FP8, fp_downcast_rounding="rtne")
    tl.store(bits_ptr + offs, f8.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(back_ptr + offs, f8.to(tl.float32), mask=mask)


@triton.jit
def _widen(bits_ptr, out_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(bits_ptr + offs, mask=mask).to(FP8, bitcast=True).to(tl.float32), mask=mask)


@pytest.mark.parametrize("name", list(_FNUZ))
def test_fnuz_fp8_widens_every_code_like_torch(backend, name):
    tl_ty, torch_ty = _FNUZ[name]
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    out = torch.empty(256, dtype=torch.float32)
    _widen[(1,)](codes, out, 256, FP8=tl_ty, BLOCK=256)
    want = codes.view(torch_ty).float()
    assert torch.isnan(out[0x80]) and torch.isnan(want[0x80])
    keep = torch.arange(256) != 0x80
    assert torch.equal(out[keep].view(torch.int32), want[keep].view(torch.int32))


@pytest.mark.parametrize("name", list(_FNUZ))
def test_fnuz_fp8_rounds_like_torch(backend, name, rng):
    """Random f32 values inside the format's finite range (beyond it torch gives NaN, the SDK saturates like PTX),
    the format's own code points and every midpoint between neighbours (ties to even), a ragged size."""
    tl_ty, torch_ty = _FNUZ[name]
    top = torch.finfo(torch_ty).max
    finite = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch_ty).float()
    finite = finite[finite.isfinite()].unique()
    mids = (finite[1:] + finite[:-1]) / 2
    rand = (torch.rand(3001, generator=rng) * 2 - 1) * top
    tiny = (torch.rand(500, generator=rng) * 2 - 1) * float(finite[finite > 0].min()) * 4
    x = torch.cat([rand, tiny, finite, mids, -mids]).float()
    n = x.numel()
    bits, back = torch.empty(n, dtype=torch.uint8), torch.empty(n, dtype=torch.float32)
    _round_trip[(triton.cdiv(n, 512),)](x, bits, back, n, FP8=tl_ty, BLOCK=512)
    want = x.to(torch_ty)
    bad = (bits != want.view(torch.uint8)).nonzero().flatten().tolist()
    assert not bad, f"{len(bad)} of {n} differ, first {x[bad[0]].item()!r}: {bits[bad[0]]:#04x} vs torch"
    assert torch.equal(back.view(torch.int32), want.float().view(torch.int32))


def test_num_warps_not_a_power_of_2_is_an_assertion_error(backend):
    @triton.jit
    def _noop(dst):
        pass

    dst = torch.empty(16)
    with pytest.raises(AssertionError, match="must be a power of 2"):
        _noop.warmup(dst=dst, grid=(1,), num_warps=3)
    for w in (1, 2, 4):
        _noop.warmup(dst=dst, grid=(1,), num_warps=w)
