"""Row reductions on every backend, and the code that makes them fast.

cpu_ref fills a buffer and computes the last-axis reductions that read it in one loop, and folds a chain only a
reduction reads in vectors (backends/cpu_ref/codegen/fused_fill.py); opencl folds the rows of a one-work-item
program in lane partials and reads broadcast tiles from its own registers (backends/opencl/render/reduce_scan.py,
context.py). Checked against torch on random data with ragged masks (1-D and 2-D tiles, several reductions of one
value, integer and NaN-propagating combines, a value only reduced, a reduction inside a loop body), bit for bit
against the same reduction left unfused on cpu_ref, and in the generated code: cpu_ref's softmax walks each row
three times (load+max, exp+sum, divide+store), a load only reduced is not copied, and opencl's one-work-item layer
norm touches no local memory.
"""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, m, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = (rows < m) & (cols < n)
    x = tl.load(in_ptr + rows * n + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(x)
    tl.store(out_ptr + rows * n + cols, num / tl.sum(num, axis=1)[:, None], mask=mask)


@triton.jit
def row_stats(x_ptr, out_ptr, n, BN: tl.constexpr):
    """max, min, sum and sum of squares of one row; the row also feeds an elementwise use (kept buffer)."""
    cols = tl.arange(0, BN)
    mask = cols < n
    x = tl.load(x_ptr + tl.program_id(0) * n + cols, mask=mask, other=0.0)
    base = out_ptr + tl.program_id(0) * 4
    tl.store(base, tl.max(x, axis=0))
    tl.store(base + 1, tl.min(x, axis=0))
    tl.store(base + 2, tl.sum(x, axis=0))
    sq = x * x + 1.0
    tl.store(base + 3, tl.sum(sq, axis=0) - tl.max(sq, axis=0))


@triton.jit
def int_stats(x_ptr, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=cols < n, other=0)
    o = out_ptr + (tl.program_id(0) * BM + tl.arange(0, BM)) * 4
    tl.store(o, tl.sum(x, axis=1))
    tl.store(o + 1, tl.max(x, axis=1))
    tl.store(o + 2, tl.reduce(x, 1, _xor))
    tl.store(o + 3, tl.reduce(x, 1, _or))


@triton.jit
def _xor(a, b):
    return a ^ b


@triton.jit
def _or(a, b):
    return a | b


@triton.jit
def sum_only(x_ptr, out_ptr, n, BN: tl.constexpr):
    """A loaded row only reduced: read once, never copied."""
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + tl.program_id(0) * n + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def sum_unfused(x_ptr, out_ptr, n, BN: tl.constexpr):
    """The same sum with the reduction in another block (not fused): the reference order."""
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + tl.program_id(0) * n + cols, mask=cols < n, other=0.0)
    if tl.program_id(0) >= 0:
        tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def blocked_mean(x_ptr, out_ptr, n, BN: tl.constexpr):
    """Reductions inside a loop body (tutorial 05's shape): mean and mean of squares over blocks of a row."""
    acc = tl.zeros((BN,), tl.float32)
    total = 0.0
    for start in range(0, n, BN):
        cols = start + tl.arange(0, BN)
        x = tl.load(x_ptr + tl.program_id(0) * n + cols, mask=cols < n, other=0.0)
        total += tl.sum(x, axis=0)
        acc += x * x
    tl.store(out_ptr + tl.program_id(0) * 2, total / n)
    tl.store(out_ptr + tl.program_id(0) * 2 + 1, tl.sum(acc, axis=0) / n)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("m,n,bm", [(37, 100, 4), (8, 128, 8), (5, 1000, 2), (3, 16, 1)])
def test_softmax_rows_match_torch(backend, dtype, m, n, bm):
    torch.manual_seed(m * n)
    x = torch.randn(m, n, dtype=dtype) * 4
    y = torch.empty_like(x)
    softmax_rows[(triton.cdiv(m, bm),)](y, x, m, n, BM=bm, BN=triton.next_power_of_2(n))
    if dtype == torch.float64 and backend.startswith("opencl"):
        from triton_backend_sdk.backends.opencl.runtime import selected_device

        if "cl_khr_fp64" not in selected_device().extensions:
            pytest.skip("the OpenCL device has no fp64")
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=tol, rtol=tol * 10)


@pytest.mark.parametrize("n", [1, 17, 256, 1000])
def test_several_reductions_of_one_row(backend, n):
    torch.manual_seed(n)
    m = 6
    x = torch.randn(m, n) * 3
    out = torch.empty(m, 4)
    row_stats[(m,)](x, out, n, BN=max(16, triton.next_power_of_2(n)))
    sq = x.double() * x.double() + 1
    expect = torch.stack([x.amax(1), x.amin(1), x.double().sum(1).float(), (sq.sum(1) - sq.amax(1)).float()], 1)
    pad = max(16, triton.next_power_of_2(n)) - n  # masked-off lanes are 0: they count in max/min of the padded row
    if pad:
        expect[:, 0] = expect[:, 0].clamp(min=0)
        expect[:, 1] = expect[:, 1].clamp(max=0)
        expect[:, 3] = (sq.sum(1) + pad - torch.maximum(sq.amax(1), torch.ones(m, dtype=torch.float64))).float()
    torch.testing.assert_close(out, expect, atol=1e-4 * n, rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_reductions_exact(backend, dtype):
    torch.manual_seed(7)
    m, n, bm = 12, 200, 4
    x = torch.randint(-(2**30), 2**30, (m, n), dtype=dtype)
    out = torch.empty(m, 4, dtype=dtype)
    int_stats[(m // bm,)](x, out, n, BM=bm, BN=256)
    xor = torch.zeros(m, dtype=dtype)
    orr = torch.zeros(m, dtype=dtype)
    for j in range(n):
        xor ^= x[:, j]
        orr |= x[:, j]
    expect = torch.stack([x.sum(1, dtype=dtype), x.amax(1).clamp(min=0), xor, orr], 1)
    assert torch.equal(out, expect)


@pytest.mark.parametrize("n", [5, 256, 4096, 3000])
def test_fused_sum_is_bitwise_the_separate_reduction(cpu_ref_active, n):
    torch.manual_seed(n)
    m = 9
    x = torch.randn(m, n) * torch.logspace(-6, 6, n)[torch.randperm(n)]
    a, b = torch.empty(m), torch.empty(m)
    bn = max(16, triton.next_power_of_2(n))
    sum_only[(m,)](x, a, n, BN=bn)
    sum_unfused[(m,)](x, b, n, BN=bn)
    assert torch.equal(a, b)
    torch.testing.assert_close(a.double(), x.double().sum(1), atol=1e-6 * x.abs().sum(1).max().item(), rtol=0)


@pytest.mark.parametrize("n,bn", [(1000, 256), (4096, 1024), (77, 64)])
def test_reductions_in_a_loop_body(backend, n, bn):
    torch.manual_seed(n)
    x = torch.randn(5, n)
    out = torch.empty(5, 2)
    blocked_mean[(5,)](x, out, n, BN=bn)
    expect = torch.stack([x.double().mean(1), (x.double() ** 2).mean(1)], 1).float()
    torch.testing.assert_close(out, expect, atol=1e-5, rtol=1e-5)


def _llir(kernel, *args, **kw) -> str:
    return kernel[(1,)](*args, **kw).asm["llir"]


def test_softmax_walks_each_row_three_times(cpu_ref_active):
    x = torch.randn(1, 4096)
    ir = _llir(softmax_rows, torch.empty_like(x), x, 1, 4096, BM=1, BN=4096)
    body = ir[ir.index("define") :]
    assert "vred" not in body, "a reduction walked a buffer of its own"
    assert body.count("alloca [4096 x float]") == 2, "the loaded row and the exponentials, one buffer each"


def test_a_load_only_reduced_is_not_copied(cpu_ref_active):
    x = torch.randn(1, 4096)
    ir = _llir(sum_only, x, torch.empty(1), 4096, BN=4096)
    assert "alloca [4096 x float]" not in ir
    assert "load <16 x float>" in ir or "load <8 x float>" in ir


@triton.jit
def inductor_softmax_rows(out_ptr, in_ptr, XBLOCK: tl.constexpr, R: tl.constexpr):
    """Inductor's persistent softmax: XBLOCK full rows, no mask, `libdevice.exp`-free (tl.exp) here."""
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, R)[None, :]
    x = tl.load(in_ptr + cols + R * rows, eviction_policy="evict_first")
    e = tl.exp(x - tl.max(x, 1)[:, None])
    tl.store(out_ptr + cols + R * rows, e / tl.sum(e, 1)[:, None])


@triton.jit
def inductor_rms_rows(out_ptr, in_ptr, XBLOCK: tl.constexpr, R: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, R)[None, :]
    x = tl.load(in_ptr + cols + R * rows, eviction_policy="evict_first")
    scale = tl.rsqrt(tl.sum(x * x, 1)[:, None] / R + 1e-6)
    tl.store(out_ptr + cols + R * rows, x * scale)


def test_unmasked_rows_are_read_again_not_copied(cpu_ref_active):
    """An unmasked tile read by its row reductions and by one more chain (Inductor's 8-row softmax and RMS norm) is
    not copied to a stack buffer: the reductions fold it as it is loaded and the chain loads it again (analysis
    `uses.rereadable`); only softmax's exponentials, read twice after their sum, keep a buffer. Results against
    torch, with a store after every read so that nothing is left to run after it."""
    x = torch.randn(64, 1024)
    out = torch.empty_like(x)
    k = inductor_softmax_rows[(8,)](out, x, XBLOCK=8, R=1024)
    torch.testing.assert_close(out, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)
    assert k.asm["llir"].count("alloca [8192 x float]") == 1, "the exponentials only"
    k = inductor_rms_rows[(8,)](out, x, XBLOCK=8, R=1024)
    torch.testing.assert_close(out, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6), atol=1e-5, rtol=1e-5)
    assert "alloca [8192 x float]" not in k.asm["llir"]


@triton.jit
def store_between(x_ptr, y_ptr, R: tl.constexpr):
    """A store between a row's load and its last reader: the reader must see the row as loaded, so it is kept."""
    cols = tl.arange(0, R)
    x = tl.load(x_ptr + cols)
    s = tl.sum(x, 0)
    tl.store(x_ptr + cols, x * 0.0 - 1.0)
    tl.store(y_ptr + cols, x + s)


def test_a_row_written_before_its_last_reader_is_kept(backend):
    x = torch.randn(1024)
    want = x + x.sum()
    y = torch.empty(1024)
    store_between[(1,)](x, y, R=1024)
    torch.testing.assert_close(y, want, atol=1e-4, rtol=1e-5)
    assert (x == -1.0).all()


@triton.jit
def _max_nan(a, b):
    """Inductor's NaN-propagating max (triton_helpers.maximum): a select over two compares."""
    return tl.where((a > b) | (a != a), a, b)  # noqa: PLR0124 (the NaN test Inductor writes)


@triton.jit
def nan_max_rows(x_ptr, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=cols < n, other=-float("inf"))
    tl.store(out_ptr + tl.program_id(0) * BM + tl.arange(0, BM), tl.reduce(x, 1, _max_nan))


@pytest.mark.parametrize("n", [64, 2000])
def test_region_combine_propagates_nan_in_vectors(backend, n):
    torch.manual_seed(n)
    m = 8
    x = torch.randn(m, n)
    x[2, n // 3] = float("nan")
    x[5, n - 1] = float("nan")
    out = torch.empty(m)
    k = nan_max_rows[(m // 4,)](x, out, n, BM=4, BN=triton.next_power_of_2(n))
    torch.testing.assert_close(out, x.amax(1), equal_nan=True)
    assert out[2].isnan() and out[5].isnan() and not out[[0, 1, 3, 4, 6, 7]].isnan().any()
    if backend == "cpu_ref":
        rows = f"alloca [{4 * triton.next_power_of_2(n)} x float]"
        assert rows not in k.asm["llir"], "the row was reduced where it was loaded, not copied first"


@triton.jit
def layer_norm_rows(x_ptr, out_ptr, n, BM: tl.constexpr, BN: tl.constexpr):
    """Inductor's persistent layer norm: the centred square is a chain only its sum reads."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = cols < n
    x = tl.load(x_ptr + rows * n + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=1)[:, None] / n
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=1)[:, None] / n
    tl.store(out_ptr + rows * n + cols, xc * tl.rsqrt(var + 1e-5), mask=mask)


@pytest.mark.parametrize("n", [16, 1024, 3008])
def test_reduction_of_a_chain_in_vectors(backend, n):
    torch.manual_seed(n)
    m = 16
    x = torch.randn(m, n) * 2 + 1
    y = torch.empty_like(x)
    k = layer_norm_rows[(m // 8,)](x, y, n, BM=8, BN=triton.next_power_of_2(n))
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (n,)), atol=2e-5, rtol=1e-5)
    if backend == "cpu_ref" and n == 1024:
        walks = re.findall(r"^rows(?:\.\d+)*(?:\.i)?:", k.asm["llir"], re.MULTILINE)
        assert len(walks) == 2, "the row sum and the sum of squares each walk the rows once"


def test_opencl_one_work_item_rows_stay_in_registers(ocl, monkeypatch):
    """Inductor's persistent layer norm on one work-item: both row sums fold in lane partials, and the broadcast
    mean and variance are read from the work-item's own arrays (no local-memory copy, no barrier)."""
    monkeypatch.delenv("TRITON_OPENCL_WORK_ITEMS", raising=False)
    x = torch.randn(16, 1024)
    y = torch.empty_like(x)
    k = layer_norm_rows[(2,)](x, y, 1024, BM=8, BN=1024)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (1024,)), atol=2e-5, rtol=1e-5)
    src = k.asm["cl"]
    assert "reqd_work_group_size(1, 1, 1)" in src
    assert "barrier(" not in src and "tb_smem" not in src
    assert src.count("lane") >= 4


def test_opencl_one_work_item_softmax_walks_each_row_three_times(ocl, monkeypatch):
    """The loaded row is stored while its max is folded, the exponentials while their sum is: the only plain tile
    loop left is the final divide-and-store."""
    monkeypatch.delenv("TRITON_OPENCL_WORK_ITEMS", raising=False)
    x = torch.randn(2, 4096)
    y = torch.empty_like(x)
    k = softmax_rows[(2,)](y, x, 2, 4096, BM=1, BN=4096)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-6, rtol=1e-5)
    src = k.asm["cl"]
    # the final loop: plain, or by runs of non-temporal vectors on a clang x86 device (tests/test_opencl_streaming.py)
    assert src.count("for (uint r") + src.count("__builtin_nontemporal_store") == 1, src
    assert src.count("lane") >= 4
