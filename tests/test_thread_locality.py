"""The shared `thread-locality` pass (sdk/transforms/thread_locality.py): a reduction combined into a loop-carried
value keeps lane-wide partial results in the loop and is reduced once after it.

Golden IR of what it rewrites and what it must leave alone, then kernels on every backend against torch (random data,
ragged masked sizes, NaN and -0.0 initial values, loops that run no iteration); cpu_ref applies the pass, so its
`ttgir` shows the two reductions upstream's test_optimize_thread_locality counts.
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.ir import parse_ttir, print_module, verify
from triton_backend_sdk.ir.types import f16, f32, i1
from triton_backend_sdk.transforms.thread_locality import MAX_LANES, ThreadLocality, lanes_for

LOOP = """module {{
  tt.func public @k(%p: !tt.ptr<f32>, %n: i32) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<1.5> : tensor<8xf32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x64x!tt.ptr<f32>>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<8xf32>)  : i32 {{
      %x = tt.load %ps : tensor<8x64x!tt.ptr<f32>>
      %s = "tt.reduce"(%x) <{{axis = 1 : i32}}> ({{
      ^bb0(%a: f32, %b: f32):
        %c = {combine} %a, %b : f32
        tt.reduce.return %c : f32
      }}) : (tensor<8x64xf32>) -> tensor<8xf32>
{body}
      scf.yield %t : tensor<8xf32>
    }}
    %q = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    tt.store %q, %r : tensor<8x!tt.ptr<f32>>
    tt.return
  }}
}}"""


def _run(
    combine: str = "arith.addf", body: str = "      %t = arith.addf %acc, %s : tensor<8xf32>", bits: int = 512
) -> str:
    module = parse_ttir(LOOP.format(combine=combine, body=body))
    ThreadLocality(vector_width_bits=bits).run(module, None)
    verify(module)
    return print_module(module)


def test_sum_keeps_lane_partials_and_reduces_after_the_loop():
    text = _run()
    check_lines(
        text,
        """
        arith.constant dense<-0.000000e+00> : tensor<8x16xf32>
        scf.for %i = %c0 to %n step %c1 iter_args(%acc = %0) -> (tensor<8x16xf32>)
        tt.reshape %x : tensor<8x64xf32> -> tensor<8x4x16xf32>
        "tt.reduce"(
        arith.addf %a, %b : f32
        (tensor<8x4x16xf32>) -> tensor<8x16xf32>
        %t = arith.addf %acc,
        scf.yield %t : tensor<8x16xf32>
        "tt.reduce"(%r)
        arith.addf %a, %b : f32
        (tensor<8x16xf32>) -> tensor<8xf32>
        arith.addf %init,
        tt.store %q,
        """,
    )
    assert text.count('"tt.reduce"') == 2
    assert parse_ttir(text) is not None  # the stage's text reads back (dumps recompile from it)


@pytest.mark.parametrize(
    "combine,neutral",
    [("arith.maxnumf", "0x7FC00000"), ("arith.maximumf", "0xFF800000"), ("arith.minimumf", "0x7F800000")],
)
def test_neutral_element_of_each_combine(combine: str, neutral: str):
    text = _run(combine, f"      %t = {combine} %s, %acc : tensor<8xf32>")
    check_lines(text, f"arith.constant dense<{neutral}> : tensor<8x16xf32>\nscf.for")
    # the operand order of the loop's combine is kept after it: init takes the carried value's place
    assert f"{combine} %1, %init : tensor<8xf32>" in text
    assert text.count('"tt.reduce"') == 2


def test_lanes_from_the_vector_width():
    assert _run(bits=128).count("tensor<8x4xf32>") >= 2  # 128-bit vectors: 4 f32 lanes
    assert lanes_for(f16, 512, 64) == 32
    assert lanes_for(f32, 512, 24) == 8  # halved until it divides the axis
    assert lanes_for(i1, 512, 1024) == MAX_LANES


@pytest.mark.parametrize(
    "why,combine,body",
    [
        ("the loop combines with another op", "arith.addf", "      %t = arith.maxnumf %acc, %s : tensor<8xf32>"),
        ("subtraction has no neutral element", "arith.subf", "      %t = arith.subf %acc, %s : tensor<8xf32>"),
        (
            "the carried value has a second use",
            "arith.addf",
            "      %u = arith.addf %acc, %s : tensor<8xf32>\n      %t = arith.mulf %u, %acc : tensor<8xf32>",
        ),
        (
            "the reduction has a second use",
            "arith.addf",
            "      %u = arith.addf %acc, %s : tensor<8xf32>\n      %t = arith.addf %u, %s : tensor<8xf32>",
        ),
    ],
)
def test_left_alone(why: str, combine: str, body: str):
    text = _run(combine, body)
    assert text.count('"tt.reduce"') == 1 and "tt.reshape" not in text, why


def test_axis_not_longer_than_the_lanes_is_left_alone():
    assert "tt.reshape" not in _run(bits=4096)  # 64 lanes of f32 cover the whole axis: nothing to keep lane-wise


# ---- kernels -------------------------------------------------------------------------------------------------------


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _rows_kernel(X, Init, Y, M: tl.constexpr, N, BLOCK_N: tl.constexpr, OP: tl.constexpr):
    """Y[m] = OP(Init[m], OP over X[m, :N]) with the accumulation in a loop over column blocks."""
    rows = tl.arange(0, M)
    local = tl.load(Init + rows)
    for start in range(tl.cdiv(N, BLOCK_N)):
        cols = start * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = cols[None, :] < N
        ptrs = X + rows[:, None] * N + cols[None, :]
        if OP == "sum":
            local = local + tl.sum(tl.load(ptrs, mask=mask, other=0), axis=1)
        elif OP == "max":
            local = tl.maximum(local, tl.max(tl.load(ptrs, mask=mask, other=float("-inf")), axis=1))
        elif OP == "min":
            local = tl.minimum(tl.min(tl.load(ptrs, mask=mask, other=float("inf")), axis=1), local)
        elif OP == "max_nan":
            x = tl.load(ptrs, mask=mask, other=float("-inf"))
            local = tl.maximum(local, tl.reduce(x, 1, _max_nan), propagate_nan=tl.PropagateNan.ALL)
        elif OP == "isum":
            local = local + tl.sum(tl.load(ptrs, mask=mask, other=0), axis=1)
        else:
            local = local ^ tl.xor_sum(tl.load(ptrs, mask=mask, other=0), axis=1)
    tl.store(Y + rows, local)


def _reference(op: str, x: torch.Tensor, init: torch.Tensor) -> torch.Tensor:
    if op in ("sum", "isum"):
        return init + x.sum(1, dtype=x.dtype) if x.shape[1] else init
    if op == "xor":
        out = init.clone()
        for j in range(x.shape[1]):
            out ^= x[:, j]
        return out
    if not x.shape[1]:
        return init
    if op == "max":
        return torch.fmax(init, x.max(1).values)
    if op == "min":
        return torch.fmin(init, x.min(1).values)
    return torch.maximum(init, x.max(1).values)  # max_nan: NaN anywhere in a row gives NaN


def _data(op: str, n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    if op in ("isum", "xor"):
        x = torch.randint(-(2**20), 2**20, (8, n), generator=gen, dtype=torch.int32)
        return x, torch.randint(-100, 100, (8,), generator=gen, dtype=torch.int32)
    x = torch.randn(8, n, generator=gen)
    init = torch.randn(8, generator=gen)
    init[0], init[1] = float("nan"), -0.0  # NaN passes through maxnum/minnum, -0.0 through a sum of nothing
    if op == "max_nan" and n > 3:
        x[2, n // 2] = float("nan")
    return x, init


@pytest.mark.parametrize("op", ["sum", "max", "min", "max_nan", "isum", "xor"])
@pytest.mark.parametrize("n", [0, 64, 200, 517])
def test_loop_reduction_matches_torch(backend: str, op: str, n: int):
    gen = torch.Generator().manual_seed(n * 7 + len(op))
    x, init = _data(op, n, gen)
    y = torch.empty_like(init)
    h = _rows_kernel[(1,)](x, init, y, M=8, N=n, BLOCK_N=64, OP=op)
    ref = _reference(op, x, init)
    if op == "sum":
        torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5, equal_nan=True)
    else:
        torch.testing.assert_close(y, ref, rtol=0, atol=0, equal_nan=True)
    if n == 0:  # no iteration: the initial values, bit for bit (-0.0) but for NaN payloads (CUDA's min.NaN and
        # opencl's NaN-propagating min/max give the canonical NaN, as `op(init, neutral)` after the loop may)
        nan = init.isnan()
        assert torch.equal(y.isnan(), nan)
        assert torch.equal(y[~nan].view(torch.int32), init[~nan].view(torch.int32))
    assert h.asm["ttgir"].count('"tt.reduce"') == 2  # both SDK backends run the pass


@triton.jit
def _columns_and_scalar_kernel(X, Y, S, N, BLOCK_M: tl.constexpr, NCOL: tl.constexpr):
    """Y[c] = sum over rows of X[:, c] (axis 0), S = max of X: a scalar carried value."""
    cols = tl.arange(0, NCOL)
    acc = tl.zeros([NCOL], dtype=tl.float32)
    best = float("-inf")
    for start in range(tl.cdiv(N, BLOCK_M)):
        rows = start * BLOCK_M + tl.arange(0, BLOCK_M)
        x = tl.load(X + rows[:, None] * NCOL + cols[None, :], mask=rows[:, None] < N, other=0.0)
        acc += tl.sum(x, axis=0)
        flat = tl.load(X + rows * NCOL, mask=rows < N, other=float("-inf"))
        best = tl.maximum(best, tl.max(flat, axis=0))
    tl.store(Y + cols, acc)
    tl.store(S, best)


@pytest.mark.parametrize("n", [1, 96, 301])
def test_axis0_and_scalar_accumulators(backend: str, n: int):
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(n, 4, generator=gen)
    y, s = torch.empty(4), torch.empty(1)
    h = _columns_and_scalar_kernel[(1,)](x, y, s, n, BLOCK_M=32, NCOL=4)
    torch.testing.assert_close(y, x.sum(0), rtol=1e-5, atol=1e-5)
    assert s.item() == x[:, 0].max().item()
    if n > 1:  # N = 1 is specialized: the one-trip loop is folded away
        assert h.asm["ttgir"].count('"tt.reduce"') == 4
