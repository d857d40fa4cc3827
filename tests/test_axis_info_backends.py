"""AxisInfo in the backends: what the OpenCL C of tutorials 01 and 03 looks like once contiguity, alignment and
masks are proven, and a differential test on every backend (random data, ragged sizes, masks, unaligned views and
offsets where the analysis must not claim alignment) against torch."""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.conformance.cases.tutorials import add_kernel, matmul_kernel


@triton.jit
def shifted_copy(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs + shift, mask=m, other=-1.0)
    tl.store(y_ptr + offs, v * 2.0, mask=m)


@triton.jit
def patterned_mask(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = (offs < n) & (offs % 3 != 0)
    v = tl.load(x_ptr + offs, mask=m, other=5.0)
    tl.store(y_ptr + offs, v + 1.0, mask=offs < n)


@triton.jit
def swapped_pairs(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + (offs ^ 1), mask=m & ((offs ^ 1) < n), other=0.0)
    tl.store(y_ptr + offs, v, mask=m)


@triton.jit
def row_block_sums(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    ptrs = x_ptr + rm[:, None] * stride + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(N, BN)):
        acc += tl.load(ptrs, mask=(rm[:, None] < M) & (rn[None, :] < N - k * BN), other=0.0)
        ptrs += BN
    tl.store(y_ptr + rm[:, None] * BN + rn[None, :], acc, mask=rm[:, None] < M)


@triton.jit
def transposed_copy(x_ptr, y_ptr, M, N, B: tl.constexpr):
    r = tl.arange(0, B)
    m = (r[:, None] < M) & (r[None, :] < N)
    v = tl.load(x_ptr + r[:, None] * N + r[None, :], mask=m, other=0.0)
    tl.store(y_ptr + r[:, None] * N + r[None, :], tl.trans(v), mask=m)


@triton.jit
def per_channel_affine(x_ptr, w_ptr, b_ptr, y_ptr, n, HW: tl.constexpr, C: tl.constexpr, BLOCK: tl.constexpr):
    """Inductor's shape of an eval-mode batch norm: the channel of element i is (i // HW) % C."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    c = (i // HW) % C
    w = tl.load(w_ptr + c, m, eviction_policy="evict_last")
    b = tl.load(b_ptr + c, m, eviction_policy="evict_last")
    tl.store(y_ptr + i, tl.load(x_ptr + i, m) * w + b, m)


@triton.jit
def batch_norm_eval(x_ptr, m_ptr, v_ptr, w_ptr, b_ptr, y_ptr, HW: tl.constexpr, C: tl.constexpr, BLOCK: tl.constexpr):
    """Inductor's unmasked eval batch norm + relu: four per-channel loads, a sqrt and a division of them."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = (i // HW) % C
    mean = tl.load(m_ptr + c, eviction_policy="evict_last")
    var = tl.load(v_ptr + c, eviction_policy="evict_last")
    w = tl.load(w_ptr + c, eviction_policy="evict_last")
    b = tl.load(b_ptr + c, eviction_policy="evict_last")
    y = (tl.load(x_ptr + i) - mean) * (1.0 / tl.sqrt_rn(var + 1e-5)) * w + b
    tl.store(y_ptr + i, tl.maximum(y, 0.0))


@triton.jit
def uniform_pointer_varying_other(w_ptr, y_ptr, flag, BLOCK: tl.constexpr):
    """Pointer and mask the same over the block, `other` not: a masked-off block reads `other` per element."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(w_ptr + offs // BLOCK, mask=(offs * 0 + flag) > 0, other=offs.to(tl.float32))
    tl.store(y_ptr + offs, v)


def _view(n: int, offset: int, g: torch.Generator) -> torch.Tensor:
    """n random floats starting `offset` elements into a fresh buffer (offset 1: not 16-byte aligned)."""
    return torch.randn(n + offset + 64, generator=g)[offset : offset + n]


@pytest.mark.parametrize("n", [4096, 1000, 4099])
@pytest.mark.parametrize("shift", [0, 1, 3, 16])
@pytest.mark.parametrize("offset", [0, 1])
def test_shifted_unaligned_copies(backend, n, shift, offset, rng):
    x = _view(n + shift, offset, rng)
    y = torch.full((n + 64,), 7.0)
    shifted_copy[(triton.cdiv(n, 1024),)](x, y, n, shift, BLOCK=1024)
    torch.testing.assert_close(y[:n], x[shift : shift + n] * 2.0, atol=0, rtol=0)
    assert (y[n:] == 7.0).all()


@pytest.mark.parametrize("n", [2048, 1500])
def test_mask_varying_within_runs(backend, n, rng):
    x = _view(n, 0, rng)
    y = torch.full((n + 32,), 7.0)
    patterned_mask[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
    idx = torch.arange(n)
    want = torch.where(idx % 3 != 0, x, torch.full_like(x, 5.0)) + 1.0
    torch.testing.assert_close(y[:n], want, atol=0, rtol=0)
    assert (y[n:] == 7.0).all()


@pytest.mark.parametrize("n", [1024, 999])
def test_gathered_pairs_keep_their_run_time_checks(backend, n, rng):
    x = _view(n, 1, rng)
    y = torch.full((n,), 7.0)
    swapped_pairs[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
    idx = torch.arange(n) ^ 1
    want = torch.where(idx < n, x[idx.clamp(max=n - 1)], torch.zeros(n))
    torch.testing.assert_close(y, want, atol=0, rtol=0)


@pytest.mark.parametrize("M,N,stride,offset", [(64, 256, 256, 0), (37, 200, 203, 0), (50, 96, 112, 1)])
def test_loop_carried_pointer_rows(backend, M, N, stride, offset, rng):
    BM, BN = 16, 32
    x = _view(M * stride, offset, rng).view(M, stride)
    y = torch.full((triton.cdiv(M, BM) * BM, BN), 7.0)
    row_block_sums[(triton.cdiv(M, BM),)](x, y, M, N, stride, BM=BM, BN=BN)
    padded = torch.zeros(M, triton.cdiv(N, BN) * BN)
    padded[:, :N] = x[:, :N]
    want = padded.view(M, -1, BN).sum(1)
    torch.testing.assert_close(y[:M], want, atol=1e-5, rtol=1e-5)
    assert (y[M:] == 7.0).all()


def test_transposed_value_keeps_its_own_mask(backend, rng):
    """The store's mask holds over its runs, but the value read at (i, j) is the load's element (j, i), whose mask
    bit differs: the load keeps its own test (rows 20.. of x hold a sentinel the kernel must not read)."""
    M, N, B = 20, 32, 32
    x = torch.full((B, N), 99.0)
    x[:M] = torch.randn(M, N, generator=rng)
    y = torch.full((B, N), 7.0)
    transposed_copy[(1,)](x, y, M, N, B=B)
    v = torch.zeros(B, B)
    v[:M, :N] = x[:M]
    want = torch.full((B, N), 7.0)
    want[:M] = v.t()[:M, :N]
    torch.testing.assert_close(y, want, atol=0, rtol=0)


@pytest.mark.parametrize(
    "N,HW,C,BLOCK",
    [(3, 4096, 8, 1024), (5, 64, 6, 256), (2, 48, 3, 32), (4, 48, 5, 256), (3, 24, 7, 128), (7, 1, 16, 512)],
)
def test_per_channel_loads(backend, N, HW, C, BLOCK, rng):
    """Pointers equal over runs (AxisInfo constancy: 1024 when HW = 4096, 16 when HW = 48 divides only by 16) are read
    once per run on cpu_ref; ragged totals mask the last program's tail."""
    n = N * C * HW
    x, w, b = (torch.randn(k, generator=rng) for k in (n, C, C))
    y = torch.full((n + 16,), 7.0)
    per_channel_affine[(triton.cdiv(n, BLOCK),)](x, w, b, y, n, HW=HW, C=C, BLOCK=BLOCK)
    want = x.view(N, C, HW) * w[None, :, None] + b[None, :, None]
    torch.testing.assert_close(y[:n].view(N, C, HW), want, atol=1e-6, rtol=1e-6)
    assert (y[n:] == 7.0).all()


@pytest.mark.parametrize("HW,C,BLOCK", [(4096, 64, 512), (64, 8, 1024), (16, 5, 32)])
def test_unmasked_per_channel_batch_norm(backend, HW, C, BLOCK, rng):
    n = 2 * C * HW
    x = torch.randn(n, generator=rng)
    mean, var, w, b = torch.randn(C, generator=rng), torch.rand(C, generator=rng) + 0.5, torch.randn(C), torch.randn(C)
    y = torch.empty(n)
    batch_norm_eval[(n // BLOCK,)](x, mean, var, w, b, y, HW=HW, C=C, BLOCK=BLOCK)
    want = torch.relu(torch.nn.functional.batch_norm(x.view(2, C, HW), mean, var, w, b, eps=1e-5)).flatten()
    torch.testing.assert_close(y, want, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("flag", [0, 1])
def test_uniform_pointer_with_varying_other(backend, flag):
    w = torch.tensor([42.0])
    y = torch.full((64,), 7.0)
    uniform_pointer_varying_other[(1,)](w, y, flag, BLOCK=64)
    want = torch.full((64,), 42.0) if flag else torch.arange(64, dtype=torch.float32)
    torch.testing.assert_close(y, want, atol=0, rtol=0)


def test_per_channel_loads_are_not_gathers_on_cpu_ref(rng):
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    prev = driver.active
    triton_backend_sdk.use("cpu_ref")
    try:
        n = 2 * 8 * 4096
        x, w, b, y = torch.randn(n, generator=rng), torch.randn(8), torch.randn(8), torch.empty(n)
        k = per_channel_affine[(n // 1024,)](x, w, b, y, n, HW=4096, C=8, BLOCK=1024)
    finally:
        activate(prev)
    llir = k.asm["llir"]
    assert "masked.gather" not in llir


def test_per_channel_arithmetic_runs_once_per_program_on_cpu_ref(rng):
    """Batch norm's `1 / sqrt(var + eps)` of per-channel loads is computed once per program, ahead of the element
    loop: evaluated inside it, the loads could not be hoisted past the loop's stores and LLVM's SLP vectorizer
    packed the scalar chain into the lanes (two <N x float> divisions per vector of elements)."""
    import triton_backend_sdk
    from triton.runtime import driver
    from triton_backend_sdk.driver import activate

    prev = driver.active
    triton_backend_sdk.use("cpu_ref")
    try:
        C, HW = 8, 4096
        n = 2 * C * HW
        x = torch.randn(n, generator=rng)
        mean, var, w, b = (
            torch.randn(C, generator=rng),
            torch.rand(C, generator=rng) + 0.5,
            torch.randn(C),
            torch.randn(C),
        )
        y = torch.empty(n)
        k = batch_norm_eval[(n // 1024,)](x, mean, var, w, b, y, HW=HW, C=C, BLOCK=1024)
    finally:
        activate(prev)
    want = torch.relu(torch.nn.functional.batch_norm(x.view(2, C, HW), mean, var, w, b, eps=1e-5)).flatten()
    torch.testing.assert_close(y, want, atol=1e-5, rtol=1e-5)
    divisions = [line for line in k.asm["llir"].splitlines() if " fdiv " in line or "llvm.sqrt" in line]
    assert divisions and all("x float>" not in line for line in divisions if "declare" not in line), divisions


# ---- the OpenCL C once the facts are proven --------------------------------------------------------------------------


def _vector_add_cl(n: int, offset: int, work_items: int) -> str:
    g = torch.Generator().manual_seed(0)
    x, y = _view(n, offset, g), _view(n, 0, g)
    out = torch.empty(n)
    k = add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, work_items=work_items)
    torch.testing.assert_close(out, x + y, atol=0, rtol=0)
    return k.asm["cl"]


def test_tutorial_01_opencl_c_has_no_run_time_contiguity_checks(ocl):
    """Aligned tensors, n % 16 == 0, 128 work-items (the GPU model): every run of 4 is one float4 access under one
    mask test; nothing about pointers is checked. An unaligned x keeps one proven-consecutive vload4; a ragged n keeps
    the per-element mask checks (the masks are not proven uniform) but still no pointer checks."""
    src = _vector_add_cl(4096, 0, 128)
    assert "& 15UL" not in src and "== p0 + 1" not in src and "vload4" not in src
    assert src.count("*((const __global float4 *)(p") == 2 and src.count("*((__global float4 *)(p") == 1
    assert "m0 && m1" not in src and "if (m0) {" in src
    src = _vector_add_cl(4096, 1, 128)
    assert "& 15UL" not in src and "== p0 + 1" not in src
    assert src.count("vload4(0, p") == 1 and src.count("*((const __global float4 *)(p") == 1
    src = _vector_add_cl(4099, 0, 128)
    assert "& 15UL" not in src and "== p0 + 1" not in src and "m0 && m1 && m2 && m3" in src


def test_tutorial_03_opencl_c_reads_proven_rows_without_checks(ocl):
    """One work-item per program (a CPU device): the loop-carried `a_ptrs` tile is proven consecutive along its rows
    (whole rows of BLOCK_K), so a's per-element row check is gone. b's rows (`offs_bn = (...) % N`) are proven runs
    of 16 too: the shared integer-semantics pass rewrites `% N` into a guarded form (`select(N == 0, -1, x %
    select(N in {0, -1}, 1, N))`) and carries the plain `remsi`'s facts (Triton's, assuming N != 0) onto it."""
    M = N = K = 128
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(M, K, generator=g).half(), torch.randn(K, N, generator=g).half()
    c = torch.empty(M, N, dtype=torch.float16)
    meta = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "ACTIVATION": ""}
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 64),)
    k = matmul_kernel.fn[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        work_items=1,
        **meta,
    )
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), atol=2e-2, rtol=2e-2)
    src = k.asm["cl"]
    assert " &= (" not in src  # no run-time row check left
    # a's proven runs of 32, each read from its first pointer plus the loop's carried scalar offset
    assert re.search(r"= \(t_\w+\[\(q\d* \* 32u\)\] \+ v_\w+\);", src)
    assert re.search(r"= \(t_\w+\[\(q\d* \* 16u\)\] \+ v_\w+\);", src)  # b's runs of 16 (gcd(64, N's divisibility))
    # the pointer tiles are built once before the loop, never walked per k step (CarriedPointerOffsets)
    assert not re.search(r"t_\w+\[r\d+\] = \(t_\w+\[i\d+\] \+", src)


@pytest.mark.parametrize("work_items", [1, 128])
def test_per_channel_arithmetic_runs_once_per_program_on_opencl(ocl, work_items, rng):
    """The same chain on opencl: the per-channel loads, `sqrt` and the division are named scalars computed before
    the element loop (they were a division, a remainder, four loads and a sqrt per element), and no private array
    holds the result for the two selects that read it."""
    C, HW = 8, 4096
    n = 2 * C * HW
    x = torch.randn(n, generator=rng)
    mean, var, w, b = torch.randn(C, generator=rng), torch.rand(C, generator=rng) + 0.5, torch.randn(C), torch.randn(C)
    y = torch.empty(n)
    k = batch_norm_eval[(n // 1024,)](x, mean, var, w, b, y, HW=HW, C=C, BLOCK=1024, work_items=work_items)
    want = torch.relu(torch.nn.functional.batch_norm(x.view(2, C, HW), mean, var, w, b, eps=1e-5)).flatten()
    torch.testing.assert_close(y, want, atol=1e-5, rtol=1e-5)
    src = k.asm["cl"]
    once = [line.strip() for line in src.splitlines() if "sqrt(" in line or " / 4096" in line or " % " in line]
    assert len(once) == 3 and all(line.startswith("const ") for line in once), src


@pytest.mark.parametrize("mnk", [(128, 128, 96), (100, 72, 90)])
def test_tutorial_03_on_128_work_items_loads_rows_as_float4(ocl, mnk):
    """The GPU model (128 work-items): the 2-D operand tiles of tutorial 03 are held in runs of 4 along their rows,
    so an fp32 A (64x32) and B (32x64) are 4 + 4 `float4` loads per work-item and k step where AxisInfo proves the
    runs consecutive and 16-byte aligned (16 + 16 scalar loads before). Ragged sizes test each run's mask at run time
    and must still match torch."""
    M, N, K = mnk
    g = torch.Generator().manual_seed(M + K)
    a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    c = torch.empty(M, N)
    meta = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "ACTIVATION": ""}
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    k = matmul_kernel.fn[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        work_items=128, **meta,
    )  # fmt: skip
    # (the tutorial's kernel rounds its fp32 accumulator to fp16 before the store)
    torch.testing.assert_close(c, (a @ b).half().float(), atol=1e-3, rtol=1e-3)
    src = k.asm["cl"]
    if K % 16 == 0:  # (ragged K: rows are not proven 16-byte aligned, each run's alignment is tested)
        assert src.count("*((const __global float4 *)(p") == 2, src
