"""Regressions from opencl's full upstream run (benchmarks/results/upstream/opencl.txt), checked on every backend.

- `tl.argmax`/`tl.argmin` of floats skip NaN, as `tl.max`/`tl.min` do (upstream `test_argmax_argmin_with_nan`,
  `test_argmax_argmin_tie_break_fast_with_nan`: opencl returned the index of a NaN or of a padded element). The
  shared pass sdk/transforms/nan_arg_reduce.py makes the standard combine's compare put NaN last. Without it,
  `test_argmax_nan_rows` gets 20 of its 40 indices wrong on cpu_ref (which passed the upstream cases only through
  its reduction order), 30 on opencl, 22 on opencl@wg128.
- a scalar argument of 2**63 .. 2**64 - 1 (Triton's `u64`) reaches the kernel as its 64 bits (upstream
  `test_value_specialization_overflow[18446744073709551615-False]`: opencl checked it against i64's range).
"""

from __future__ import annotations

import random

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.descriptor import TargetDescriptor
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.options import Options
from triton_backend_sdk.transforms import legalization_passes
from triton_backend_sdk.transforms.nan_arg_reduce import NanIgnoringArgReduce

NAN = float("nan")


@triton.jit
def _arg_kernel(X, V, Idx, N: tl.constexpr, BLOCK: tl.constexpr, MAX: tl.constexpr, LEFT: tl.constexpr):
    """One row: the value by tl.max/tl.min, the index by tl.argmax/tl.argmin."""
    offs = tl.arange(0, BLOCK)
    m = offs < N
    if MAX:
        x = tl.load(X + offs, mask=m, other=-float("inf"))
        tl.store(V, tl.max(x, axis=0))
        tl.store(Idx, tl.argmax(x, axis=0, tie_break_left=LEFT))
    else:
        x = tl.load(X + offs, mask=m, other=float("inf"))
        tl.store(V, tl.min(x, axis=0))
        tl.store(Idx, tl.argmin(x, axis=0, tie_break_left=LEFT))


@triton.jit
def _arg2d_kernel(X, Idx, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, MAX: tl.constexpr, LEFT: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    if MAX:
        i = tl.argmax(x, axis=AXIS, tie_break_left=LEFT)
    else:
        i = tl.argmin(x, axis=AXIS, tie_break_left=LEFT)
    if AXIS == 0:
        tl.store(Idx + tl.arange(0, N), i)
    else:
        tl.store(Idx + tl.arange(0, M), i)


def _nan_ref(x: torch.Tensor, dim: int, is_max: bool) -> torch.Tensor:
    """numpy's nanargmax/nanargmin through torch: NaN as the value that never wins; torch returns the first of
    equal extremes."""
    filled = torch.where(x.isnan(), float("-inf") if is_max else float("inf"), x.float())
    return filled.argmax(dim) if is_max else filled.argmin(dim)


def _row(n: int, seed: int, nan_frac: float = 0.3) -> list[float]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g)
    x[torch.rand(n, generator=g) < nan_frac] = NAN
    x[int(torch.randint(n, (1,), generator=g))] = 0.5  # at least one number
    return x.tolist()


#: the upstream cases, NaN where a reduction order let it win (first, last, middle, both ends) and random rows
ROWS = [[NAN, 6.0, 8.0], [3.0, 5.0, NAN], [3.0, NAN, 1.0], [3.0, 5.0, 1.0, NAN], [NAN, 1, 2, 3, NAN, 9, 0, NAN]]
ROWS += [_row(n, seed) for n, seed in [(64, 1), (64, 2), (37, 3), (128, 4), (512, 5)]]


@pytest.mark.parametrize("left", [True, False], ids=["tie_left", "tie_fast"])
@pytest.mark.parametrize("is_max", [True, False], ids=["argmax", "argmin"])
def test_argmax_nan_rows(backend: str, is_max: bool, left: bool) -> None:
    for row in ROWS:
        x = torch.tensor(row, dtype=torch.float32)
        v, i = torch.empty((), dtype=torch.float32), torch.empty((), dtype=torch.int32)
        n = len(row)
        _arg_kernel[(1,)](x, v, i, N=n, BLOCK=triton.next_power_of_2(n), MAX=is_max, LEFT=left)
        want = int(_nan_ref(x, 0, is_max))
        assert v.item() == x[want].item(), (row, v.item())
        # random normals have no ties: either tie break gives numpy's index
        assert i.item() == want, (row[:8], n, i.item(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("is_max", [True, False], ids=["argmax", "argmin"])
def test_argmax_nan_2d(backend: str, dtype: torch.dtype, is_max: bool) -> None:
    """Both axes of a 2-D tile with NaN; bf16/f16 rounding of small integers makes many ties, so tie_break_left
    must give the first index of the nan-ignoring extreme and the fast tie break one of them."""
    g = torch.Generator().manual_seed(11)
    M, N = 16, 32
    x = torch.randint(-8, 8, (M, N), generator=g).to(dtype)
    x[torch.rand(M, N, generator=g) < 0.25] = NAN
    x[:, 0] = NAN  # every row and column starts with NaN, where the unmodified combine lets it win from the right
    x[0, :] = NAN
    x[0, 5] = 1.0
    x[7, 0] = -1.0
    for axis in (0, 1):
        want = _nan_ref(x, axis, is_max)
        for left in (True, False):
            got = torch.empty(N if axis == 0 else M, dtype=torch.int32)
            _arg2d_kernel[(1,)](x, got, M=M, N=N, AXIS=axis, MAX=is_max, LEFT=left)
            got = got.long()
            if left:
                assert torch.equal(got, want), (axis, got, want)
            else:
                picked = x.gather(axis, got.unsqueeze(axis)).squeeze(axis)
                extreme = x.gather(axis, want.unsqueeze(axis)).squeeze(axis)
                assert torch.equal(picked, extreme), (axis, picked, extreme)


def test_argmax_all_nan_row_is_the_first_nan(backend: str) -> None:
    """A row of NaNs has no nan-ignoring extreme (numpy raises); with tie_break_left the NaNs tie, so the index is
    the first one's on every backend and in every reduction order."""
    x = torch.full((16,), NAN)
    v, i = torch.empty((), dtype=torch.float32), torch.empty((), dtype=torch.int32)
    for is_max in (True, False):
        _arg_kernel[(1,)](x, v, i, N=16, BLOCK=16, MAX=is_max, LEFT=True)
        assert i.item() == 0 and v.isnan().item()


@triton.jit
def _int_argmax_kernel(X, Idx, BLOCK: tl.constexpr):
    tl.store(Idx, tl.argmax(tl.load(X + tl.arange(0, BLOCK)), axis=0))


def test_integer_argmax_is_unchanged(backend: str) -> None:
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-50, 50, (256,), generator=g, dtype=torch.int32)
    i = torch.empty((), dtype=torch.int32)
    _int_argmax_kernel[(1,)](x, i, BLOCK=256)
    assert i.item() == int(x.argmax())


# ---- golden IR of the pass -------------------------------------------------------------------------------------------


def _reduce_ttir(body: str, elem: str = "f32") -> str:
    return f"""module {{
  tt.func public @k(%x: tensor<8x{elem}>, %i: tensor<8xi32>) -> i32 {{
    %0:2 = "tt.reduce"(%x, %i) <{{axis = 0 : i32}}> ({{
    ^bb0(%a: {elem}, %ai: i32, %b: {elem}, %bi: i32):
{body}
    }}) : (tensor<8x{elem}>, tensor<8xi32>) -> ({elem}, i32)
    tt.return %0#1 : i32
  }}
}}
"""


def _run_pass(text: str) -> str:
    module = parse_ttir(text)
    NanIgnoringArgReduce().run(module, None)
    verify(module)
    return print_module(module)


ARGMAX_LEFT = """      %t = arith.cmpf oeq, %a, %b : f32
      %t2 = arith.cmpi slt, %ai, %bi : i32
      %t3 = arith.andi %t, %t2 : i1
      %g = arith.cmpf ogt, %a, %b : f32
      %g2 = arith.ori %g, %t3 : i1
      %v = arith.select %g2, %a, %b : f32
      %j = arith.select %g2, %ai, %bi : i32
      tt.reduce.return %v, %j : f32, i32"""


def test_pass_makes_nan_lose_and_tie() -> None:
    assert (
        _run_pass(_reduce_ttir(ARGMAX_LEFT))
        == """module {
  tt.func public @k(%x: tensor<8xf32>, %i: tensor<8xi32>) -> i32 {
    %0:2 = "tt.reduce"(%x, %i) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
      %1 = arith.cmpf uno, %b, %b : f32
      %2 = arith.cmpf ord, %a, %a : f32
      %3 = arith.cmpf uno, %a, %a : f32
      %t = arith.cmpf oeq, %a, %b : f32
      %4 = arith.andi %3, %1 : i1
      %5 = arith.ori %t, %4 : i1
      %t2 = arith.cmpi slt, %ai, %bi : i32
      %t3 = arith.andi %5, %t2 : i1
      %g = arith.cmpf ogt, %a, %b : f32
      %6 = arith.andi %2, %1 : i1
      %7 = arith.ori %g, %6 : i1
      %g2 = arith.ori %7, %t3 : i1
      %v = arith.select %g2, %a, %b : f32
      %j = arith.select %g2, %ai, %bi : i32
      tt.reduce.return %v, %j : f32, i32
    }) : (tensor<8xf32>, tensor<8xi32>) -> (f32, i32)
    tt.return %0#1 : i32
  }
}
"""
    )


def test_pass_rewrites_the_fast_argmin_combine() -> None:
    body = """      %l = arith.cmpf olt, %a, %b : bf16
      %v = arith.select %l, %a, %b : bf16
      %j = arith.select %l, %ai, %bi : i32
      tt.reduce.return %v, %j : bf16, i32"""
    # no tie: nothing tests the left value for NaN; both selects read the NaN-aware predicate
    assert _run_pass(_reduce_ttir(body, "bf16")).split("^bb0")[1].split("})")[0] == (
        """(%a: bf16, %ai: i32, %b: bf16, %bi: i32):
      %1 = arith.cmpf uno, %b, %b : bf16
      %2 = arith.cmpf ord, %a, %a : bf16
      %l = arith.cmpf olt, %a, %b : bf16
      %3 = arith.andi %2, %1 : i1
      %4 = arith.ori %l, %3 : i1
      %v = arith.select %4, %a, %b : bf16
      %j = arith.select %4, %ai, %bi : i32
      tt.reduce.return %v, %j : bf16, i32
    """
    )


@pytest.mark.parametrize(
    "body",
    [
        ARGMAX_LEFT.replace("ogt", "oge"),  # another predicate
        ARGMAX_LEFT.replace("%j = arith.select %g2, %ai, %bi", "%j = arith.select %g2, %bi, %ai"),  # swapped index
        ARGMAX_LEFT.replace("%g = arith.cmpf ogt, %a, %b", "%g = arith.cmpf ogt, %b, %a"),  # swapped compare
        ARGMAX_LEFT.replace(
            "      %v = arith.select %g2, %a, %b : f32",
            "      %w = arith.addf %a, %b : f32\n      %v = arith.select %g2, %w, %b : f32",
        ),  # anything else in the region
    ],
    ids=["oge", "swapped-index", "swapped-compare", "extra-op"],
)
def test_pass_leaves_other_combines_alone(body: str) -> None:
    text = _reduce_ttir(body)
    assert _run_pass(text) == print_module(parse_ttir(text))


def test_pass_is_a_shared_legalization() -> None:
    passes = legalization_passes(TargetDescriptor(name="t", arch="x"), Options())
    assert any(isinstance(p, NanIgnoringArgReduce) for p in passes)


# ---- u64 scalar arguments --------------------------------------------------------------------------------------------


@triton.jit
def _u64_kernel(VALUE, Out):
    tl.store(Out, VALUE)
    tl.store(Out + 1, VALUE // 3)
    tl.store(Out + 2, VALUE >> 7)
    tl.store(Out + 3, VALUE % 1000)


def _signed64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def test_u64_scalar_argument(backend: str) -> None:
    """Triton types an int in [2**63, 2**64) as u64: the kernel sees its 64 bits, and unsigned division, shift and
    remainder of it (what upstream test_value_specialization_overflow launches, with 2**64 - 1, checked here by
    value)."""
    rnd = random.Random(64)
    values = [2**64 - 1, 2**63, 2**64 - 2] + [rnd.randrange(2**63, 2**64) for _ in range(5)]
    out = torch.empty(4, dtype=torch.int64)
    for v in values:
        _u64_kernel[(1,)](v, out)
        want = [_signed64(x) for x in (v, v // 3, v >> 7, v % 1000)]
        assert out.tolist() == want, hex(v)


def test_u64_scalar_argument_overflow_still_raises(backend: str) -> None:
    out = torch.empty(4, dtype=torch.int64)
    with pytest.raises(OverflowError):
        _u64_kernel[(1,)](2**64, out)
