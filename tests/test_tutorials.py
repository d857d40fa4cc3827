"""Triton's tutorials 01–06 (kernels in sdk/conformance/cases/tutorials.py, in the tutorials' structure), through the normal `kernel[grid]` path on
every SDK backend, compared with torch: vector add, fused softmax, matmul with autotune configs, low-memory dropout,
layer norm forward and backward (atomic_cas spin locks across programs), fused attention forward (fp16, fp32).

Lock safety on cpu_ref: the launcher runs each program to completion on one thread; a program only ever waits on
a lock held by a program that is already running (it took the lock), so it cannot deadlock, however programs are
chunked over threads. (Waiting on a program that has not started — a grid-wide barrier — is not supported, as on a
GPU whose grid exceeds what is resident.)
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from triton_backend_sdk.conformance.cases.tutorials import (
    _attn_fwd,
    _layer_norm_fwd_fused,
    add_kernel,
    matmul_kernel,
    seeded_dropout_kernel,
    softmax_kernel,
)

# ---- 01 vector add -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 98432, 4097])
def test_01_vector_add(backend, n, rng):
    x, y = torch.rand(n, generator=rng), torch.rand(n, generator=rng)
    out = torch.empty_like(x)
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=1024)
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)


# ---- 02 fused softmax ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows,cols", [(1, 1), (37, 781), (130, 1024)])
def test_02_fused_softmax(backend, rows, cols, rng):
    x = torch.randn(rows, cols, generator=rng)
    y = torch.empty_like(x)
    programs = min(rows, 8)  # persistent: fewer programs than rows
    softmax_kernel[(programs, 1, 1)](
        y, x, x.stride(0), y.stride(0), rows, cols, BLOCK_SIZE=triton.next_power_of_2(cols), num_stages=2
    )
    torch.testing.assert_close(y, torch.softmax(x.double(), 1).float(), atol=1e-6, rtol=1e-5)


# ---- 03 matmul with autotune ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("m,n,k,act", [(1, 1, 1, ""), (100, 70, 130, "leaky_relu"), (128, 64, 96, "")])
def test_03_matmul_autotuned(backend, m, n, k, act, rng):
    a = torch.randn(m, k, generator=rng).half()
    b = torch.randn(k, n, generator=rng).half()
    c = torch.empty(m, n, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), ACTIVATION=act
    )
    want = a.double() @ b.double()
    if act:
        want = torch.where(want >= 0, want, 0.01 * want)
    torch.testing.assert_close(c, want.half(), atol=1e-2, rtol=1e-2)
    assert matmul_kernel.best_config is not None


# ---- 04 low-memory dropout -----------------------------------------------------------------------------------------


def test_04_low_memory_dropout(backend, rng):
    import numpy as np
    from triton_backend_sdk.conformance.cases.random import _uniform, philox

    n, p, seed = 5000, 0.4, 123
    x = torch.randn(n, generator=rng) + 3
    out = torch.empty_like(x)
    seeded_dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    offs = np.arange(n, dtype=np.uint32)
    z = np.zeros(n, dtype=np.uint32)
    keep = torch.from_numpy(_uniform(philox(seed, offs, z, z, z)[0]) > p)
    torch.testing.assert_close(out, torch.where(keep, x / (1 - p), 0.0))
    again = torch.empty_like(x)
    seeded_dropout_kernel[(triton.cdiv(n, 1024),)](x, again, n, p, seed, BLOCK_SIZE=1024)
    assert torch.equal(out, again)
    assert 0.5 < keep.float().mean() < 0.7


# ---- 05 layer norm forward and backward ----------------------------------------------------------------------------


@triton.jit
def _layer_norm_bwd_dx_fused(
    DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.0)
    wdy = tl.where(mask, wdy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0)
        db += tl.load(DB + offs, mask=mask, other=0.0)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("m,n", [(1, 3), (151, 300), (64, 1024)])
def test_05_layer_norm_forward_backward(backend, m, n, dtype, rng):
    eps = 1e-5
    x = (torch.randn(m, n, generator=rng) * 2 + 0.5).to(dtype)
    w = (torch.rand(n, generator=rng) + 0.5).to(dtype)
    b = torch.randn(n, generator=rng).to(dtype)
    dy = (0.1 * torch.randn(m, n, generator=rng)).to(dtype)
    y = torch.empty_like(x)
    mean = torch.empty(m)
    rstd = torch.empty(m)
    block = triton.next_power_of_2(n)
    _layer_norm_fwd_fused[(m,)](x, y, w, b, mean, rstd, x.stride(0), n, eps, BLOCK_SIZE=min(block, 256))
    xd, wd, bd = x.double().requires_grad_(), w.double().requires_grad_(), b.double().requires_grad_()
    ref = torch.nn.functional.layer_norm(xd, (n,), wd, bd, eps)
    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 1e-2, "rtol": 1e-2}
    torch.testing.assert_close(y.double(), ref.detach(), **tol)

    group = 64 if n <= 8192 else 96
    group = min(group, max(m, 1))
    locks = torch.zeros(2 * group, dtype=torch.int32)
    dw_part = torch.zeros((group, n), dtype=dtype)
    db_part = torch.zeros((group, n), dtype=dtype)
    dw, db = torch.empty(n, dtype=dtype), torch.empty(n, dtype=dtype)
    dx = torch.empty_like(dy)
    _layer_norm_bwd_dx_fused[(m,)](
        dx, dy, dw_part, db_part, x, w, mean, rstd, locks, x.stride(0), n, GROUP_SIZE_M=group, BLOCK_SIZE_N=block
    )
    _layer_norm_bwd_dwdb[(triton.cdiv(n, 128),)](
        dw_part, db_part, dw, db, min(group, m), n, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128
    )
    ref.backward(dy.double())
    tol = {"atol": 1e-3, "rtol": 1e-3} if dtype == torch.float32 else {"atol": 5e-2, "rtol": 2e-2}
    torch.testing.assert_close(dx.double(), xd.grad, **tol)
    torch.testing.assert_close(db.double(), bd.grad, **tol)
    torch.testing.assert_close(dw.double(), wd.grad, **tol)
    assert (locks[:group] == 0).all()


# ---- 06 fused attention forward ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("z,h,n_ctx,d,causal", [(1, 2, 128, 64, False), (2, 3, 100, 32, True), (1, 1, 1, 16, False)])
def test_06_fused_attention_forward(backend, z, h, n_ctx, d, causal, dtype, rng):
    q, k, v = ((torch.randn(z, h, n_ctx, d, generator=rng) * 0.5).to(dtype) for _ in range(3))
    out = torch.empty_like(q)
    sm_scale = 0.5
    grid = (triton.cdiv(n_ctx, 32), z * h, 1)
    _attn_fwd[grid](
        q,
        k,
        v,
        out,
        sm_scale,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        q.stride(3),
        z,
        h,
        n_ctx,
        HEAD_DIM=d,
        BLOCK_M=32,
        BLOCK_N=32,
        CAUSAL=causal,
    )
    s = (q.double() @ k.double().transpose(-1, -2)) * sm_scale
    if causal:
        s = s.masked_fill(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
    want = torch.softmax(s, -1) @ v.double()
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.float16 else {"atol": 1e-4, "rtol": 1e-4}
    torch.testing.assert_close(out.double(), want, **tol)
