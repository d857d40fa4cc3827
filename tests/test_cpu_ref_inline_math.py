"""cpu_ref's inline f32 tanh, erf, log, log2, log10 (backends/cpu_ref/codegen/vmath_more.py), densely.

test_math_library.py holds every backend to libdevice's stated bounds on a few thousand inputs; these functions are
cpu_ref's own polynomial code, so they are checked here over millions of inputs (random bit patterns: every
exponent, subnormals, infinities, NaNs; dense stretches where the formulas change) at the bounds measured when they
were written, plus the exact cases (signed zeros, infinities, NaN payloads), and that the element loop really is
vector code without libm calls (the reason they exist).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

pytestmark = pytest.mark.usefixtures("cpu_ref_active")


@triton.jit
def math_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if FN == "tanh":
        y = libdevice.tanh(x)
    elif FN == "erf":
        y = libdevice.erf(x)
    elif FN == "log":
        y = tl.log(x)
    elif FN == "log2":
        y = tl.log2(x)
    else:
        y = libdevice.log10(x)
    tl.store(out_ptr + offs, y, mask=mask)


#: name -> (float64 reference, max ulp measured when written + margin, dense stretch where the formula changes)
FUNCTIONS = {
    "tanh": (np.tanh, 1.5, (-12.0, 12.0)),
    "erf": (sp.erf, 1.5, (-5.0, 5.0)),
    "log": (np.log, 1.0, (0.25, 4.0)),
    "log2": (np.log2, 1.0, (0.25, 4.0)),
    "log10": (np.log10, 1.0, (0.25, 4.0)),
}


def _launch(fn: str, x: torch.Tensor):
    out = torch.full((x.numel() + 5,), -7.0, dtype=x.dtype)
    kernel = math_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), FN=fn, BLOCK=1024)
    assert (out[x.numel() :] == -7.0).all(), "masked-off lanes were written"
    return out[: x.numel()], kernel


def _run(fn: str, x: torch.Tensor) -> torch.Tensor:
    return _launch(fn, x)[0]


def _ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    ref32 = ref.astype(np.float32)
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref32))
    spacing = np.maximum(np.spacing(np.abs(ref32)).astype(np.float64), 2.0**-149)
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(np.float64) - ref) / spacing
    return np.where(same, 0.0, np.nan_to_num(err, nan=np.inf))


@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_f32_within_bound_over_millions_of_inputs(fn):
    ref_fn, bound, (lo, hi) = FUNCTIONS[fn]
    rng = np.random.default_rng(20261206)
    bits = rng.integers(0, 2**32, 2_000_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = rng.uniform(lo, hi, 1_000_000).astype(np.float32)
    x = np.concatenate([bits, dense])
    got = _run(fn, torch.from_numpy(x)).numpy()
    with np.errstate(all="ignore"):
        err = _ulp_error(got, ref_fn(x.astype(np.float64)))
    worst = int(err.argmax())
    assert err.max() <= bound, f"{fn}: {err.max():.3f} ulp at x={x[worst]!r}: {got[worst]!r}"


INF = float("inf")
NAN = float("nan")


@pytest.mark.parametrize(
    "fn, cases",
    [
        ("tanh", [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (9.0109138, 1.0), (-20.0, -1.0), (1e-45, 1e-45)]),
        ("erf", [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (3.92, 1.0), (-10.0, -1.0)]),
        ("log", [(0.0, -INF), (-0.0, -INF), (1.0, 0.0), (INF, INF), (-1.0, NAN), (-INF, NAN)]),
        ("log2", [(0.0, -INF), (1.0, 0.0), (2.0**-149, -149.0), (2.0**127, 127.0), (INF, INF), (-2.0, NAN)]),
        ("log10", [(0.0, -INF), (1.0, 0.0), (10.0, 1.0), (INF, INF), (-0.5, NAN)]),
    ],
)
def test_exact_cases(fn, cases):
    x = torch.tensor([c[0] for c in cases], dtype=torch.float32)
    got = _run(fn, x).numpy()
    want = np.array([c[1] for c in cases], dtype=np.float32)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (got, want)


@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_nan_keeps_its_payload(fn):
    x = torch.tensor([0x7FC12345, -0x3FFFFF], dtype=torch.int32).view(torch.float32)
    got = _run(fn, x)
    assert got.view(torch.int32).tolist() == x.view(torch.int32).tolist()


@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_element_loop_is_vector_code_without_libm_calls(fn):
    llir = _launch(fn, torch.rand(4096) + 0.5)[1].asm["llir"]
    for name in ("tanhf", "erff", "logf", "log2f", "log10f", "llvm.log.", "llvm.log2.", "llvm.log10."):
        assert name not in llir, f"{fn}: {name} still called"
    assert "<16 x float>" in llir or "<8 x float>" in llir
