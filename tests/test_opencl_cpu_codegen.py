"""opencl code for CPU devices (one work-item per program): loads read where their value is consumed (one loop for
a vector add) but never past a write (checked on every backend: cpu_ref defers loads into stores too), and the inline fp32 `exp` (1 ulp over the fp32 range) — golden OpenCL
fragments, and results on this machine's OpenCL device."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from golden_ir import check_lines
from test_opencl_render import render
from triton.language.extra import libdevice

CPU = frozenset({"device_type_cpu"})

ADD = """
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = tt.splat %n : i32 -> tensor<64xi32>
    %m = arith.cmpi slt, %r, %s : tensor<64xi32>
    %px = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %qx = tt.addptr %px, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %py = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %qy = tt.addptr %py, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %a = tt.load %qx, %m : tensor<64x!tt.ptr<f32>>
    %b = tt.load %qy, %m : tensor<64x!tt.ptr<f32>>
    %c = arith.addf %a, %b : tensor<64xf32>
    tt.store %qy, %c, %m : tensor<64x!tt.ptr<f32>>
"""
ARGS = "%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %n: i32"


def test_loads_are_read_in_the_consuming_loop_on_a_cpu_device():
    src = render(ADD, ARGS, local_size=1, features=CPU)
    check_lines(
        src,
        """
        for (uint r0 = 0u; r0 < 64u; ++r0) {
        if ((((int)i0) < a_n0)) { *((a_y0 + ((int)i0))) = (*((a_x0 + ((int)i0))) + *((a_y0 + ((int)i0)))); }
    """,
    )
    assert src.count("for (uint") == 1 and "float t_" not in src


def test_a_load_under_another_mask_than_its_store_keeps_its_test():
    """The loads above need no test of their own (the store's `if (mask)` tests the same mask value at the same
    element: analysis.uses.mask_implied_by_sink); a load under a different mask still tests it."""
    body = ADD.replace(
        "    %b = tt.load %qy, %m",
        "    %t = arith.constant dense<8> : tensor<64xi32>\n"
        "    %m2 = arith.cmpi slt, %r, %t : tensor<64xi32>\n"
        "    %b = tt.load %qy, %m2",
    )
    src = render(body, ARGS, local_size=1, features=CPU)
    check_lines(
        src,
        """
        if ((((int)i0) < a_n0)) { *((a_y0 + ((int)i0))) = (*((a_x0 + ((int)i0))) + ((((int)i0) < 8) ? *((a_y0 + ((int)i0))) : 0.0f)); }
    """,
    )


def test_a_load_is_not_moved_past_a_store():
    """`a = x[i]; x[i] = 0; y[i] = a` must store the old values: the load stays ahead of the first store."""
    body = ADD.replace(
        "    tt.store %qy, %c, %m",
        "    %z = arith.constant dense<0.0> : tensor<64xf32>\n"
        "    tt.store %qx, %z, %m : tensor<64x!tt.ptr<f32>>\n    tt.store %qy, %c, %m",
    )
    src = render(body, ARGS, local_size=1, features=CPU)
    assert "float t_a" in src and src.index("float t_a") < src.index("0.0f; }")
    gpu = render(ADD, ARGS, local_size=128, features=frozenset())
    assert "float t_a" in gpu  # a GPU-shaped group keeps its own path (vector runs)


@triton.jit
def _store_after_load_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x_ptr + offs, mask=m)
    tl.store(x_ptr + offs, tl.zeros_like(a), mask=m)
    tl.store(y_ptr + offs, a * 2, mask=m)


@triton.jit
def _exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, PRECISE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, libdevice.exp(x) if PRECISE else tl.exp(x), mask=m)


def test_store_after_load_keeps_the_loaded_values(backend):
    """On every backend: a load that feeds a later store is not read after an earlier store to its addresses."""
    x = torch.randn(1000)
    want = x * 2
    y = torch.empty(1000)
    _store_after_load_kernel[(1,)](x, y, 1000, BLOCK=1024)
    assert torch.equal(y, want) and torch.equal(x, torch.zeros(1000))


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


@pytest.mark.parametrize("precise", [False, True], ids=["tl_exp", "libdevice_exp"])
def test_exp_is_within_one_ulp_over_the_fp32_range(ocl, precise):
    """Random values over [-110, 95] (overflow, subnormal results, underflow to 0), small arguments, the limits and
    inf/NaN, against float64 exp rounded to fp32. 1 ulp on a CPU device (the inline exp); a GPU's OpenCL `exp` is
    its driver's, held to the OpenCL 1.2 full-profile bound of 3 ulp (NVIDIA's is 2 ulp off at most on the H200).
    On NVIDIA `tl.exp` is Triton's CUDA path's ex2.approx.ftz of x·log2 e: held to a relative 2^-21 + |x|·2^-22
    (the rounded product) below overflow, subnormal results within 2^-126 (flushed to 0); libdevice's exp there
    is still the precise one."""
    from triton_backend_sdk.backends.opencl.render.language import EXP2_PTX_APPROX
    from triton_backend_sdk.backends.opencl.runtime import features_of, selected_device

    feats = features_of(selected_device())
    bound = 1 if "device_type_cpu" in feats else 3
    approx = not precise and EXP2_PTX_APPROX in feats
    g = np.random.default_rng(3)
    special = [
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        88.72283,
        88.72284,
        -87.33654,
        -103.2789,
        -103.97,
        -104.0,
        -200.0,
        200.0,
        np.inf,
        -np.inf,
        np.nan,
    ]
    x = np.concatenate(
        [g.uniform(-110, 95, 200_000), g.uniform(-1, 1, 100_000), g.uniform(-90, -85, 50_000), special]
    ).astype(np.float32)
    y = torch.empty(x.size)
    _exp_kernel[(triton.cdiv(x.size, 1024),)](torch.from_numpy(x), y, x.size, BLOCK=1024, PRECISE=precise)
    got = y.numpy()
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    fin = np.isfinite(want)
    if approx:
        normal, near_max = want >= np.float32(2.0**-126), x > 88.5
        sel = normal & fin & ~near_max
        rel = np.abs(got[sel].astype(np.float64) / want[sel].astype(np.float64) - 1.0)
        assert (rel <= 2.0**-21 + np.abs(x[sel].astype(np.float64)) * 2.0**-22).all()
        sub = fin & ~normal
        assert (np.abs(got[sub] - want[sub]) <= 2.0**-126).all()
        assert np.array_equal(got[~np.isfinite(x)], want[~np.isfinite(x)], equal_nan=True)
        return
    assert _ulps(got[fin], want[fin]).max() <= bound
    assert np.array_equal(got[~fin], want[~fin], equal_nan=True)


@triton.jit
def _unary_kernel(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = libdevice.erf(x) if FN == "erf" else tl.log(x)
    tl.store(y_ptr + offs, y, mask=m)


@pytest.mark.parametrize("fn", ["erf", "log"])
def test_cpu_device_computes_erf_and_log_inline(fn):
    """A CPU device computes fp32 erf and log with the polynomials cpu_ref uses (sdk/math_polynomials.py) in
    forced-inline helpers (PoCL left the loop scalar around a call to a large helper, and its own erf and log cost
    ~20 and ~7 ns per element); other devices keep the built-ins."""
    from triton_backend_sdk import math_polynomials as P

    body = ADD.replace("%c = arith.addf %a, %b", f"%e = math.{fn} %a : tensor<64xf32>\n    %c = arith.addf %e, %b")
    cl = render(body, ARGS, local_size=1, features=CPU)
    coefficient = P.ERF_BIG if fn == "erf" else P.LOG_S[-1]
    check_lines(cl, f"__attribute__((always_inline)) inline float tb_{fn}_f32(float x) {{\n{coefficient!r}f")
    assert "tb_exp_f32" not in cl and f"tb_{fn}_f32(" in cl.split("__kernel")[1]
    assert f"tb_{fn}_f32" not in render(body, ARGS, features=frozenset())


@pytest.mark.parametrize("fn", ["erf", "log"])
def test_erf_and_log_within_bound_on_the_device(ocl, fn):
    """Random bit patterns (every exponent, subnormals, infinities, NaNs, negatives) and the ranges where the
    formulas change, against float64: the inline polynomials' 1.16 (erf) and 0.85 (log) ulp on a CPU device,
    OpenCL 1.2's 16 and 3 ulp elsewhere."""
    import scipy.special as sp
    from triton_backend_sdk.backends.opencl.runtime import features_of, selected_device

    cpu = "device_type_cpu" in features_of(selected_device())
    bound = {"erf": 1.5 if cpu else 16, "log": 1.0 if cpu else 3}[fn]
    g = np.random.default_rng(11)
    bits = g.integers(0, 2**32, 1_000_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = g.uniform(-5, 5, 500_000) if fn == "erf" else g.uniform(0.25, 4, 500_000)
    specials = [0.0, -0.0, 0.9, 3.92, 1.0, np.inf, -np.inf, -1.0, 1e-45]
    x = np.concatenate([bits, dense.astype(np.float32), np.float32(specials)])
    y = torch.empty(x.size)
    _unary_kernel[(triton.cdiv(x.size, 1024),)](torch.from_numpy(x), y, x.size, FN=fn, BLOCK=1024)
    got = y.numpy()
    with np.errstate(all="ignore"):
        ref = sp.erf(x.astype(np.float64)) if fn == "erf" else np.log(x.astype(np.float64))
    ref32 = ref.astype(np.float32)
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref32))
    with np.errstate(all="ignore"):
        err = np.where(same, 0.0, np.abs(got - ref) / np.spacing(np.abs(ref32)).astype(np.float64))
    assert np.nan_to_num(err, nan=np.inf).max() <= bound, f"{err.max():.2f} ulp at x={x[err.argmax()]!r}"
    assert (np.signbit(got) == np.signbit(ref32))[~np.isnan(ref32)].all()


def _cpu_device() -> bool:
    from triton.runtime import driver
    from triton_backend_sdk.backends.opencl.compiler import CPU_FEATURE

    return CPU_FEATURE in driver.active.descriptor().features


@pytest.mark.parametrize(
    "n_cols,block,work_items", [(4096, 4096, 1), (4000, 4096, 1), (1000, 1024, 1), (4000, 4096, 128)]
)
def test_long_rows_are_prefetched_ahead_in_their_walk(ocl, n_cols, block, work_items):
    """A row walk over a long contiguous fp32 row (softmax's load, max and sum in one pass) prefetches 2 KiB ahead of
    the element it reads, once per 64-byte line (`tile_model.row_prefetch_distance`), on a CPU device; rows under
    8 KiB and multi-work-item groups have none. Results match torch, ragged rows included."""
    from triton_backend_sdk.demo import softmax_kernel

    prefetching = block * 4 >= 8192 and work_items == 1
    if prefetching and not _cpu_device():
        pytest.skip("a GPU device: its row walks do not prefetch (the prefetch is a CPU device's)")

    m = 5
    x = torch.randn(m, n_cols, generator=torch.Generator().manual_seed(2))
    y = torch.full_like(x, float("nan"))
    k = softmax_kernel[(m,)](y, x, x.stride(0), y.stride(0), n_cols, BLOCK=block, work_items=work_items)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-7)
    src = k.asm["cl"]
    if prefetching:
        assert src.count("__builtin_prefetch(") == 2 and src.count(") + 512);") == 2
    else:
        assert "__builtin_prefetch(" not in src


@pytest.mark.parametrize("size", [256, 200])
def test_one_work_item_dot_uses_aligned_vectors(ocl, size):
    """On one work-item the register tiles are 64-byte aligned stack arrays and the dot's register blocks read and
    write them as aligned vectors (PoCL split `vload16`/`vstore16` of unaligned arrays into pieces); results match
    torch, a ragged size included. The expected blocks are an AVX-512 CPU device's (16-float vectors)."""
    from triton.runtime import driver
    from triton_backend_sdk.bench.kernels import matmul_kernel

    if not _cpu_device() or driver.active.descriptor().vector_width_bits != 512:
        pytest.skip("not an AVX-512 CPU device: the golden register blocks are 16-float vectors on one work-item")

    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(size, size, generator=g), torch.randn(size, size, generator=g)
    c = torch.empty(size, size)
    grid = (triton.cdiv(size, 128) * triton.cdiv(size, 128),)
    k = matmul_kernel[grid](
        a, b, c, size, size, size, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BM=128, BN=128, BK=32, GROUP_M=8, work_items=1,
    )  # fmt: skip
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)
    src = k.asm["cl"]
    assert "float t_acc_32_0[16384] __attribute__((aligned(64)));" in src
    assert "*((const float16 *)(t_acc_32_0 + (m0 + 0u) * 128u + n0 + 0u))" in src
    assert "*((float16 *)(t_acc_32_0 + (m0 + 3u) * 128u + n0 + 48u)) = c15;" in src
    assert "vload16(0, t_" not in src and "vstore16(" not in src
