"""`@triton.jit(noinline=True)` functions that return tensors, on every backend, against torch.

Triton's frontend lets a noinline function return tensors but refuses tensor arguments; the shared pass
`inline-tensor-calls` (sdk/transforms/inline_calls.py) inlines both kinds of call, so tensor arguments are run from
TTIR text here. Covered: 1-D and 2-D blocks, several dtypes, masked ragged sizes, a callee called twice, nested calls,
a callee with a loop, early returns (several blocks) inlined into a loop, several tensor results, a mask result.
Scalar-only noinline calls stay real calls.
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

DTYPES = {"float32": torch.float32, "float16": torch.float16, "int32": torch.int32, "int8": torch.int8}


def _rand(n: int | tuple[int, ...], dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    shape = (n,) if isinstance(n, int) else n
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    return torch.randint(-100, 100, shape, generator=g, dtype=torch.int32).to(dtype)


@triton.jit(noinline=True)
def _load_block(ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    return tl.load(ptr + offs, mask=offs < n, other=0)


@triton.jit
def _add_blocks(X, Y, Z, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    x = _load_block(X, start, n, BLOCK)
    y = _load_block(Y, start, n, BLOCK)
    offs = start + tl.arange(0, BLOCK)
    tl.store(Z + offs, x + y, mask=offs < n)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("n, block", [(128, 128), (1000, 256), (37, 64)])
def test_called_twice_masked(backend, rng, dtype, n, block):
    """The upstream test_noinline_returns_tensor shape, with masks and ragged sizes: one callee, two calls."""
    t = DTYPES[dtype]
    x, y = _rand(n, t, rng), _rand(n, t, rng)
    z = torch.zeros(n, dtype=t)
    k = _add_blocks[(triton.cdiv(n, block),)](x, y, z, n, BLOCK=block)
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    assert "tt.call" not in k.asm["sdkir"]


@triton.jit(noinline=True)
def _tile(ptr, row0, m, ncols, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = row0 + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    return tl.load(ptr + rows * stride + cols, mask=(rows < m) & (cols < ncols), other=0.0)


@triton.jit(noinline=True)
def _scaled_tile(ptr, row0, m, ncols, stride, BM: tl.constexpr, BN: tl.constexpr):
    return _tile(ptr, row0, m, ncols, stride, BM, BN) * 2.0 + 1.0


@triton.jit
def _nested_2d(X, Out, m, ncols, stride, BM: tl.constexpr, BN: tl.constexpr):
    row0 = tl.program_id(0) * BM
    t = _scaled_tile(X, row0, m, ncols, stride, BM, BN)
    rows = row0 + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(Out + rows * stride + cols, t, mask=(rows < m) & (cols < ncols))


@pytest.mark.parametrize("m, ncols, bm, bn", [(16, 16, 16, 16), (45, 19, 16, 32), (8, 64, 4, 64)])
def test_nested_2d(backend, rng, m, ncols, bm, bn):
    x = torch.randn(m, ncols, generator=rng)
    out = torch.zeros_like(x)
    _nested_2d[(triton.cdiv(m, bm),)](x, out, m, ncols, x.stride(0), BM=bm, BN=bn)
    torch.testing.assert_close(out, x * 2.0 + 1.0, rtol=0, atol=0)


@triton.jit(noinline=True)
def _row_sums(ptr, row0, m, ncols, stride, BM: tl.constexpr, BK: tl.constexpr):
    rows = row0 + tl.arange(0, BM)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, ncols, BK):
        cols = k + tl.arange(0, BK)
        mask = (rows[:, None] < m) & (cols[None, :] < ncols)
        x = tl.load(ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x, axis=1)
    return acc


@triton.jit
def _row_sums_kernel(X, Out, m, ncols, stride, BM: tl.constexpr, BK: tl.constexpr):
    row0 = tl.program_id(0) * BM
    s = _row_sums(X, row0, m, ncols, stride, BM, BK)
    rows = row0 + tl.arange(0, BM)
    tl.store(Out + rows, s, mask=rows < m)


@pytest.mark.parametrize("m, ncols", [(32, 64), (19, 100), (5, 7)])
def test_callee_with_loop(backend, rng, m, ncols):
    x = torch.randn(m, ncols, generator=rng)
    out = torch.zeros(m)
    _row_sums_kernel[(triton.cdiv(m, 8),)](x, out, m, ncols, x.stride(0), BM=8, BK=16)
    torch.testing.assert_close(out, x.sum(dim=1), rtol=1e-5, atol=1e-5)


@triton.jit(noinline=True)
def _step(ptr, start, n, threshold, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    x = tl.load(ptr + offs, mask=offs < n, other=0.0)
    if threshold > 0:
        return x * threshold
    return x - 1.0


@triton.jit
def _early_return_in_loop(X, Out, n, reps, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(reps):
        acc += _step(X, start, n, i - 1, BLOCK)
    tl.store(Out + offs, acc, mask=offs < n)


@pytest.mark.parametrize("reps", [0, 1, 4])
def test_early_return_inside_loop(backend, rng, reps):
    """A callee of several blocks (an early return) inlined into a loop: both returns are taken across iterations."""
    n = 300
    x = torch.randn(n, generator=rng)
    out = torch.full((n,), float("nan"))
    _early_return_in_loop[(triton.cdiv(n, 128),)](x, out, n, reps, BLOCK=128)
    want = torch.zeros(n)
    for i in range(reps):
        want += x * (i - 1) if i - 1 > 0 else x - 1.0
    torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)


@triton.jit(noinline=True)
def _minmax(ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(ptr + offs, mask=mask, other=0)
    b = tl.load(ptr + n + offs, mask=mask, other=0)
    return tl.minimum(a, b), tl.maximum(a, b), mask


@triton.jit
def _minmax_kernel(X, Lo, Hi, Count, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    lo, hi, mask = _minmax(X, start, n, BLOCK)
    tl.store(Lo + offs, lo, mask=mask)
    tl.store(Hi + offs, hi, mask=mask)
    tl.atomic_add(Count, tl.sum(mask.to(tl.int32)))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_several_tensor_results_and_a_mask(backend, rng, dtype):
    t, n = DTYPES[dtype], 200
    x = _rand(2 * n, t, rng)
    lo, hi, count = torch.zeros(n, dtype=t), torch.zeros(n, dtype=t), torch.zeros(1, dtype=torch.int32)
    _minmax_kernel[(triton.cdiv(n, 64),)](x, lo, hi, count, n, BLOCK=64)
    torch.testing.assert_close(lo, torch.minimum(x[:n], x[n:]), rtol=0, atol=0)
    torch.testing.assert_close(hi, torch.maximum(x[:n], x[n:]), rtol=0, atol=0)
    assert int(count) == n


@triton.jit(noinline=True)
def _scalar_fn(a, b):
    return a * 2 + b


@triton.jit
def _mixed(X, Out, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    x = _load_block(X, start, n, BLOCK)
    offs = start + tl.arange(0, BLOCK)
    tl.store(Out + offs, x + _scalar_fn(start, 1), mask=offs < n)


def test_scalar_calls_stay_calls(backend, rng):
    n = 100
    x = torch.randn(n, generator=rng)
    out = torch.zeros(n)
    k = _mixed[(triton.cdiv(n, 32),)](x, out, n, BLOCK=32)
    want = x + (torch.arange(n) // 32 * 32 * 2 + 1).float()
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    sdkir = k.asm["sdkir"]
    assert "tt.call @" in sdkir and "_scalar_fn" in sdkir and "_load_block" not in sdkir


TENSOR_ARGS_TTIR = """
module {
  tt.func private @axpy(%a: tensor<64xf32>, %b: tensor<64xf32>, %s: f32) -> tensor<64xf32> attributes {noinline = true} {
    %0 = tt.splat %s : f32 -> tensor<64xf32>
    %1 = arith.mulf %a, %0 : tensor<64xf32>
    %2 = arith.addf %1, %b : tensor<64xf32>
    tt.return %2 : tensor<64xf32>
  }
  tt.func private @pick(%a: tensor<64xf32>, %m: tensor<64xi1>, %c: i32) -> tensor<64xf32> attributes {noinline = true} {
    %zero = arith.constant 0 : i32
    %big = arith.cmpi sgt, %c, %zero : i32
    cf.cond_br %big, ^bb1, ^bb2(%a : tensor<64xf32>)
  ^bb1:
    %cst = arith.constant dense<-1.000000e+00> : tensor<64xf32>
    %s = arith.select %m, %a, %cst : tensor<64xi1>, tensor<64xf32>
    cf.br ^bb2(%s : tensor<64xf32>)
  ^bb2(%r: tensor<64xf32>):
    %cf = arith.sitofp %c : i32 to f32
    %t = tt.call @axpy(%r, %r, %cf) : (tensor<64xf32>, tensor<64xf32>, f32) -> tensor<64xf32>
    tt.return %t : tensor<64xf32>
  }
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32, %c: i32) {
    %offs = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %ns = tt.splat %n : i32 -> tensor<64xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<64xi32>
    %px = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %ax = tt.addptr %px, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
    %vx = tt.load %ax, %mask, %zero : tensor<64x!tt.ptr<f32>>
    %py = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %ay = tt.addptr %py, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %vy = tt.load %ay, %mask, %zero : tensor<64x!tt.ptr<f32>>
    %three = arith.constant 3.000000e+00 : f32
    %s = tt.call @axpy(%vx, %vy, %three) : (tensor<64xf32>, tensor<64xf32>, f32) -> tensor<64xf32>
    %p = tt.call @pick(%s, %mask, %c) : (tensor<64xf32>, tensor<64xi1>, i32) -> tensor<64xf32>
    %po = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %ao = tt.addptr %po, %offs : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %ao, %p, %mask : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
"""


@pytest.mark.parametrize("c", [-2, 0, 3])
def test_tensor_arguments_from_ttir(backend, rng, tmp_path, c):
    """Tensor and mask arguments (which Triton's frontend refuses), nested calls and a branch joining again."""
    path = tmp_path / "k.ttir"
    path.write_text(TENSOR_ARGS_TTIR)
    kernel = triton.compile(str(path))
    n = 50
    x, y = torch.randn(64, generator=rng), torch.randn(64, generator=rng)
    out = torch.zeros(64)
    kernel[(1, 1, 1)](x, y, out, n, c)
    s = torch.where(torch.arange(64) < n, x, 0.0) * 3 + torch.where(torch.arange(64) < n, y, 0.0)
    r = torch.where(torch.arange(64) < n, s, -1.0) if c > 0 else s
    want = r * float(c) + r
    torch.testing.assert_close(out[:n], want[:n], rtol=1e-6, atol=1e-6)
    assert torch.equal(out[n:], torch.zeros(64 - n))
