"""Wrong results the opencl backend gave on NVIDIA's OpenCL (H200, upstream test_trans_4d, test_dot_multidim,
test_scaled_dot, test_atomic_cas), each checked here on the local OpenCL device (PoCL) in both execution models
(one work-item per program, and 128/256 work-items with local memory and barriers), plus golden text for the
device-scope fences that only NVIDIA gets.

- A reshape between a 1-D tile of >= 4 x work-items elements (held in runs of 4 per work-item) and any other shape
  (element-strided) read the source's register slot as if the layouts were the same: tl.reshape / tl.ravel of a
  loaded tile returned a shuffled tile (the identity permutation of test_trans_4d, the reshaped operands of
  test_dot_multidim, the fp8 upcast of test_scaled_dot's reference).
- OpenCL 1.2's mem_fence is a work-group fence (NVIDIA: membar.cta): a lock shared by work-groups counted 19-48 of
  2000 on the H200; NVIDIA gets inline-PTX fence.acq_rel.gpu around acquire/release atomics and before
  tl.debug_barrier (2000 of 2000).
"""

from __future__ import annotations

import types

import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from triton_backend_sdk.backends.opencl.fences import fence_features
from triton_backend_sdk.backends.opencl.render import OPENCL, OPENCL_RULES, render_module
from triton_backend_sdk.backends.opencl.render.language import FENCE_PTX_ACQ_REL, FENCE_PTX_MEMBAR_GL
from triton_backend_sdk.conformance.sync_kernels import locked_increment
from triton_backend_sdk.ir import parse_ttir

WORK_ITEMS = [None, 128, 256]  # None: the device's own model (one work-item per program on PoCL)


def _launch_opts(work_items: int | None) -> dict:
    return {} if work_items is None else {"work_items": work_items}


# ---- reshapes between the runs-of-4 and the element-strided layouts ---------------------------------------------


@triton.jit
def _ravel_4d(X, Y, n, S0: tl.constexpr, S1: tl.constexpr, S2: tl.constexpr, S3: tl.constexpr):
    i0 = tl.arange(0, S0)[:, None, None, None]
    i1 = tl.arange(0, S1)[None, :, None, None]
    i2 = tl.arange(0, S2)[None, None, :, None]
    i3 = tl.arange(0, S3)[None, None, None, :]
    offs = ((i0 * S1 + i1) * S2 + i2) * S3 + i3
    x = tl.load(X + offs, mask=offs < n, other=-1)
    flat = tl.arange(0, S0 * S1 * S2 * S3)
    tl.store(Y + flat, x.reshape([S0 * S1 * S2 * S3]) * 3 + 1, mask=flat < n)


@triton.jit
def _unravel_1d(X, Y, n, R: tl.constexpr, C: tl.constexpr):
    flat = tl.arange(0, R * C)
    x = tl.load(X + flat, mask=flat < n, other=0).reshape([R, C])
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(Y + offs, x + 1, mask=offs < n)


@pytest.mark.parametrize("work_items", WORK_ITEMS)
@pytest.mark.parametrize("shape", [(2, 2, 8, 64), (4, 4, 4, 16), (2, 2, 4, 32)])
@pytest.mark.parametrize("ragged", [False, True])
def test_reshape_of_a_loaded_4d_tile_to_1d(ocl, rng, work_items, shape, ragged):
    total = shape[0] * shape[1] * shape[2] * shape[3]
    n = total - 37 if ragged else total
    x = torch.randint(-1000, 1000, (total,), generator=rng, dtype=torch.int32)
    y = torch.zeros(total, dtype=torch.int32)
    _ravel_4d[(1,)](x, y, n, *shape, num_warps=8, **_launch_opts(work_items))
    want = torch.zeros(total, dtype=torch.int32)
    want[:n] = x[:n] * 3 + 1
    assert torch.equal(y, want)


@pytest.mark.parametrize("work_items", WORK_ITEMS)
@pytest.mark.parametrize("rc", [(32, 32), (64, 16), (8, 128)])
def test_reshape_of_a_loaded_1d_tile_to_2d(ocl, rng, work_items, rc):
    total = rc[0] * rc[1]
    n = total - 5
    x = torch.randn(total, generator=rng)
    y = torch.zeros(total)
    _unravel_1d[(1,)](x, y, n, *rc, **_launch_opts(work_items))
    want = torch.zeros(total)
    want[:n] = x[:n] + 1
    assert torch.equal(y, want)


@triton.jit
def _dot_of_reshaped(X, Y, Z, RANK: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr):
    x = tl.load(X + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    y = tl.load(Y + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    if TRANS_A:
        x = tl.trans(x)
    if TRANS_B:
        y = tl.trans(y)
    tl.store(Z + tl.arange(0, 256 << RANK), tl.dot(x, y).reshape([256 << RANK]))


@pytest.mark.parametrize("work_items", WORK_ITEMS)
@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True)])
def test_dot_of_reshaped_loads(ocl, rng, work_items, rank, trans_a, trans_b):
    """upstream test_dot_multidim's kernel."""
    shape = (2,) * (rank - 2) + (32, 32)
    a = torch.randint(-4, 5, shape, generator=rng).to(torch.bfloat16)
    b = torch.randint(-4, 5, shape, generator=rng).to(torch.bfloat16)
    c = torch.empty(shape, dtype=torch.float32)
    _dot_of_reshaped[(1,)](a, b, c, rank, trans_a, trans_b, **_launch_opts(work_items))
    aa = a.transpose(-1, -2) if trans_a else a
    bb = b.transpose(-1, -2) if trans_b else b
    torch.testing.assert_close(c, aa.float() @ bb.float(), rtol=0, atol=0)


@triton.jit
def _fp8_upcast_ravel(X, Y, n, F8: tl.constexpr, ROWS: tl.constexpr):
    """test_scaled_dot's reference upcast: fp8 bytes of a (ROWS, 32) tile to bf16, stored through tl.ravel."""
    offs = tl.arange(0, ROWS)[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(X + offs, mask=offs < n)
    up = x.to(F8, bitcast=True).to(tl.bfloat16) * 2.0
    flat = tl.arange(0, ROWS * 32)
    tl.store(Y + flat, tl.ravel(up), mask=flat < n)


@pytest.mark.parametrize("work_items", WORK_ITEMS)
@pytest.mark.parametrize("f8", ["e4m3", "e5m2"])
def test_fp8_upcast_through_ravel(ocl, rng, work_items, f8):
    rows, n = 16, 16 * 32 - 9
    tdt, ldt = {"e4m3": (torch.float8_e4m3fn, tl.float8e4nv), "e5m2": (torch.float8_e5m2, tl.float8e5)}[f8]
    vals = torch.randn(rows * 32, generator=rng).clamp(-200, 200).to(tdt)
    x = vals.view(torch.uint8).clone()
    y = torch.zeros(rows * 32, dtype=torch.bfloat16)
    _fp8_upcast_ravel[(1,)](x, y, n, ldt, rows, **_launch_opts(work_items))
    want = torch.zeros(rows * 32, dtype=torch.bfloat16)
    want[:n] = vals[:n].to(torch.bfloat16) * 2.0
    assert torch.equal(y, want)


# ---- a lock shared by programs (the pattern of upstream test_atomic_cas) -------------------------------------------


@pytest.mark.parametrize("work_items", WORK_ITEMS)
@pytest.mark.parametrize("sem", [None, "acquire", "release", "relaxed"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_lock_and_count(ocl, work_items, sem, dtype):
    programs = 300
    lock = torch.zeros((1,), dtype=dtype)
    data = torch.zeros((128,), dtype=torch.float32)
    tdt = tl.int32 if dtype == torch.int32 else tl.int64
    locked_increment[(programs,)](data, lock, BLOCK=128, LOCK_TYPE=tdt, SEM=sem, **_launch_opts(work_items))
    assert torch.equal(data, torch.full((128,), float(programs)))
    assert int(lock[0]) == 0


LOCK_TTIR = """module {
  tt.func public @k(%data: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %Lock: !tt.ptr<i32>) {
    %true = arith.constant true
    %cst = arith.constant dense<1.000000e+00> : tensor<128xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %s = tt.splat %data : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %p = tt.addptr %s, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    scf.while : () -> () {
      %3 = tt.atomic_cas acquire, gpu, %Lock, %c0, %c1 : (!tt.ptr<i32>, i32, i32) -> i32
      %4 = arith.cmpi eq, %3, %c1 : i32
      scf.condition(%4)
    } do {
      scf.yield
    }
    %0 = tt.load %p : tensor<128x!tt.ptr<f32>>
    %1 = arith.addf %0, %cst : tensor<128xf32>
    tt.store %p, %1 : tensor<128x!tt.ptr<f32>>
    ttg.barrier all
    %2 = tt.atomic_rmw exch, release, gpu, %Lock, %c0, %true : (!tt.ptr<i32>, i32, i1) -> i32
    tt.return
  }
}"""


def _render_lock(features: frozenset[str]) -> str:
    return render_module(parse_ttir(LOCK_TTIR), "k", OPENCL_RULES, OPENCL, 128, features, "test-device").source


@pytest.mark.parametrize(
    "feature, fence",
    [
        (FENCE_PTX_ACQ_REL, 'asm volatile("fence.acq_rel.gpu;" ::: "memory");'),
        (FENCE_PTX_MEMBAR_GL, 'asm volatile("membar.gl;" ::: "memory");'),
    ],
)
def test_device_scope_fences_where_the_descriptor_has_them(feature, fence):
    """acquire: the fence after the compare-and-swap; tl.debug_barrier: a fence, then the barrier; release: the fence
    before the exchange. No work-group fence is left."""
    src = _render_lock(frozenset({feature}))
    check_lines(
        src,
        f"""
        while (1) {{
        atomic_cmpxchg((volatile __global int *)(a_Lock0), 0, 1); {fence} }}
        {fence}
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        {fence} tb_smem->tb_int[0] = ((int)atomic_xchg(
        """,
    )
    assert "mem_fence" not in src


def test_portable_fences_elsewhere():
    src = _render_lock(frozenset())
    check_lines(
        src,
        """
        atomic_cmpxchg((volatile __global int *)(a_Lock0), 0, 1); mem_fence(CLK_GLOBAL_MEM_FENCE); }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        mem_fence(CLK_GLOBAL_MEM_FENCE); tb_smem->tb_int[0] = ((int)atomic_xchg(
        """,
    )
    assert "asm" not in src


def _device(platform: str, cc_major: int | None) -> types.SimpleNamespace:
    def get_info(param: int) -> int:
        if cc_major is None:
            import pyopencl

            raise pyopencl.LogicError("clGetDeviceInfo", pyopencl.status_code.INVALID_VALUE, "no such attribute")
        assert param == 0x4000
        return cc_major

    return types.SimpleNamespace(platform=types.SimpleNamespace(name=platform), extensions="", get_info=get_info)


def test_fence_features_by_device():
    pytest.importorskip("pyopencl")
    assert fence_features(_device("NVIDIA CUDA", 9)) == {FENCE_PTX_ACQ_REL}
    assert fence_features(_device("NVIDIA CUDA", 7)) == {FENCE_PTX_ACQ_REL}
    assert fence_features(_device("NVIDIA CUDA", 6)) == {FENCE_PTX_MEMBAR_GL}
    assert fence_features(_device("NVIDIA CUDA", None)) == {FENCE_PTX_MEMBAR_GL}
    assert fence_features(_device("Portable Computing Language", None)) == set()


# ---- a tile element as a scalar outside any tile loop (upstream test_split_to_scalar on the H200) ------------------


@triton.jit
def _split_pair_to_scalars(X, Z, K):
    pair = tl.load(X + tl.arange(0, 2))
    lo, hi = tl.split(pair)
    total = tl.sum(tl.load(X + 2 + tl.arange(0, 64)), axis=0)
    tl.store(Z, lo * K + hi)
    tl.store(Z + 1, hi - lo + total)


@pytest.mark.parametrize("work_items", WORK_ITEMS)
def test_split_of_a_loaded_pair_to_scalars(ocl, work_items):
    """On a multi-work-item group the pair is spread over the work-items; each scalar is read from its published
    copy (an assertion stopped the compile before, on NVIDIA and on PoCL with 128 work-items)."""
    x = torch.randint(-1000, 1000, (66,), generator=torch.Generator().manual_seed(3), dtype=torch.int64)
    z = torch.zeros(2, dtype=torch.int64)
    _split_pair_to_scalars[(1,)](x, z, 7, **_launch_opts(work_items))
    assert z.tolist() == [int(x[0]) * 7 + int(x[1]), int(x[1]) - int(x[0]) + int(x[2:].sum())]
