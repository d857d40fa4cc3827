"""An fp32 tile divided by a splat scalar becomes a reciprocal and multiplies (sdk/transforms/uniform_division.py):
golden IR of the pass, the divisions it leaves alone, its place in the legalizations (only with fp fusion), and on
every backend the quotient within 2 ulp of the exact one (Triton-CUDA's `div.full.f32` bound) over divisors that
cover the full range: tiny and huge, subnormal, zero, inf and NaN, with a masked ragged tail."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.options import Options
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.uniform_division import UniformDivision

_TTIR = """module {
  tt.func public @k(%x: tensor<8xf32>, %s: f32, %t: tensor<8xf32>, %xd: tensor<8xf64>, %sd: f64) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf64>, f32) {
    %b = tt.splat %s : f32 -> tensor<8xf32>
    %0 = arith.divf %x, %b : tensor<8xf32>
    %1 = arith.divf %x, %t : tensor<8xf32>
    %2 = tt.precise_divf %x, %b : tensor<8xf32>
    %bd = tt.splat %sd : f64 -> tensor<8xf64>
    %3 = arith.divf %xd, %bd : tensor<8xf64>
    %4 = arith.divf %s, %s : f32
    tt.return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf64>, f32
  }
}"""


def test_pass_golden() -> None:
    """The splat divisor's scalar: |s| compared with 2**64 and 2**-64, the power-of-two scale chosen, one scalar
    reciprocal of the scaled divisor, then two multiplies per element. A tensor divisor, `tt.precise_divf`, f64 and a
    scalar quotient stay divisions."""
    module = parse_ttir(_TTIR)
    UniformDivision().run(module, None)
    verify(module)
    text = print_module(module)
    check_lines(
        text,
        """
        %0 = math.absf %s : f32
        %1 = arith.constant 1.8446744e+19 : f32
        %2 = arith.cmpf ogt, %0, %1 : f32
        %3 = arith.constant 5.421011e-20 : f32
        %4 = arith.cmpf olt, %0, %3 : f32
        %8 = arith.select %4, %6, %7 : f32
        %9 = arith.select %2, %5, %8 : f32
        %11 = arith.mulf %s, %9 : f32
        %12 = arith.divf %10, %11 : f32
        %13 = tt.splat %9 : f32 -> tensor<8xf32>
        %14 = arith.mulf %x, %13 : tensor<8xf32>
        %15 = tt.splat %12 : f32 -> tensor<8xf32>
        %16 = arith.mulf %14, %15 : tensor<8xf32>
        tt.return %16,
        """,
    )
    assert text.count("arith.divf") == 4  # the reciprocal, the tensor divisor, f64, the scalar quotient
    assert "tt.precise_divf %x, %b" in text


@pytest.mark.parametrize("fusion", [True, False])
def test_runs_only_where_fp_fusion_is_allowed(fusion: bool) -> None:
    passes = legalization_passes(TargetDescriptor(name="t", arch="t"), Options(enable_fp_fusion=fusion))
    assert any(isinstance(p, UniformDivision) for p in passes) == fusion


@triton.jit
def _divide_rows(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=m, other=1.0)
    s = tl.load(s_ptr + row)
    tl.store(out_ptr + row * n + offs, x / s, mask=m)


def _ulps(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Distance in units of the last place of `want` (f32), for finite values."""
    g, w = got.double(), want.double()
    exp = torch.frexp(want.abs().clamp(min=torch.finfo(torch.float32).tiny))[1].double()
    ulp = torch.ldexp(torch.ones_like(exp), (exp - 24).long()).clamp(min=2.0**-149)
    return (g - w).abs() / ulp


def test_quotients_within_two_ulp_over_the_full_range(backend: str) -> None:
    """Each row one divisor: ordinary, near 2**±64 (the scaling's edges), huge, tiny, subnormal, ±0, ±inf, NaN. The
    numerators span 2**-100 .. 2**100 with both signs, and 0, inf and NaN. Finite quotients within 2 ulp of the
    correctly rounded one (subnormal ones within 2 of the smallest subnormal); inf, 0 and NaN where x / s has them."""
    divisors = [3.0, -7.25, 2.0**64 * 1.5, 2.0**-64 * 0.75, 3.0e38, -1.7e-38, 1.0e-40, 0.0, -0.0]
    divisors += [float("inf"), -float("inf"), float("nan"), 2.0**100, 2.0**-100]
    n = 1000  # a ragged tail in 1024-wide blocks
    g = torch.Generator().manual_seed(13)
    mant = torch.rand(len(divisors), n, generator=g) + 0.5
    expo = torch.randint(-100, 101, (len(divisors), n), generator=g)
    sign = torch.where(torch.rand(len(divisors), n, generator=g) < 0.5, -1.0, 1.0)
    x = (sign * torch.ldexp(mant, expo)).float()
    x[:, :4] = torch.tensor([0.0, float("inf"), float("nan"), -1.0])
    s = torch.tensor(divisors, dtype=torch.float32)
    out = torch.full_like(x, 123.0)
    _divide_rows[(len(divisors),)](x, s, out, n, BLOCK=1024)
    want = x / s[:, None]  # torch's IEEE division, correctly rounded
    same_class = (want.isnan() == out.isnan()) & (want.isinf() == out.isinf())
    assert bool(same_class.all()), (x[~same_class][:5], out[~same_class][:5], want[~same_class][:5])
    inf = want.isinf()
    assert torch.equal(out[inf], want[inf])
    finite = want.isfinite()
    ulps = _ulps(out[finite], want[finite])
    assert float(ulps.max()) <= 2.0, float(ulps.max())
