"""fp8 constants the format does not hold exactly (sdk/transforms/fp8_casts.py): Triton makes them `arith.truncf` of
an f32 constant, which the pass folds to the nearest-even fp8 value (`numerics_fp8.fp8_bits`). cpu_ref used to emit
LLVM's invalid `fptrunc float ... to i8` for them. Checked as golden IR and, on every backend, bit for bit against
torch's float32 -> float8 conversion (in range; beyond it the SDK saturates, as its `tt.fp_to_fp` does)."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.ir.types import FloatKind
from triton_backend_sdk.numerics_fp8 import FP8_FORMATS, fp8_bits
from triton_backend_sdk.transforms.fp8_casts import Fp8Casts

FORMATS = {
    "fp8e4nv": (tl.float8e4nv, torch.float8_e4m3fn, FloatKind.F8E4M3FN),
    "fp8e5": (tl.float8e5, torch.float8_e5m2, FloatKind.F8E5M2),
}
#: ties between two codes (1.0625 and 1.1875 in e4m3, 1.125 and 1.375 in e5m2), inexact values, subnormals,
#: underflow to +-0, and one beyond either format's range (saturates)
CONSTANTS = [0.1, -0.3, 1.0625, 1.1875, 1.125, -1.375, 3.0e-3, -7.0e-4, 1.0e-9, -1.0e-9, 3.3, 1.0e6]


def test_fold_golden() -> None:
    """truncf of a scalar and of a dense f32 constant become fp8 constants holding the rounded values; a truncf of
    a non-constant becomes tt.fp_to_fp rtne, an extf from fp8 a plain tt.fp_to_fp."""
    module = parse_ttir("""module {
  tt.func public @k(%x: tensor<4xf32>) -> (tensor<4xf8E5M2>, f8E4M3FN, tensor<2xf8E5M2>, tensor<4xf32>) {
    %c = arith.constant 1.000000e-01 : f32
    %d = arith.constant dense<[1.125000e+00, -3.000000e-01]> : tensor<2xf32>
    %a = arith.truncf %c : f32 to f8E4M3FN
    %b = arith.truncf %d : tensor<2xf32> to tensor<2xf8E5M2>
    %t = arith.truncf %x : tensor<4xf32> to tensor<4xf8E5M2>
    %e = arith.extf %t : tensor<4xf8E5M2> to tensor<4xf32>
    tt.return %t, %a, %b, %e : tensor<4xf8E5M2>, f8E4M3FN, tensor<2xf8E5M2>, tensor<4xf32>
  }
}""")
    Fp8Casts().run(module, None)
    verify(module)
    text = print_module(module)
    assert "arith.truncf" not in text and "arith.extf" not in text
    assert "arith.constant 1.015625e-01 : f8E4M3FN" in text  # 0.1 -> 0.1015625 (e4m3)
    assert "arith.constant dense<[1.000000e+00, -3.125000e-01]> : tensor<2xf8E5M2>" in text  # tie -> even
    assert "tt.fp_to_fp %x, rounding = rtne : tensor<4xf32> -> tensor<4xf8E5M2>" in text
    assert "rounding" not in next(line for line in text.splitlines() if "-> tensor<4xf32>" in line)


@triton.jit
def _consts(x_ptr, o_ptr, n, C: tl.constexpr, LO: tl.constexpr, F8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x_ptr + offs, mask=m, other=0.0).to(F8)
    outs = (
        a + C,
        tl.where(a >= C, a, -a),
        tl.full((BLOCK,), C, F8),
        tl.clamp(a, LO, C),
    )
    for i in tl.static_range(4):
        tl.store(o_ptr + i * n + offs, outs[i].to(tl.uint8, bitcast=True), mask=m)


def _code(v: torch.Tensor, f8: torch.dtype) -> list[int]:
    return v.to(f8).view(torch.uint8).tolist()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_inexact_constants_match_torch(backend: str, fmt: str) -> None:
    tl_t, f8, kind = FORMATS[fmt]
    n = 333  # ragged: the last program's tail is masked
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, generator=g)
    a = x.to(f8).float()
    top = FP8_FORMATS[kind].decode(FP8_FORMATS[kind].max_code)
    for c in CONSTANTS:
        lo = -abs(c) / 3
        o = torch.zeros(4 * n, dtype=torch.uint8)
        _consts[(triton.cdiv(n, 128),)](x, o, n, C=c, LO=lo, F8=tl_t, BLOCK=128)
        got = o.view(4, n).tolist()
        if abs(c) > top:  # saturates (torch gives inf or NaN): the SDK's conversion
            cf = torch.tensor(top if c > 0 else -top)
            assert fp8_bits(c, FP8_FORMATS[kind]) == FP8_FORMATS[kind].max_code
        else:
            cf = torch.tensor(c).to(f8).float()
        lof = torch.tensor(lo).to(f8).float()
        assert got[0] == _code(a + cf, f8), (c, "add")
        assert got[1] == _code(torch.where(a >= cf, a, -a), f8), (c, "compare")
        assert got[2] == _code(cf.expand(n), f8), (c, "full")
        clamped = torch.tensor(got[3], dtype=torch.uint8).view(f8).float()  # by value: clamp(-0, -0, +0) is either
        assert clamped.tolist() == torch.minimum(torch.maximum(a, lof), cf).tolist(), (c, "clamp")
