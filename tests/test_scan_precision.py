"""bf16/f16 `tl.cumsum`/`tl.cumprod` within Triton's own tolerance of numpy's f32 scan on every backend, through the
shared `wide-float-scan` pass (sdk/transforms/wide_float_scan.py), and golden IR of what that pass rewrites and what
it leaves alone.

Before the pass, cpu_ref's sequential bf16 scan rounded k times for output k and failed 46 of upstream
`test_scan2d`'s bf16/f16 cases; opencl failed some in its one-work-item mode too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.options import Options
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.wide_float_scan import WideFloatScan

#: 2-D shapes of upstream test_scan2d
SHAPES = [(8, 32), (16, 32), (32, 16), (2, 1024), (1024, 2), (32, 32), (1, 1024)]
#: the half-ulp of each type's 8/11-bit significand, the most a once-rounded output may be off (relative)
HALF_ULP = {torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}


@triton.jit
def _scan_kernel(X, Z, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REVERSE: tl.constexpr, PROD: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(X + offs)
    if PROD:
        z = tl.cumprod(x, axis=AXIS, reverse=REVERSE)
    else:
        z = tl.cumsum(x, axis=AXIS, reverse=REVERSE)
    tl.store(Z + offs, z)


def _numpy_scan(x: np.ndarray, axis: int, reverse: bool, prod: bool) -> np.ndarray:
    f = np.cumprod if prod else np.cumsum
    if reverse:
        return np.flip(f(np.flip(x, axis), axis=axis), axis).astype(np.float32)
    return f(x, axis=axis).astype(np.float32)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("prod", [False, True], ids=["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_narrow_float_scan_matches_f32(backend: str, dtype: torch.dtype, prod: bool, shape: tuple[int, int]) -> None:
    rs = np.random.RandomState(17)
    x = torch.tensor(rs.normal(0, 1, shape).astype(np.float32)).to(dtype)
    xf = x.float().numpy()  # the narrow inputs, exactly, as numpy's f32 reference sees them
    for axis in (0, 1):
        for reverse in (False, True):
            z = torch.empty_like(x)
            _scan_kernel[(1,)](x, z, M=shape[0], N=shape[1], AXIS=axis, REVERSE=reverse, PROD=prod)
            got, ref = z.float().numpy(), _numpy_scan(xf, axis, reverse, prod)
            what = f"axis={axis} reverse={reverse}"
            # upstream test_scan2d's tolerance
            np.testing.assert_allclose(got, ref, rtol=0.01, atol=1e-3, err_msg=what)
            # and what f32 carrying promises: each output within half an ulp of the f32 scan (plus the f32 scan's
            # own order-dependent error where a cumsum cancels)
            np.testing.assert_allclose(got, ref, rtol=HALF_ULP[dtype], atol=1e-4, err_msg=what)


def test_narrow_int_and_f32_scans_keep_their_type(backend: str) -> None:
    """Integer and f32 scans are not widened: int16 wraps as int16 does, an f32 cumsum is the f32 one."""
    x16 = torch.full((4, 32), 3000, dtype=torch.int16)
    z16 = torch.empty_like(x16)
    _scan_kernel[(1,)](x16, z16, M=4, N=32, AXIS=1, REVERSE=False, PROD=False)
    want = torch.cumsum(x16.to(torch.int64), 1).to(torch.int16)  # wrapped modulo 2^16
    assert torch.equal(z16, want)
    rs = np.random.RandomState(3)
    x = torch.tensor(rs.normal(0, 1, (8, 32)).astype(np.float32))
    z = torch.empty_like(x)
    _scan_kernel[(1,)](x, z, M=8, N=32, AXIS=0, REVERSE=True, PROD=True)
    np.testing.assert_allclose(z.numpy(), _numpy_scan(x.numpy(), 0, True, True), rtol=1e-5, atol=1e-6)


# ---- golden IR of the pass -------------------------------------------------------------------------------------------


def _scan_ttir(elem: str, combine: str, reverse: bool = False) -> str:
    rev = ", reverse = true" if reverse else ""
    return f"""module {{
  tt.func public @k(%x: tensor<16x32x{elem}>) -> tensor<16x32x{elem}> {{
    %0 = "tt.scan"(%x) <{{axis = 1 : i32{rev}}}> ({{
    ^bb0(%a: {elem}, %b: {elem}):
{combine}
    }}) : (tensor<16x32x{elem}>) -> tensor<16x32x{elem}>
    tt.return %0 : tensor<16x32x{elem}>
  }}
}}
"""


def _run_pass(text: str) -> str:
    module = parse_ttir(text)
    WideFloatScan().run(module, None)
    verify(module)
    return print_module(module)


@pytest.mark.parametrize("elem", ["bf16", "f16"])
def test_pass_carries_a_narrow_mul_scan_in_f32(elem: str) -> None:
    combine = f"      %1 = arith.mulf %b, %a : {elem}\n      tt.scan.return %1 : {elem}"
    assert (
        _run_pass(_scan_ttir(elem, combine, reverse=True))
        == f"""module {{
  tt.func public @k(%x: tensor<16x32x{elem}>) -> tensor<16x32x{elem}> {{
    %0 = arith.extf %x : tensor<16x32x{elem}> to tensor<16x32xf32>
    %1 = "tt.scan"(%0) <{{axis = 1 : i32, reverse = true}}> ({{
    ^bb0(%3: f32, %4: f32):
      %5 = arith.mulf %4, %3 : f32
      tt.scan.return %5 : f32
    }}) : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %2 = arith.truncf %1 : tensor<16x32xf32> to tensor<16x32x{elem}>
    tt.return %2 : tensor<16x32x{elem}>
  }}
}}
"""
    )


def test_pass_carries_a_bf16_add_scan_in_f32() -> None:
    combine = "      %1 = arith.addf %a, %b : bf16\n      tt.scan.return %1 : bf16"
    out = _run_pass(_scan_ttir("bf16", combine))
    assert "arith.addf %3, %4 : f32" in out and "arith.truncf %1 : tensor<16x32xf32> to tensor<16x32xbf16>" in out


@pytest.mark.parametrize(
    ("elem", "combine"),
    [
        ("f32", "      %1 = arith.addf %a, %b : f32\n      tt.scan.return %1 : f32"),
        ("i16", "      %1 = arith.addi %a, %b : i16\n      tt.scan.return %1 : i16"),
        ("bf16", "      %1 = arith.maxnumf %a, %b : bf16\n      tt.scan.return %1 : bf16"),
        ("bf16", "      %1 = arith.subf %a, %b : bf16\n      tt.scan.return %1 : bf16"),
        ("bf16", "      %1 = arith.mulf %a, %a : bf16\n      tt.scan.return %1 : bf16"),
        (
            "f16",
            "      %1 = arith.mulf %a, %b : f16\n      %2 = arith.addf %1, %b : f16\n      tt.scan.return %2 : f16",
        ),
    ],
    ids=["f32-add", "i16-add", "bf16-max", "bf16-sub", "bf16-square", "f16-mul-add"],
)
def test_pass_leaves_other_scans_alone(elem: str, combine: str) -> None:
    text = _scan_ttir(elem, combine)
    assert _run_pass(text) == print_module(parse_ttir(text))


def test_pass_is_a_shared_legalization() -> None:
    passes = legalization_passes(TargetDescriptor(name="t", arch="x"), Options())
    assert any(isinstance(p, WideFloatScan) for p in passes)
